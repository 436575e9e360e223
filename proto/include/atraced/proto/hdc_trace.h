// CANN's device-to-host trace channel over the NPU driver's HDC sessions, as bytes: the
// adcore packet chain, the ADX message head and the four trace messages
// (docs/DEVICE_TRACES.md; layouts written from ../shared/reference/device-channel.md §3).
//
// Socket- and driver-free, so that every layer is unit-tested and fuzzed on its own. The
// device's bytes are untrusted: every decoder here bounds what it reads and says why it
// refused, and nothing it returns can name a file outside an event directory.
#ifndef ATRACED_PROTO_HDC_TRACE_H_
#define ATRACED_PROTO_HDC_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace atraced::proto::hdc {

// One HDC message carries one adcore packet: {u32 len, u32 type, u8 isLast, payload at 9}.
// The sender sends sizeof of that C struct (12) + len bytes; a receiver refuses fewer.
inline constexpr size_t kPacketHeadBytes = 12;
inline constexpr size_t kPacketValueOffset = 9;
inline constexpr uint32_t kPacketType = 0xB0;  // IDE_DAEMON_LITTLE_PACKAGE, the only one used
inline constexpr uint32_t kDefaultMaxSegment = 524288;
inline constexpr uint32_t kMinMaxSegment = 1024;  // adcore refuses a driver outside this range

// ADX's message head, 24 bytes, before every trace message.
inline constexpr size_t kAdxHeadBytes = 24;
inline constexpr uint16_t kAdxMagic = 0xC396;
inline constexpr uint8_t kAdxVersion = 0x10;
inline constexpr uint16_t kTraceRequest = 16;  // IDE_TRACE_REQ
inline constexpr uint16_t kStatusNoneError = 6;
inline constexpr uint16_t kStatusFileLoad = 3;  // refused by the receiver
inline constexpr uint16_t kStatusLongLink = 12;

inline constexpr uint8_t kMsgHello = 1;
inline constexpr uint8_t kMsgStart = 2;
inline constexpr uint8_t kMsgEvent = 3;
inline constexpr uint8_t kMsgEnd = 4;
inline constexpr size_t kHelloBytes = 48;
inline constexpr size_t kStartBytes = 32;
inline constexpr size_t kEndBytes = 32;
inline constexpr size_t kEventHeadBytes = 116;
inline constexpr uint16_t kTraceMagic = 0xC327;
inline constexpr uint16_t kTraceVersion = 1;

// The largest event payload a well-formed device sends (a TS chunk's data is at most
// 512 KiB), and the cap on a reassembled message: head, event head, data and slack. CANN
// reassembles without any bound.
inline constexpr size_t kMaxEventData = 512 * 1024;
inline constexpr size_t kMaxMessage = kAdxHeadBytes + kEventHeadBytes + kMaxEventData + 4096;

inline constexpr std::string_view kLongLinkOpener = "LONG_LINK_DEFAULT";  // sent without NUL
inline constexpr std::string_view kHdcEndMsg = "###[HDC_MSG]hdc_end_msg_used_by_framework###";

inline constexpr uint8_t kSeqStart = 0;
inline constexpr uint8_t kSeqMiddle = 1;
inline constexpr uint8_t kSeqEnd = 2;
inline constexpr uint8_t kSeqSingle = 3;

// ---- Sending ----------------------------------------------------------------------------

// A message with its ADX head (request 16, device 0 as CANN's host sends it).
std::vector<uint8_t> AdxMessage(uint16_t status, std::span<const uint8_t> payload);
// The packets that carry `message` over a channel of `max_segment` bytes per HDC message:
// each is 12 + len bytes, the last has isLast set.
std::vector<std::vector<uint8_t>> SplitIntoPackets(std::span<const uint8_t> message, uint32_t max_segment);

std::vector<uint8_t> HelloPayload();
std::vector<uint8_t> StartPayload(int32_t flush_timeout_ms);
std::vector<uint8_t> EndPayload();

// ---- Receiving --------------------------------------------------------------------------

