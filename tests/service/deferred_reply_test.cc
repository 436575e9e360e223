// A DeferredReply is answered exactly once: the answer reaches its request, a moved one
// answers from where it went, and the two bugs (a second answer, one dropped unanswered)
// are caught: debug builds stop, release builds keep the first answer and tell the client
// of a dropped one (-EIO), so it never waits for ever.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "atraced/service/deferred_reply.h"
#include "support/subprocess.h"

using namespace atraced;
using atraced::testing::InChild;

namespace {

// Records what reaches it, as the client would see it.
class RecordingRoute final : public ReplyRoute {
 public:
  struct Answer {
    ReplyAddress to;
    int err;
    std::string message;
    std::vector<uint8_t> body;
  };
  void Deliver(const ReplyAddress& to, const Status& reply, std::span<const uint8_t> ok_body) override {
    answers.push_back({to, reply.ok() ? 0 : reply.err(), reply.ok() ? "" : reply.message(),
                       {ok_body.begin(), ok_body.end()}});
  }
  std::vector<Answer> answers;
};

const ReplyAddress kTo{7, 12, 99, 1};

// Whether this build checks the rule with assert (debug) or keeps going (release).
constexpr bool kStopsOnBugs =
#ifdef NDEBUG
    false;
#else
    true;
#endif

}  // namespace

TEST_CASE("an answered DeferredReply reaches its request once, with its body", "[service][deferred]") {
  auto route = std::make_shared<RecordingRoute>();
  {
    DeferredReply reply(route, kTo);
    CHECK(reply.pending());
    CHECK(reply.client() == 7);
    const std::vector<uint8_t> body{1, 2, 3};
    reply.Answer(Status::Ok(), body);
    CHECK_FALSE(reply.pending());
  }  // destroyed answered: nothing more
  REQUIRE(route->answers.size() == 1);
  CHECK(route->answers[0].to.client == 7);
  CHECK(route->answers[0].to.opcode == 12);
  CHECK(route->answers[0].to.request_id == 99);
  CHECK(route->answers[0].err == 0);
  CHECK(route->answers[0].body == std::vector<uint8_t>{1, 2, 3});
}

TEST_CASE("a moved DeferredReply is answered by whoever holds it last", "[service][deferred]") {
  auto route = std::make_shared<RecordingRoute>();
  DeferredReply first(route, kTo);
  DeferredReply second(std::move(first));
  CHECK_FALSE(first.pending());  // NOLINT(bugprone-use-after-move): what a move leaves is the point
  DeferredReply third;
  third = std::move(second);
  CHECK_FALSE(second.pending());  // NOLINT(bugprone-use-after-move)
  third.Answer(Status::Error(EBUSY, "busy"));
  REQUIRE(route->answers.size() == 1);
  CHECK(route->answers[0].err == EBUSY);
  CHECK(route->answers[0].message == "busy");
}

TEST_CASE("a DeferredReply dropped unanswered is caught, and its client is told", "[service][deferred]") {
  if (kStopsOnBugs) {
    const int how = InChild([] {
      auto route = std::make_shared<RecordingRoute>();
      { DeferredReply lost(route, kTo); }
      return 0;
    });
    CHECK(how == 128 + SIGABRT);
  } else {
    auto route = std::make_shared<RecordingRoute>();
    { DeferredReply lost(route, kTo); }
    REQUIRE(route->answers.size() == 1);
    CHECK(route->answers[0].err == EIO);
    CHECK(route->answers[0].message.find("internal") == 0);
  }
}

TEST_CASE("a DeferredReply answered twice is caught, and the first answer stands", "[service][deferred]") {
  if (kStopsOnBugs) {
    const int how = InChild([] {
      auto route = std::make_shared<RecordingRoute>();
      DeferredReply reply(route, kTo);
      reply.Answer(Status::Ok());
      reply.Answer(Status::Error(EIO, "again"));
      return 0;
    });
    CHECK(how == 128 + SIGABRT);
  } else {
    auto route = std::make_shared<RecordingRoute>();
    DeferredReply reply(route, kTo);
    reply.Answer(Status::Ok());
    reply.Answer(Status::Error(EIO, "again"));
    REQUIRE(route->answers.size() == 1);
    CHECK(route->answers[0].err == 0);
  }
}

TEST_CASE("a DeferredReply overwritten while it still owes its answer is caught", "[service][deferred]") {
  auto route = std::make_shared<RecordingRoute>();
  if (kStopsOnBugs) {
    const int how = InChild([route] {
      DeferredReply owed(route, kTo);
      owed = DeferredReply(route, ReplyAddress{8, 12, 100, 2});
      owed.Answer(Status::Ok());
      return 0;
    });
    CHECK(how == 128 + SIGABRT);
  } else {
    DeferredReply owed(route, kTo);
    owed = DeferredReply(route, ReplyAddress{8, 12, 100, 2});
    owed.Answer(Status::Ok());
    REQUIRE(route->answers.size() == 2);
    CHECK(route->answers[0].to.client == 7);
    CHECK(route->answers[0].err == EIO);
    CHECK(route->answers[1].to.client == 8);
  }
}

TEST_CASE("once the service stops, a DeferredReply answers nothing and may be dropped", "[service][deferred]") {
  auto route = std::make_shared<RecordingRoute>();
  DeferredReply answered_late(route, kTo);
  {
    DeferredReply dropped(route, kTo);
    route->Stop();
  }  // no bug: its connection went with the service
  answered_late.Answer(Status::Ok());
  CHECK(route->answers.empty());
  CHECK_FALSE(answered_late.pending());
}
