// atracectl list --follow: each new event directory as it is made, until interrupted.
//
// Not a poll of the disk: inotify tells when a process directory appears under
// <root>/atrace and when an event directory appears in one, and each such wake asks the
// daemon once (LIST) for the entries after the last one printed, so each comes with its
// sequence number, class and sizes, in creation order. A one-second poll timeout only adds
// the watches of process directories inotify could not be told of in time (made and filled
// between two wakes); the LIST after it finds their events anyway.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "atraced/atrace_client.hpp"

namespace atracectl {

// Watches `trace_dir` and calls `print` for every entry whose sequence is above `after`, as
// they come. The daemon drops a connection silent for its idle timeout (60 s by default): a
// LIST that fails so is asked again once on a new connection from `reconnect`. Returns the
// exit code: 1 when the daemon or the watch fails, never otherwise (SIGINT and SIGTERM end
// the process).
int Follow(atrace::Client& client, const std::function<atrace::Client()>& reconnect, const std::string& trace_dir,
           uint64_t after, const std::function<void(const atrace::ListEntry&)>& print);

}  // namespace atracectl
