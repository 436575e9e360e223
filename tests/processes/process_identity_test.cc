// Pinning a process (process_identity.h) against real processes and /proc.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atraced/processes/process_identity.h"

using namespace atraced;

TEST_CASE("/proc/<pid>/status gives all four uids and gids and the groups", "[processes][identity]") {
  ProcessFacts facts;
  ParseProcStatus("Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t100\t100\t100\t7\nGroups:\t4 24 27 \n", &facts);
  REQUIRE(facts.creds);
  CHECK(facts.creds->uids == std::array<uint32_t, 4>{1000, 0, 0, 0});
  CHECK(facts.creds->gids == std::array<uint32_t, 4>{100, 100, 100, 7});
  CHECK(facts.groups == std::vector<gid_t>{4, 24, 27});
  ProcessFacts broken;
  ParseProcStatus("Uid:\t1000\t0\nGid:\t1\t1\t1\t1\n", &broken);  // three fields missing
  CHECK_FALSE(broken.creds);
}

TEST_CASE("a pinned live process is inspectable, and once reaped its pidfd says so", "[processes][identity]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(sv[0]);
    for (;;) ::pause();
  }
  ::close(sv[1]);
  ProcProcessTable table;
  // The socket's peer is this process (it made the pair); the child is pinned by pidfd_open.
  UniqueFd self = PeerPidfd(sv[0], ::getpid());
  CHECK(self.valid());
  UniqueFd pidfd = PeerPidfd(-1, child);
  REQUIRE(pidfd.valid());
  auto facts = LookupPinned(table, child, pidfd);
  REQUIRE(facts);
  REQUIRE(facts->creds);
  CHECK(facts->creds->dumpable);
  const ProcessIdentity pinned{child, facts->start_ticks, facts->creds->uids[1], facts->creds->gids[1]};
  CHECK_FALSE(WhyNotInspectable(table, pinned, pidfd));
  // Claimed with another uid: refused, naming the ids it runs with.
  auto wrong = pinned;
  wrong.uid += 1;
  auto why = WhyNotInspectable(table, wrong, pidfd);
  REQUIRE(why);
  CHECK(why->find("a set-id program is never inspected") != std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(PidfdAlive(pidfd));
  why = WhyNotInspectable(table, pinned, pidfd);
  REQUIRE(why);
  CHECK(why->find("has exited") != std::string::npos);
  CHECK_FALSE(LookupPinned(table, child, pidfd));
  ::close(sv[0]);
}
