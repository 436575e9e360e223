// Rings in sealed memfds as libascend_trace makes them (proto/ring_layout.h), for tests that
// register rings with the service or with the real daemon. Header-only: it asserts with
// REQUIRE, which only test binaries link.
#pragma once

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "atraced/base/unique_fd.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/ring_layout.h"
#include "support/raw_client.h"

namespace atraced::testing {

// A sealed memfd holding an empty ring of msg_num x msg_size (the header as libascend_trace
// writes it; no slot is touched).
inline UniqueFd EmptyRingOf(uint32_t msg_num, uint32_t msg_size) {
  const uint32_t bytes = static_cast<uint32_t>(ATR_RING_BYTES(msg_num, msg_size));
  UniqueFd fd(::memfd_create("ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  REQUIRE(fd.valid());
  REQUIRE(::ftruncate(fd.get(), bytes) == 0);
  atr_ring_header h{};
  h.magic = ATR_RING_MAGIC;
  h.version = ATR_RING_VERSION;
  h.header_size = ATR_RING_HEADER_SIZE;
  h.msg_num = msg_num;
  h.msg_size = msg_size;
  h.slot_size = ATR_RING_SLOT_SIZE(msg_size);
  h.realtime_ns = 1;
  h.monotonic_ns = 1;
  REQUIRE(::pwrite(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h));
  REQUIRE(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0);
  return fd;
}

// The ring of 4 x 64 most tests use.
inline UniqueFd EmptyRing() { return EmptyRingOf(4, 64); }

inline std::vector<uint8_t> RegisterPayload(uint32_t id, uint32_t msg_num = 4, uint32_t msg_size = 64) {
  proto::RingRegister m;
  m.object_id = id;
  m.msg_num = msg_num;
  m.msg_size = msg_size;
  m.ring_bytes = static_cast<uint32_t>(ATR_RING_BYTES(msg_num, msg_size));
  m.name = "obj" + std::to_string(id);
  return Payload(m);
}


// An EmptyRing() holding `texts` as complete records 0..n-1.
inline UniqueFd RingWith(const std::vector<std::string>& texts) {
  UniqueFd fd = EmptyRing();
  const uint32_t slot = ATR_RING_SLOT_SIZE(64);
  uint64_t k = 0;
  for (const std::string& text : texts) {
    atr_ring_slot_head head{};
    head.seq_done = k + 1;
    head.timestamp_ns = 2 + k;
    head.length = static_cast<uint32_t>(text.size());
    const off_t at = static_cast<off_t>(ATR_RING_HEADER_SIZE + k * slot);
    const uint64_t seq_start = k + 1;
    REQUIRE(::pwrite(fd.get(), text.data(), text.size(), at + ATR_RING_SLOT_HEAD_SIZE) == static_cast<ssize_t>(text.size()));
    REQUIRE(::pwrite(fd.get(), &seq_start, 8, at + slot - 8) == 8);
    REQUIRE(::pwrite(fd.get(), &head, sizeof head, at) == static_cast<ssize_t>(sizeof head));
    ++k;
  }
  REQUIRE(::pwrite(fd.get(), &k, 8, ATR_RING_OFF_WRITE_INDEX) == 8);
  return fd;
}

// An EmptyRingOf(msg_num, msg_size) whose every slot holds a complete record of
// `text_bytes` printable bytes: a full ring, as a busy object leaves it. Filled through a
// mapping (a slot by pwrite would cost three system calls each).
inline UniqueFd FullRingOf(uint32_t msg_num, uint32_t msg_size, uint32_t text_bytes) {
  UniqueFd fd = EmptyRingOf(msg_num, msg_size);
  const size_t bytes = ATR_RING_BYTES(msg_num, msg_size);
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  REQUIRE(map != MAP_FAILED);
  auto* base = static_cast<uint8_t*>(map);
  const uint32_t slot = ATR_RING_SLOT_SIZE(msg_size);
  for (uint64_t k = 0; k < msg_num; ++k) {
    uint8_t* at = base + ATR_RING_HEADER_SIZE + k * slot;
    atr_ring_slot_head head{};
    head.seq_done = k + 1;
    head.timestamp_ns = 2 + k;
    head.length = text_bytes;
    std::memset(at + ATR_RING_SLOT_HEAD_SIZE, 'a' + static_cast<int>(k % 26), text_bytes);
    const uint64_t seq_start = k + 1;
    std::memcpy(at + slot - 8, &seq_start, 8);
    std::memcpy(at, &head, sizeof head);
  }
  const uint64_t written = msg_num;
  std::memcpy(base + ATR_RING_OFF_WRITE_INDEX, &written, 8);
  ::munmap(map, bytes);
  return fd;
}

}  // namespace atraced::testing
