// "Did you mean": the one close name, or none.
#include <catch2/catch.hpp>

#include "atraced/base/nearest_name.h"

namespace atraced {
namespace {

const std::vector<std::string> kCommands{"emit", "status", "list", "du", "vacuum", "show", "info", "export"};

TEST_CASE("a mistyped name gets the one name it is close to", "[nearest_name]") {
  CHECK(NearestName("stauts", kCommands) == "status");    // two letters swapped: two edits
  CHECK(NearestName("lst", kCommands) == "list");         // one letter left out
  CHECK(NearestName("exprot", kCommands) == "export");
  CHECK(NearestName("stat", kCommands) == "status");      // the start of one name
  CHECK(NearestName("recrd-num", {"record-num", "exit-record-num", "root"}) == "record-num");
  CHECK(DidYouMean("vacum", kCommands) == "; did you mean 'vacuum'?");
}

TEST_CASE("no guess when nothing is close or two names are equally close", "[nearest_name]") {
  CHECK(NearestName("frobnicate", kCommands).empty());
  CHECK(NearestName("xy", kCommands).empty());            // "du" is two edits away: too far for a short name
  CHECK(NearestName("", kCommands).empty());
  CHECK(NearestName("sho", {"show", "shot"}).empty());     // a prefix of both
  CHECK(NearestName("status", kCommands).empty());         // not a mistake
  CHECK(NearestName(std::string(100, 's'), kCommands).empty());
  CHECK(DidYouMean("frobnicate", kCommands).empty());
}

}  // namespace
}  // namespace atraced
