// atracectl's progress line (export, merge): shown on a terminal once a command has run for a
// second, redrawn at most ten times a second, erased at the end; never into a pipe or a file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/progress.h"

namespace {

using namespace std::chrono_literals;
using Time = std::chrono::steady_clock::time_point;

// What the progress line wrote, read back from a memory stream.
struct Screen {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* f = ::open_memstream(&data, &size);
  ~Screen() {
    std::fclose(f);
    std::free(data);
  }
  std::string text() {
    std::fflush(f);
    return std::string(data, size);
  }
};

TEST_CASE("progress: a command on a terminal shows how many files it read once it runs over a second",
          "[atracectl][progress]") {
  Screen screen;
  Time now{};
  atracectl::Progress p("export", screen.f, true, [&] { return now; });
  now += 500ms;
  p.Files(1, 10);
  CHECK(screen.text().empty());  // a quick command prints nothing
  now += 600ms;
  p.Files(3, 10);
  CHECK(screen.text() == "\ratracectl: export: read 3 of 10 files (30%)\x1b[K");
  now += 50ms;
  p.Files(4, 10);  // within 100 ms of the last draw: not redrawn
  CHECK(screen.text().find("read 4 of") == std::string::npos);
  now += 100ms;
  p.Files(10, 10);
  CHECK(screen.text().find("\ratracectl: export: read 10 of 10 files (100%)\x1b[K") != std::string::npos);
  const size_t before = screen.text().size();
  p.Done();  // the line is erased, once
  CHECK(screen.text().substr(before) == "\r\x1b[K");
  p.Done();
  CHECK(screen.text().size() == before + 4);  // "\r\x1b[K" once
}

TEST_CASE("progress: into a pipe or a file nothing is written, however long the command runs", "[atracectl][progress]") {
  Screen screen;
  Time now{};
  {
    atracectl::Progress p("export", screen.f, false, [&] { return now; });
    now += 1h;
    p.Files(5, 10);
  }
  CHECK(screen.text().empty());
}

TEST_CASE("progress: a line shown is erased when the command ends, even without Done", "[atracectl][progress]") {
  Screen screen;
  Time now{};
  {
    atracectl::Progress p("merge", screen.f, true, [&] { return now; });
    now += 2s;
    p.Files(0, 0);  // nothing to read: 100%
  }
  CHECK(screen.text() == "\ratracectl: merge: read 0 of 0 files (100%)\x1b[K\r\x1b[K");
}

}  // namespace
