// Reading a bundle (`atracectl export --format tar`, bundle.h) for merge and hang: the .tar.gz
// as a stream, gzip(1) -dc into atracectl's own tar parser, one member at a time, never
// extracted, so nothing in a bundle can write anywhere and what is held is one member.
//
// A bundle comes from anywhere and is read as hostile:
//   - a member name that is absolute, holds a ".." component or is not one of ours
//     (bundle.jsonl, atrace/<process dir>/<event dir>/<file>) is refused and skipped, named
//     in `problems`; links, devices and the like are skipped;
//   - a member may hold at most kMaxBundleMember bytes: a larger one (a 1 TiB file, sparse or
//     not) stops the bundle with an error, since skipping it would mean decompressing it;
//     GNU sparse members ('S') are skipped whole (their holes are never expanded);
//   - a truncated or corrupt gzip or tar stream ends the bundle with an error; what was read
//     before it is kept;
//   - bundle.jsonl's lines are checked (bundle_meta.h), its "aged" lines bounded in number; a
//     directory it does not describe is
//     described from its name (the pid, the kind) with no labels, as a client's (BundleDir::client).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "atraced/base/status.h"
#include "files/bundle_meta.h"

namespace atracectl {

inline constexpr uint64_t kMaxBundleMember = 64ull << 20;
inline constexpr size_t kMaxBundleAged = 4096;  // "aged" lines taken from one bundle.jsonl

struct BundleRead {
  atraced::Status status;             // not ok: why the bundle ended early (what was read is kept)
  std::vector<std::string> problems;  // members skipped, and why
  size_t files = 0;                   // trace files handed to `file`
  BundleHost host;
  bool has_host = false;  // bundle.jsonl had a host line
  size_t aged = 0;             // "aged" lines handed to the visitor
  size_t aged_past_bound = 0;  // past kMaxBundleAged: counted, not handed
};

struct BundleVisitor {
  // bundle.jsonl's host line (called before any file of a bundle that has one).
  std::function<void(const BundleHost&)> host;
  // Each directory bundle.jsonl describes (checked), as it is read.
  std::function<void(const BundleDir&)> dir;
  // Each dump bundle.jsonl says the daemon aged before the export (checked), at most
  // kMaxBundleAged of them per bundle (the rest counted in BundleRead::aged_past_bound).
  std::function<void(const BundleAged&)> aged;
  // Stop after bundle.jsonl (the first member of a bundle): its metadata only.
  bool meta_only = false;
  // One file of an event directory: its directory (from bundle.jsonl, or from its name),
  // the file's name within it, and its bytes.
  std::function<void(const BundleDir& dir, const std::string& name, std::string&& bytes)> file;
};

BundleRead ReadBundle(const std::string& path, const BundleVisitor& visitor);

// The tar parser alone, over bytes already decompressed (the fuzzer's entry): `read(buf, n)`
// returns the bytes read (0 at the end, < 0 on error).
BundleRead ReadTarStream(const std::function<long(char*, size_t)>& read, const BundleVisitor& visitor);

// "trace_1_2_T/schedule_event_2_T" -> a BundleDir from the names alone; false when they are
// not an event directory's.
bool DirFromPath(std::string_view rel, BundleDir* out);

}  // namespace atracectl
