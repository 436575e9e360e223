#include "atraced/proto/stack_report.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>

namespace atraced::proto {
namespace {

// Each field's share of a frame line (kMaxFrameLine): the four tokens asys reads come first.
constexpr size_t kMaxModule = 512, kMaxSymbol = 256, kMaxSource = 160, kMaxThreadName = 64;
constexpr std::string_view kCut = "...";
constexpr std::string_view kHeld = "held stopped ";
constexpr std::string_view kLeftOut = " more frames not listed";

// `text` cut to at most `limit` bytes, marked, never inside an \xNN escape.
std::string Cut(std::string text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t keep = limit - kCut.size();
  const size_t slash = text.rfind('\\', keep);
  if (slash != std::string::npos && slash + 4 > keep) keep = slash;  // a partial escape goes whole
  text.resize(keep);
  return text + std::string(kCut);
}

// A symbol keeps its "+0x" offset when its name is cut.
std::string CutSymbol(const std::string& symbol) {
  if (symbol.size() <= kMaxSymbol) return symbol;
  const size_t plus = symbol.rfind("+0x");
  const std::string offset = plus != std::string::npos && symbol.size() - plus < 24 ? symbol.substr(plus) : "";
  return Cut(symbol.substr(0, symbol.size() - offset.size()), kMaxSymbol - offset.size()) + offset;
}

// A field read back: at most `limit` bytes of its escaped form, unescaped.
std::string Field(std::string_view escaped, size_t limit) {
  if (escaped.size() > limit) {
    escaped = escaped.substr(0, limit);
    const size_t slash = escaped.rfind('\\');
    if (slash != std::string_view::npos && slash + 4 > escaped.size()) escaped = escaped.substr(0, slash);
  }
  return UnescapeStackText(escaped);
}

std::string_view NextToken(std::string_view* line) {
  const size_t end = line->find(' ');
  const std::string_view token = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end + 1);
  return token;
}

// The whole of `text` as a number; `*out` untouched when it is not one.
template <class T>
bool Number(std::string_view text, T* out, int base = 10) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}

bool Hex(std::string_view token, uint64_t* out) {
  return token.size() > 2 && token.substr(0, 2) == "0x" && Number(token.substr(2), out, 16);
}

std::optional<StackFrameText> ReadFrame(std::string_view line) {
  StackFrameText f;
  const std::string_view number = NextToken(&line), pc = NextToken(&line), base = NextToken(&line),
                         module = NextToken(&line);
  if (number.size() < 2 || number[0] != '#' || !Number(number.substr(1), &f.number) || !Hex(pc, &f.pc) ||
      !Hex(base, &f.base) || module.empty()) {
    return std::nullopt;
  }
  f.module = module == "??" ? "" : Field(module, kMaxModule);
  std::string_view next = NextToken(&line);
  if (!next.empty() && !(next == "at" && !line.empty())) {
    f.symbol = Field(next, kMaxSymbol);
    next = NextToken(&line);
  }
  if (next == "at") f.source = Field(NextToken(&line), kMaxSource);
  return f;
}

bool ReadThreadLine(std::string_view line, ThreadStack* t) {
  constexpr std::string_view kThread = "Thread ";
  if (line.substr(0, kThread.size()) != kThread || line.back() != ')') return false;
  line.remove_prefix(kThread.size());
  const size_t open = line.find(" (");
  const size_t comma = line.find(", ", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || comma == std::string_view::npos || !Number(line.substr(0, open), &t->number) ||
      !Number(line.substr(open + 2, comma - open - 2), &t->tid)) {
    return false;
  }
  t->name = Field(line.substr(comma + 2, line.size() - comma - 3), kMaxThreadName);
  return true;
}

// A thread's note: its held time and its frames left out are fields, the rest text.
void ReadThreadNote(std::string_view note, ThreadStack* t) {
  if (note.substr(0, kHeld.size()) == kHeld) {
    std::string_view rest = note.substr(kHeld.size());
    uint64_t held = 0, asked = 0;
    const std::string_view held_text = NextToken(&rest);
    if (Number(held_text, &held) && NextToken(&rest) == "us;" && NextToken(&rest) == "it" &&
        NextToken(&rest) == "stopped" && Number(NextToken(&rest), &asked)) {
      t->held_us = held;
      t->asked_us = asked;
      return;
    }
  }
  if (const size_t at = note.find(kLeftOut); at != std::string_view::npos && Number(note.substr(0, at), &t->frames_left_out)) {
    return;
  }
  if (t->notes.size() < kMaxThreadNotes) t->notes.push_back(Field(note, kMaxNoteLine));
}

}  // namespace

