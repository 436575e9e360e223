// The baseline: what CANN's in-process recorder does today, with direct system calls in the
// application's own process. For each event it
//   - formats the 20-digit local time (gettimeofday + localtime_r + snprintf),
//   - mkdir()s <root>/atrace/trace_{pgid}_{pid}_{time0}/schedule_event_{pid}_{time} (0750),
//   - open()s schedule_tracer_{object}.txt with O_CREAT|O_WRONLY|O_APPEND (0640), writes, closes,
//   - and, when its own list of event directories exceeds the record number, removes the
//     oldest recursively (opendir/readdir/unlink/rmdir by path).
// The list lives in memory (CANN keeps its own per process), so the baseline is the cheapest
// honest version of that recorder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace atraced_bench {

class CannWriter {
 public:
  // `root` is the trace root (the writer uses <root>/atrace). Creates the process directory.
  CannWriter(std::string root, size_t record_num, std::string object = "hccl");

  // One event with one file holding `len` bytes. Returns 0 or -errno.
  int Emit(const void* data, size_t len);
  // Just the first step, for latency: formats the time and mkdir()s the event directory.
  // Returns 0 or -errno; *dir receives the path (the caller then calls Finish).
  int Begin(std::string* dir);
  // The rest of an event begun with Begin: file, write, close, aging.
  int Finish(const std::string& dir, bool created, const void* data, size_t len);

  size_t dirs() const { return dirs_.size(); }
  const std::string& process_dir() const { return process_dir_; }
  uint64_t reused() const { return reused_; }

 private:
  std::string process_dir_;
  std::string object_file_;
  size_t record_num_;
  std::deque<std::string> dirs_;
  uint64_t reused_ = 0;  // same-microsecond events sharing a directory (as CANN would)
  bool last_created_ = false;
};

// What CANN's in-process save does with one object's full ring: for each record a time
// string (localtime_r + snprintf, as TimestampToStr) and the text into a buffer, then mkdir
// of the event directory, open, write, close. `objects` files per save, one per object.
// `per_record`: instead of one write per file, the three CANN's recorder makes per record
// (the time string, the text, the newline: TraceRbLogSave's write loop), the cost an
// application pays today.
class InProcessSave {
 public:
  InProcessSave(std::string root, uint32_t records, uint32_t size, uint32_t objects = 1, bool per_record = false);
  void Save();

 private:
  struct Record {
    int64_t us;
    std::string text;
  };
  std::string root_;
  std::vector<Record> records_;
  uint32_t objects_ = 1;
  bool per_record_ = false;
  uint64_t n_ = 0;
};

// CANN's recursive removal of one directory, by path.
int RemoveDirRecursive(const std::string& path);

}  // namespace atraced_bench
