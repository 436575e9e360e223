// hang --journal --exec CMD: the operator's fan-out run once per job, to dump and export every
// host of the job (docs/FLEET.md has CMD for pdsh, ClusterShell, srun and kubectl exec).
//
// CMD is the operator's own shell command, run with /bin/sh -c because the operator wrote it
// for a shell. What comes from the journal never becomes shell text: in CMD, %j becomes "$1"
// and %h "$2" (%% a '%'), and the job and the hosts file's path are passed as sh's positional
// parameters, so the shell expands each as one word and never parses it. The hosts file holds
// one host a line, only names of [A-Za-z0-9._-] (at most 253 bytes); it is in a fresh 0700
// directory and removed when CMD ends.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace atracectl::journal {

// CMD with %j -> "$1", %h -> "$2", %% -> %; any other %x is kept as it is.
std::string SubstituteCommand(std::string_view cmd);

// Writes the hosts file, runs `/bin/sh -c SubstituteCommand(cmd) atracectl-hang JOB HOSTS_FILE`
// and waits for it. Returns its exit status (128 + a signal), or -1 with `error` set when it
// could not be run.
int RunJobCommand(const std::string& cmd, const std::string& job, const std::vector<std::string>& hosts,
                  std::string* error);

}  // namespace atracectl::journal