std::string EscapeStackText(std::string_view text, bool spaces) {
  static const char kHexDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const unsigned char ch : text) {
    if (ch < 0x20 || ch == 0x7f || ch == '\\' || (spaces && ch == ' ')) {
      out += "\\x";
      out += kHexDigits[ch >> 4];
      out += kHexDigits[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

std::string UnescapeStackText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    uint8_t byte = 0;
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x' && Number(text.substr(i + 2, 2), &byte, 16) &&
        text[i + 2] != '+' && text[i + 2] != '-') {
      out += static_cast<char>(byte);
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string ThreadLine(uint32_t number, int64_t tid, std::string_view name) {
  return "Thread " + std::to_string(number) + " (" + std::to_string(tid) + ", " +
         Cut(EscapeStackText(name, false), kMaxThreadName) + ")\n";
}

std::string FrameLine(const StackFrameText& f) {
  char head[64];
  std::snprintf(head, sizeof head, "#%u 0x%016" PRIx64 " 0x%016" PRIx64 " ", f.number, f.pc, f.base);
  std::string line = head + (f.module.empty() ? std::string("??") : Cut(EscapeStackText(f.module, true), kMaxModule));
  if (!f.symbol.empty()) line += " " + CutSymbol(EscapeStackText(f.symbol, true));
  if (!f.source.empty()) line += " at " + Cut(EscapeStackText(f.source, true), kMaxSource);
  return line + "\n";
}

std::string NoteLine(std::string_view text) {
  return "(" + Cut(EscapeStackText(text, false), kMaxNoteLine - 3) + ")\n";
}

std::string HeldNote(uint64_t held_us, uint64_t asked_us) {
  return std::string(kHeld) + std::to_string(held_us) + " us; it stopped " + std::to_string(asked_us) +
         " us after it was asked to";
}

std::string ThreadBlock(const ThreadStack& t) {
  std::string notes;
  for (size_t i = 0; i < t.notes.size() && i < kMaxThreadNotes; ++i) notes += NoteLine(t.notes[i]);
  if (t.held_us) notes += NoteLine(HeldNote(*t.held_us, t.asked_us));
  std::string block = ThreadLine(t.number, t.tid, t.name);
  // The frames fill what the notes, the note counting those left out and the blank line leave.
  const size_t room = kMaxThreadBlock - notes.size() - kMaxNoteLine - 1;
  size_t written = 0;
  for (const StackFrameText& f : t.frames) {
    if (written >= kMaxStackFrames) break;
    const std::string line = FrameLine(f);
    if (block.size() + line.size() > room) break;
    block += line;
    ++written;
  }
  if (const size_t left = t.frames.size() - written + t.frames_left_out; left > 0) {
    block += NoteLine(std::to_string(left) + std::string(kLeftOut) + ": a thread's part of the report is at most " +
                      std::to_string(kMaxStackFrames) + " frames and " + std::to_string(kMaxThreadBlock) + " bytes");
  }
  return block + notes + "\n";
}

std::string FormatStackCounts(const StackCounts& c) {
  return "threads " + std::to_string(c.threads) + "\nread " + std::to_string(c.read) + "\nmax-stop-us " +
         std::to_string(c.max_stop_us) + "\n";
}

std::string_view StackSectionOf(std::string_view report) {
  size_t at = report.substr(0, 8) == "[stack]\n" ? 0 : report.find("\n[stack]\n");
  if (at == std::string_view::npos) return {};
  at += report[at] == '\n' ? 9 : 8;
  std::string_view rest = report.substr(at);
  if (rest.substr(0, 1) == "[") return {};
  const size_t next = rest.find("\n[");
  return rest.substr(0, next == std::string_view::npos ? rest.size() : next + 1);
}

StackSection ReadStackSection(std::string_view section) {
  StackSection out;
  ThreadStack* open = nullptr;  // the thread whose block the lines are in
  while (!section.empty()) {
    const size_t end = section.find('\n');
    const std::string_view line = section.substr(0, end);
    section.remove_prefix(end == std::string_view::npos ? section.size() : end + 1);
    if (line.empty()) {
      open = nullptr;
      continue;
    }
    ThreadStack thread;
    if (ReadThreadLine(line, &thread)) {
      if (out.threads.size() >= kMaxStackThreads) {
        ++out.threads_left_out;
        open = nullptr;
      } else {
        out.threads.push_back(std::move(thread));
        open = &out.threads.back();
      }
      continue;
    }
    if (line.front() == '#') {
      if (open == nullptr) continue;  // a frame outside a block: a thread left out, or noise
      if (auto frame = ReadFrame(line)) {
        if (open->frames.size() < kMaxStackFrames) {
          open->frames.push_back(std::move(*frame));
        } else {
          ++open->frames_left_out;
        }
      }
      continue;
    }
    if (line.size() >= 2 && line.front() == '(' && line.back() == ')') {
      const std::string_view note = line.substr(1, line.size() - 2);
      if (open != nullptr) {
        ReadThreadNote(note, open);
      } else if (out.notes.size() < kMaxSectionNotes) {
        out.notes.push_back(Field(note, kMaxNoteLine));
      }
    }
  }
  return out;
}

std::optional<StackCounts> ParseStackCounts(std::string_view text) {
  StackCounts c;
  for (auto [key, field] : {std::pair<std::string_view, uint32_t*>{"threads ", &c.threads},
                            {"read ", &c.read},
                            {"max-stop-us ", &c.max_stop_us}}) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos || text.substr(0, key.size()) != key ||
        !Number(text.substr(key.size(), end - key.size()), field)) {
      return std::nullopt;
    }
    text.remove_prefix(end + 1);
  }
  return text.empty() ? std::optional<StackCounts>(c) : std::nullopt;
}

}  // namespace atraced::proto
