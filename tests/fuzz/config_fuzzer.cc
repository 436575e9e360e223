// libFuzzer target: the configuration-file parser. Any text must give either a config or an
// error message naming the problem — never an exception escaping, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "atraced/app/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  atraced::Config config;
  std::string error = atraced::ParseConfigText(text, "fuzz.conf", &config);
  if (!error.empty() && error.rfind("fuzz.conf: ", 0) != 0) std::abort();  // errors name the origin
  if (error.empty() && config.record_num) std::abort();  // a file never sets the flag value
  return 0;
}
