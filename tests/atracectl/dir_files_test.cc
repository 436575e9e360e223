// Reading an event directory's files (client/atracectl/files/dir_files.h): errors as Status.
#include <catch2/catch.hpp>

#include <cerrno>
#include <string>

#include "files/dir_files.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace atracectl;
using atraced::testing::TempDir;
using atraced::testing::WriteFile;

TEST_CASE("dir files: a file read whole or in part, each refusal an error with its errno and reason",
          "[atracectl][files]") {
  TempDir tmp;
  WriteFile(tmp / "a.txt", "0123456789");
  std::string out;
  bool cut = false;
  REQUIRE(ReadUpTo(tmp / "a.txt", 100, 4, &out, &cut).ok());
  CHECK(out == "0123");
  CHECK(cut);
  REQUIRE(ReadWhole(tmp / "a.txt", 100, &out).ok());
  CHECK(out == "0123456789");
  const atraced::Status missing = ReadWhole(tmp / "none", 100, &out);
  CHECK(missing.err() == ENOENT);
  CHECK(missing.message() == "No such file or directory");
  const atraced::Status dir = ReadWhole(tmp.path(), 100, &out);
  CHECK(dir.err() == EINVAL);
  CHECK(dir.message() == "not a regular file");
  const atraced::Status big = ReadWhole(tmp / "a.txt", 4, &out);
  CHECK(big.err() == EFBIG);
  CHECK(big.message() == "larger than 0 MiB");
  WriteFile(tmp / ".hidden", "");
  WriteFile(tmp / "b.txt", "");
  int err = -1;
  CHECK(SortedNames(tmp.path(), &err) == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(err == 0);
  CHECK(SortedNames(tmp / "none", &err).empty());
  CHECK(err == ENOENT);
}
