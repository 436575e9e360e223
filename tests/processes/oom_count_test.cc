#include <catch2/catch.hpp>

#include "atraced/processes/oom_count.h"

using namespace atraced;

TEST_CASE("oom count: the counter file a /proc/<pid>/cgroup names", "[oom]") {
  const std::string v2 = "0::/user.slice/app.scope\n";
  CHECK(OomCountFile(v2, "/sys/fs/cgroup", true) == "/sys/fs/cgroup/user.slice/app.scope/memory.events");
  CHECK(OomCountFile("0::/\n", "/sys/fs/cgroup", true) == "/sys/fs/cgroup/memory.events");
  CHECK_FALSE(OomCountFile(v2, "/sys/fs/cgroup", false).has_value());  // v2 is not at the root: no memory there
  const std::string hybrid = "9:name=systemd:/\n4:cpu,memory:/process_api/x:y\n1:cpu:/\n0::/\n";
  CHECK(OomCountFile(hybrid, "/sys/fs/cgroup", false) == "/sys/fs/cgroup/memory/process_api/x:y/memory.oom_control");
  CHECK_FALSE(OomCountFile("4:memoryless:/a\n", "/sys/fs/cgroup", false).has_value());
  CHECK_FALSE(OomCountFile("", "/sys/fs/cgroup", true).has_value());
}

TEST_CASE("oom count: oom_kill from memory.events (v2) and memory.oom_control (v1)", "[oom]") {
  CHECK(ParseOomKill("low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n") == 2u);
  CHECK(ParseOomKill("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n") == 7u);
  CHECK_FALSE(ParseOomKill("oom 1\n").has_value());
}

TEST_CASE("oom count: the report phrase", "[oom]") {
  const OomCount before{"/cg/memory.events", 1, ""};
  CHECK(DescribeOomKill(before, {"/cg/memory.events", 2, ""}) ==
        "killed by the OOM killer (/cg/memory.events oom_kill went from 1 to 2)");
  CHECK(DescribeOomKill(before, {"/cg/memory.events", 1, ""}) == "not by the OOM killer (/cg/memory.events oom_kill stayed at 1)");
  CHECK(DescribeOomKill({"", std::nullopt, "no memory cgroup"}, {"", std::nullopt, "unknown"}) ==
        "cannot tell whether the OOM killer did it (no memory cgroup)");
  CHECK(DescribeOomKill(before, {"/cg/memory.events", std::nullopt, "gone"}) == "cannot tell whether the OOM killer did it (gone)");
  CHECK_FALSE(OomKilled(before, {"/cg/memory.events", 0, ""}));  // a counter that went back (a new cgroup) is no kill
}
