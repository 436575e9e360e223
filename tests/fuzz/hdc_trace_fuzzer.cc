// The device's bytes through every layer the receiver applies (atraced/proto/hdc_trace.h):
// the input is cut into HDC messages by its own length bytes, joined into messages with a
// small cap, and each message's ADX payload decoded as a trace event. Nothing may crash,
// and what decodes must be a plain file name and data inside the message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "atraced/proto/hdc_trace.h"

namespace hdc = atraced::proto::hdc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small bounds, so that inputs reach the chain bounds as well as the cap.
  constexpr size_t kChainPackets = 16;
  hdc::PacketAssembler assembler(4096, kChainPackets, 16384);
  size_t pos = 0;
  while (pos + 2 <= size) {
    const size_t n = std::min<size_t>(size - pos - 2, static_cast<size_t>(data[pos]) | (static_cast<size_t>(data[pos + 1]) << 8));
    std::span<const uint8_t> packet(data + pos + 2, n);
    pos += 2 + n;
    const auto step = assembler.Feed(packet);
    if (assembler.chain_packets() > kChainPackets) std::abort();
    if (step != hdc::PacketAssembler::Step::kMessage) continue;
    const std::vector<uint8_t>& message = assembler.message();
    if (message.size() > 4096) std::abort();
    hdc::AdxView view;
    std::string why;
    if (!hdc::DecodeAdx(message, &view, &why)) continue;
    hdc::DeviceEvent ev;
    if (!hdc::DecodeEvent(view.payload, &ev, &why)) continue;
    if (ev.name.empty() || ev.name.size() > 31 || ev.name.find('/') != std::string::npos || ev.name == "..") std::abort();
    if (ev.time.size() != 20) std::abort();
    if (ev.data.data() < view.payload.data() || ev.data.data() + ev.data.size() > view.payload.data() + view.payload.size()) std::abort();
  }
  return 0;
}
