// Errors as values: a Result is a value or an error, never an empty success.
#include <catch2/catch.hpp>

#include "atraced/base/status.h"

using namespace atraced;

TEST_CASE("a Result made from an OK status is an error, not a success without a value", "[status]") {
  Result<int> r = Status::Ok();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().err() == EIO);
  CHECK(r.status().message().find("OK status") != std::string::npos);
}

TEST_CASE("a Result carries its value or its error", "[status]") {
  Result<int> v = 7;
  REQUIRE(v.ok());
  CHECK(*v == 7);
  Result<int> e = Status::Error(ENOSPC, "disk full");
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().err() == ENOSPC);
  CHECK(e.status().message() == "disk full");
  CHECK(Status::Error(0, "no errno").err() == EIO);  // an error always has an errno
}

TEST_CASE("an error keeps its errno through LoggedAs and Prefixed, and is logged as a notice unless told", "[status]") {
  Status e = Status::Error(EBUSY, "rings: the limit");
  CHECK(e.log_as() == Status::LogAs::kNotice);
  Status warned = Status(e).LoggedAs(Status::LogAs::kWarning).Prefixed("ring a: ");
  CHECK(warned.err() == EBUSY);
  CHECK(warned.message() == "ring a: rings: the limit");
  CHECK(warned.log_as() == Status::LogAs::kWarning);
  CHECK(Status::Ok().ok());
}