// What one packet chain may span before it is dropped, whether its packets are kept or
// skipped: a well-formed message of kMaxMessage bytes takes 523 packets at the smallest
// segment adcore accepts (1024), and a few MiB of wire bytes at most. A device that never
// sets isLast (or sends an endless oversized chain) is cut off here instead of being read
// for ever.
inline constexpr size_t kMaxChainPackets = 4096;
inline constexpr size_t kMaxChainBytes = 16u << 20;

// Joins packets into messages. A message longer than `cap` is refused whole: its remaining
// packets are skipped up to its last one, so the next message starts clean. A chain of more
// than max_packets packets or max_bytes wire bytes (skipped ones included) is refused and
// dropped, and the next packet starts a new message.
class PacketAssembler {
 public:
  enum class Step { kMore, kMessage, kRefused };

  explicit PacketAssembler(size_t cap = kMaxMessage, size_t max_packets = kMaxChainPackets,
                           size_t max_bytes = kMaxChainBytes)
      : cap_(cap), max_packets_(max_packets), max_bytes_(max_bytes) {}

  // Takes one HDC message. kMessage: message() holds a whole message until the next call.
  // kRefused: why() says what was wrong and the message is dropped; an oversized message is
  // refused once, and the rest of its chain is then skipped as kMore (up to the chain bound).
  Step Feed(std::span<const uint8_t> hdc_message);
  const std::vector<uint8_t>& message() const { return message_; }
  const std::string& why() const { return why_; }
  // Packets of the chain in progress (kept or skipped); 0 between messages.
  size_t chain_packets() const { return chain_packets_; }
  void Reset();

 private:
  Step Refuse(std::string why, bool skip_rest);

  size_t cap_;
  size_t max_packets_;
  size_t max_bytes_;
  std::vector<uint8_t> message_;
  bool complete_ = false;
  bool skipping_ = false;  // an oversized message's packets until its last
  size_t chain_packets_ = 0;
  size_t chain_bytes_ = 0;
  std::string why_;
};

// The payload of an ADX message after the checks CANN's receiver makes (payload not empty,
// status not FILE_LOAD, sliceLen + 24 == length) and the ones it skips (magic, version,
// totalLen == sliceLen, offset 0).
struct AdxView {
  uint16_t status = 0;
  std::span<const uint8_t> payload;
};
bool DecodeAdx(std::span<const uint8_t> message, AdxView* out, std::string* why);

bool IsHdcEndMsg(std::span<const uint8_t> payload);
// The device's hello echo: type 1, magic and version. CANN tolerates a mismatch (logged).
bool IsHelloEcho(std::span<const uint8_t> payload);
bool IsEndMsg(std::span<const uint8_t> payload);

// A TraceEventMsg, checked and turned into what atraced's EVENT_BEGIN and FILE_OPEN take.
struct DeviceEvent {
  uint8_t seq_flag = 0;
  uint32_t device_id = 0;  // the device's local id, as it says
  int32_t host_pid = 0;    // the pid the device routed by; informational
  std::string name;        // the object name, or "ts_N" for TS firmware data
  bool is_ts = false;      // name is ts_N with N <= 1023 and saveType text: form TS
  uint32_t ts_device = 0;  // that N (the physical id)
  bool binary = false;     // saveType 1: .bin
  std::string time;        // 20 digits, the device's clock
  std::span<const uint8_t> data;
};
// Refuses (false, *why set) what CANN would have written blindly: a bufLen beyond what
// arrived, a name that is empty, unterminated within its 32 bytes, or not a plain file name
// component ('/', "." or ".."), a time that is not 20 digits, saveType other than 0 or 1.
// Bytes outside atraced's name set [A-Za-z0-9_.-] are mapped to '_' as PROTOCOL's name
// rules ask (CANN would have used them in the path as they are).
bool DecodeEvent(std::span<const uint8_t> payload, DeviceEvent* out, std::string* why);

}  // namespace atraced::proto::hdc

#endif  // ATRACED_PROTO_HDC_TRACE_H_
