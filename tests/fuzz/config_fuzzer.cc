// libFuzzer target: the configuration-file parser. Any text must give either a config or an
// error message naming the line and the problem — never an exception escaping, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "atraced/app/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  atraced::Config config;
  std::string error = atraced::ParseConfigText(text, "fuzz.conf", &config);
  // Errors name the origin and the line: "fuzz.conf:N: ...".
  if (!error.empty()) {
    const std::string origin = "fuzz.conf:";
    if (error.rfind(origin, 0) != 0) std::abort();
    size_t i = origin.size();
    while (i < error.size() && error[i] >= '0' && error[i] <= '9') ++i;
    if (i == origin.size() || error.compare(i, 2, ": ") != 0) std::abort();
  }
  if (error.empty() && config.record_num) std::abort();  // a file never sets the flag value
  return 0;
}
