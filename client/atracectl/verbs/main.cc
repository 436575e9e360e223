// atracectl: operators' and scripts' front end to atraced (see docs/CLIENT.md).
#include <exception>
#include <iostream>

#include "common/command_line.h"
#include "verbs/verbs.h"

int main(int argc, char** argv) {
  try {
    return atracectl::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "atracectl: " << e.what() << "\n";
    return atracectl::kExitFailed;
  }
}
