// "Did you mean": the known name closest to one a user mistyped (an atracectl command, a
// configuration key, a flag).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace atraced {

// The one name in `known` within a small edit distance of `typed` (one edit for names up to
// four characters, two beyond), or that `typed` is the start of; "" when none is, or when two
// are equally close (a guess between two is no help).
std::string NearestName(std::string_view typed, const std::vector<std::string>& known);

// "; did you mean 'NAME'?" for NearestName's answer, or "".
std::string DidYouMean(std::string_view typed, const std::vector<std::string>& known);

}  // namespace atraced
