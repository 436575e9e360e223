// The one bound on what a viewing command (show, export) holds of trace files: the sum over
// every file it reads of the text it shows or keeps, not a bound per file. A .bin of 70 KB
// can decode to 62 MiB of text, so a bound per file let a dozen small files cost a GiB.
// Reaching it stops the command at a whole line, with a message that says which bound, how
// much was shown and how to narrow (Message).
#pragma once

#include <boost/program_options.hpp>
#include <algorithm>
#include <cstddef>
#include <string>

namespace atracectl {

inline constexpr size_t kDefaultMaxTextMib = 256;

struct TextBudget {
  size_t total = kDefaultMaxTextMib << 20;
  size_t used = 0;
  bool reached = false;
  size_t files_read = 0;  // files whose text counted, whole or in part

  size_t left() const { return used >= total ? 0 : total - used; }
  // Takes `bytes`; false (and reached) when they do not fit.
  bool Take(size_t bytes) {
    if (bytes > left()) return (reached = true, false);
    used += bytes;
    return true;
  }
  // Gives back what was taken for something no longer held (hang's stacks of a report that a
  // later one replaced).
  void Give(size_t bytes) { used -= std::min(bytes, used); }
  // "stopped at the text bound (--max-text-mib N): ... <how_to_narrow>".
  std::string Message(size_t files_total, const std::string& how_to_narrow) const;
};

// --max-text-mib, for the commands that read trace files.
void AddTextBudgetOption(boost::program_options::options_description& options, size_t default_mib = kDefaultMaxTextMib);
// The budget --max-text-mib asks for; false (and a usage message) when it is 0.
bool ReadTextBudget(const boost::program_options::variables_map& vm, TextBudget* budget, int* exit_code);

}  // namespace atracectl
