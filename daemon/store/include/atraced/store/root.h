// Where the trace root is. The first source that works wins:
//   1. an explicit root (--root or the config file): an operator's explicit choice, so a
//      failure is an error, never a silent fallback;
//   2. ASCEND_WORK_PATH, CANN's variable: a failure is a warning naming the reason, and the
//      next source is tried (CANN's behaviour, kept because applications rely on it);
//   3. a root from the configuration file: explicit again, so a failure is an error;
//   4. $HOME/ascend (HOME, else the passwd entry of the current uid).
// (Flags, then the environment, then the configuration file, then the default.)
// A relative path is made absolute against the working directory; missing components are
// created with mode 0750; the path must be at most 3716 bytes and writable; the result is
// normalised with realpath(3). Trace data lives under <root>/atrace.
#pragma once

#include <optional>
#include <string>

#include "atraced/common/log.h"
#include "atraced/base/status.h"

namespace atraced {

inline constexpr size_t kMaxRootPathLength = 3716;  // CANN: MAX_FILEDIR_LEN

struct RootSources {
  std::optional<std::string> explicit_root;
  std::optional<std::string> ascend_work_path;  // the environment variable, if set
  std::optional<std::string> configured_root;   // `root` from the configuration file
  std::optional<std::string> home;              // $HOME, if set
};

// Reads ASCEND_WORK_PATH and HOME from the environment.
RootSources RootSourcesFromEnvironment(std::optional<std::string> explicit_root,
                                       std::optional<std::string> configured_root);

struct ResolvedRoot {
  std::string path;    // normalised absolute root
  std::string source;  // "--root", "ASCEND_WORK_PATH", "config" or "HOME"
};

Result<ResolvedRoot> ResolveRoot(const RootSources& sources, Logger& log);

// One candidate: absolute-ise, check length, create with 0750, check writable, realpath.
Result<std::string> PrepareRootDirectory(const std::string& candidate);

}  // namespace atraced
