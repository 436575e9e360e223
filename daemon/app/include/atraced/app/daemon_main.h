// The daemon's whole life: parse, resolve the root, recover the store, listen, serve,
// shut down. main() only calls this, so tests and other binaries can link all of it.
#pragma once

namespace atraced {

// Returns the process exit code: 0 after a clean shutdown, 1 on a start-up failure,
// 2 on a usage or configuration error.
int DaemonMain(int argc, const char* const* argv);

}  // namespace atraced
