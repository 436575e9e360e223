// A ring made by the library's own writer (client/ascend_trace/src/ring_writer.h), mapped at
// a private address, for tests of the writer and the reader.
#pragma once

#include <sys/mman.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "atraced/proto/ring_reader.h"
#include "ring_writer.h"

namespace ascend_trace_test {

class TestRing {
 public:
  TestRing(uint32_t msg_num, uint32_t msg_size, bool no_lock = false, bool counter = false) {
    REQUIRE(ascend_trace::ShapeFromAttr(static_cast<uint16_t>(msg_num), static_cast<uint16_t>(msg_size),
                                        no_lock ? 1 : 0, &shape_));
    shape_.counter = counter;
    void* p = ::mmap(nullptr, ATR_RING_MAX_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<uint8_t*>(p);
    REQUIRE(ascend_trace::CreateRing(shape_, "test", base_, &fd_, &bytes_) == 0);
  }
  ~TestRing() { ::munmap(base_, ATR_RING_MAX_BYTES); }

  // As AtraceSubmit writes: with this ring's own claim key (ring_writer.h, ThreadClaim).
  TraStatus Write(const void* data, uint32_t length, uint8_t type = 0) {
    return ascend_trace::WriteRecord(base_, shape_.msg_num - 1, shape_.msg_size, shape_.no_lock, shape_.counter,
                                     claim_key_, type, data, length);
  }
  uint64_t write_index() const {
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(base_ + ATR_RING_OFF_WRITE_INDEX), __ATOMIC_ACQUIRE);
  }
  std::vector<uint8_t> Copy() const {
    std::vector<uint8_t> out;
    atraced::proto::CopyRingSnapshot(base_, bytes_, &out);
    return out;
  }
  uint8_t* base() const { return base_; }
  uint64_t bytes() const { return bytes_; }
  int fd() const { return fd_.get(); }
  const ascend_trace::RingShape& shape() const { return shape_; }

 private:
  ascend_trace::RingShape shape_;
  uint8_t* base_ = nullptr;
  atraced::UniqueFd fd_;
  uint64_t bytes_ = 0;
  // Unique over the test process's life, as an object's handle is over a process's.
  inline static std::atomic<uint64_t> next_key_{1};
  uint64_t claim_key_ = next_key_.fetch_add(1);
};

inline std::string Text(std::span<const uint8_t> data) { return std::string(data.begin(), data.end()); }

}  // namespace ascend_trace_test
