#include "atraced/store/root.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace atraced {
namespace {

Status MakeDirs(const std::string& path) {
  // Walk the components left to right; existing ones are left as they are (CANN does the
  // same), missing ones are created 0750 whatever the umask.
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0750) == 0) {
      if (::chmod(prefix.c_str(), 0750) != 0) {
        int err = errno;  // before the message allocates
        return Status::Error(err, ErrnoMessage("chmod " + prefix, err));
      }
      continue;
    }
    if (errno != EEXIST) {
      int err = errno;  // before the message allocates
      return Status::Error(err, ErrnoMessage("mkdir " + prefix, err));
    }
    struct stat st {};
    if (::stat(prefix.c_str(), &st) != 0) {
      int err = errno;  // before the message allocates
      return Status::Error(err, ErrnoMessage("stat " + prefix, err));
    }
    if (!S_ISDIR(st.st_mode)) return Status::Error(ENOTDIR, prefix + " exists and is not a directory");
  }
  return Status::Ok();
}

// What to do about a root this user may not write: nothing for other errors, whose own
// text says it (a path through a regular file, a name too long).
std::string RootRemedy(int err) {
  if (err == EROFS) return ": the file system is read-only; choose another root (--root, or root = in atraced.conf)";
  if (err != EACCES && err != EPERM) return "";
  return ": give this user write access to it (chown or chmod), run atraced as its owner, or choose another root "
         "(--root, or root = in atraced.conf)";
}

}  // namespace

RootSources RootSourcesFromEnvironment(std::optional<std::string> explicit_root,
                                       std::optional<std::string> configured_root) {
  RootSources s;
  s.explicit_root = std::move(explicit_root);
  s.configured_root = std::move(configured_root);
  if (const char* v = std::getenv("ASCEND_WORK_PATH")) s.ascend_work_path = v;
  if (const char* v = std::getenv("HOME")) s.home = v;
  return s;
}

Result<std::string> PrepareRootDirectory(const std::string& candidate) {
  if (candidate.empty()) return Status::Error(EINVAL, "path is empty");
  std::string path = candidate;
  if (path[0] != '/') {
    std::vector<char> cwd(PATH_MAX);
    if (::getcwd(cwd.data(), cwd.size()) == nullptr) {
      return Status::Error(errno, ErrnoMessage("cannot make relative path absolute: getcwd", errno));
    }
    path = std::string(cwd.data()) + "/" + path;
  }
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.size() > kMaxRootPathLength) {
    return Status::Error(ENAMETOOLONG, "path is " + std::to_string(path.size()) +
                                           " bytes, longer than the limit of " +
                                           std::to_string(kMaxRootPathLength));
  }
  if (Status st = MakeDirs(path); !st.ok()) return Status::Error(st.err(), st.message() + RootRemedy(st.err()));
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;  // before the message allocates
    return Status::Error(err, ErrnoMessage("not writable by uid " + std::to_string(::getuid()), err) + RootRemedy(err));
  }
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    return Status::Error(errno, ErrnoMessage("realpath", errno));
  }
  return std::string(resolved);
}

Result<ResolvedRoot> ResolveRoot(const RootSources& sources, Logger& log) {
  if (sources.explicit_root) {
    auto r = PrepareRootDirectory(*sources.explicit_root);
    if (!r.ok()) {
      return Status::Error(r.status().err(), "trace root [" + *sources.explicit_root +
                                                 "] is unusable: " + r.status().message());
    }
    return ResolvedRoot{*r, "--root"};
  }
  if (sources.ascend_work_path) {
    auto r = PrepareRootDirectory(*sources.ascend_work_path);
    if (r.ok()) return ResolvedRoot{*r, "ASCEND_WORK_PATH"};
    log.Warning("ASCEND_WORK_PATH [", *sources.ascend_work_path, "] is unusable (",
                r.status().message(), "), trying the next choice.");
  }
  if (sources.configured_root) {
    auto r = PrepareRootDirectory(*sources.configured_root);
    if (!r.ok()) {
      return Status::Error(r.status().err(), "trace root [" + *sources.configured_root +
                                                 "] from the configuration file is unusable: " +
                                                 r.status().message());
    }
    return ResolvedRoot{*r, "config"};
  }
  std::string home;
  if (sources.home && !sources.home->empty()) {
    home = *sources.home;
  } else if (const struct passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir) {
    home = pw->pw_dir;
  } else {
    return Status::Error(ENOENT, "no usable trace root: HOME is unset and uid " +
                                     std::to_string(::getuid()) + " has no passwd entry");
  }
  auto r = PrepareRootDirectory(home + "/ascend");
  if (!r.ok()) {
    return Status::Error(r.status().err(),
                         "trace root [" + home + "/ascend] is unusable: " + r.status().message());
  }
  return ResolvedRoot{*r, "HOME"};
}

}  // namespace atraced
