// When a process's directory name is settled: CANN names trace_{pgid}_{pid}_{time} (and the
// event dirs and reports in it) in the process's own local time, which the daemon learns
// only from the process's first RING_REGISTER (its utc_offset_s). Until a directory of the
// process can exist, the name may still change to that time; after, never.
#pragma once

#include "atraced/store/trace_store.h"
#include "client.h"
#include "client_table.h"
#include "process_records.h"

namespace atraced {

// Settles the name of c's process directory (ProcessRecord::name_settled): in the process's
// local time when c knows its UTC offset (c.utc_offset_s), else as it is, in the daemon's.
// Every connection of the process takes the name, and the offset for the names of its
// events and reports. Call before anything may make a directory of the process (EVENT_BEGIN,
// STACK_DUMP) and after its first ring is registered (the saves come after).
void SettleProcessName(Client& c, ProcessRecords& records, ClientTable& clients, TraceStore& store);

}  // namespace atraced
