// The one rule for names that become file names under the trace root (object names,
// program names): [A-Za-z0-9_.-]+, and not "." or "..". An allow-list rather than a
// deny-list, so bytes nobody thought of ('/', NUL, control characters, non-ASCII) can never
// leave a directory, name one, or confuse shells, logs and other filesystems.
//
// The protocol decoders apply it to what clients send; the on-disk schema (core/names.h)
// applies it to what it parses back; nobody else spells it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace atraced {

bool IsNameChar(unsigned char c);

// True if `name` follows the rule; otherwise `why` (if given) names the offence, e.g.
// "character 0x2f '/' not allowed".
bool IsSafeName(std::string_view name, std::string* why = nullptr);

// A name made safe from text the kernel reports (a comm may hold any byte): unsafe bytes
// become '_', at most `max_len` bytes, `fallback` if nothing usable is left.
std::string SanitizeName(std::string_view text, size_t max_len, std::string_view fallback);

}  // namespace atraced
