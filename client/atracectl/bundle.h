// atracectl export --format tar: a bug-report bundle (.tar.gz) of the selected event
// directories, with what whoever reads it needs to know of the host and the daemon:
//   status.json      atracectl status --json at export time (limits, counts, counters)
//   version.txt      atracectl's version and protocol, and the daemon's socket
//   atraced.conf     the daemon's configuration file, where this user may read it
//   uname.txt        uname(2): system, release, version, machine
//   os-release       /etc/os-release
//   atrace/...       the event directories, as they are under <root>/atrace
// Made by tar(1) (GNU tar, in every Debian), from a scratch directory for the host files.
#pragma once

#include <string>
#include <vector>

#include "cli.h"

namespace atracectl {

// Writes the bundle to `output` (a new file). Returns an exit code, after saying why on stderr.
int WriteBundle(const Globals& g, const std::string& trace_dir, const std::vector<std::string>& rel_dirs,
                const std::string& output);

}  // namespace atracectl
