// The one way atracectl shows bytes it did not write itself: record text, decoded .bin names,
// report lines, decoder errors. Trace files hold what any user wrote, so every such byte goes
// through exactly one of these functions, chosen by where the output goes:
//
//   terminal  C0 controls, DEL, C1 controls (U+0080..U+009F, and stray bytes 0x80..0x9F),
//             invalid UTF-8 and '\' become visible "\xNN" / "\\": no escape sequence (OSC 52,
//             clear-screen, a window title, a carriage return over a fake prompt) reaches
//             the operator's terminal. Unicode's invisible format controls (the bidi
//             overrides, embeddings, isolates and marks such as U+202E, zero-width characters,
//             U+2028/U+2029, the BOM, tag characters) become "\uXXXX" ("\UXXXXXXXX" past
//             U+FFFF): none can reorder or hide what the operator reads. Newline and tab are
//             kept only where the caller says the text is multi-line (a file's lines); one
//             value (a name, a fact) keeps none;
//   JSON      as RFC 8259 requires, plus: C1 controls and the same format controls as \uXXXX, and
//             invalid UTF-8 as U+FFFD, so the document is valid UTF-8 and inert in a terminal;
//   HTML      JSON text made inert inside <script type="application/json">: '<', '>', '&',
//             U+2028 and U+2029 as \uXXXX (the HTML tokenizer acts on '<' only; the others
//             keep the data safe wherever the JSON is pasted), so "</script>" and "<!--<script>"
//             cannot end or swallow the data block or the drawing script after it.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace atracectl {

enum class TerminalLines { kKeep, kEscape };

// `bytes` as a terminal may show them (see above), appended to `out`.
void AppendForTerminal(std::string_view bytes, TerminalLines lines, std::string* out);

// One value on one line: newline and tab escaped too.
std::string TerminalLine(std::string_view bytes);

// A file's text, written in bounded pieces (the escaped form of a 64 MiB text is never held
// whole); newlines and tabs kept.
void WriteTerminalText(std::ostream& os, std::string_view text);

// A JSON string literal, quotes included.
std::string JsonString(std::string_view s);
// The same, written in bounded pieces.
void WriteJsonString(std::ostream& os, std::string_view s);

// JSON text (as JsonString writes its strings) made safe as the content of a <script> block.
void AppendForScriptData(std::string_view json, std::string* out);

}  // namespace atracectl
