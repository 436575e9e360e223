// Field checks shared by the request and reply decoders. Internal to atraced_proto.
//
// Every failure becomes a Status whose message starts with the field name, so a
// client developer reading the reply knows which byte range to look at.
#ifndef ATRACED_PROTO_SRC_CHECKS_H_
#define ATRACED_PROTO_SRC_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"

// Returns the Status of `expr` if it is an error.
#define PROTO_TRY(expr)                                                  \
  do {                                                                   \
    if (::atraced::Status proto_r_ = (expr); !proto_r_.ok()) return proto_r_; \
  } while (0)

// Decoders check sizes before reading fields, so a failed Read* means that size check is
// wrong; fail as a malformed payload rather than read garbage.
#define PROTO_READ(expr, message)                                                 \
  do {                                                                            \
    if (!(expr)) {                                                                \
      return ::atraced::proto::internal::Error(EBADMSG, message, "truncated"); \
    }                                                                             \
  } while (0)

namespace atraced::proto::internal {

// `err` is a positive errno (EBADMSG, EINVAL, ...); the message is "<field>: <what>".
Status Error(int err, std::string_view field, std::string_view what);

// EBADMSG unless size == want ("HELLO: payload is 3 bytes, expected 16").
Status CheckExactSize(std::string_view message, size_t size, size_t want);
// EBADMSG unless size >= want ("STATUS reply: payload is 3 bytes, expected at least 64").
Status CheckMinSize(std::string_view message, size_t size, size_t want);
// EINVAL unless value == 0.
Status CheckReserved(std::string_view field, uint64_t value);
// EINVAL unless value != 0.
Status CheckNonZero(std::string_view field, uint64_t value);
// EINVAL unless lo <= value <= hi.
Status CheckRange(std::string_view field, int64_t value, int64_t lo, int64_t hi);

// EBADMSG when `count` items of at least `min_item` bytes each cannot fit in what `in` has
// left: checked before a decoder allocates them, so a hostile count reserves nothing.
Status CheckCountFits(const ByteReader& in, uint32_t count, size_t min_item, std::string_view items);

// Reads the 20-byte time field: all NUL -> "", 20 ASCII digits -> the digits, else
// EINVAL. The reader must hold at least ATR_TIME_LEN bytes.
Status ReadTime(ByteReader& in, std::string* time);

// ENAMETOOLONG beyond max_len, EINVAL when !IsSafeName.
Status CheckName(std::string_view field, std::string_view name, size_t max_len);

// Reads u16 length + bytes. EBADMSG when the length runs past the end.
Status ReadString16(ByteReader& in, std::string_view field, std::string* s);
// Three strings (u16 length + bytes): job, rank and world_size, each checked by CheckLabel
// (EBADMSG naming the label), as a reply carries a process's labels.
Status ReadLabels16(ByteReader& in, Labels* labels);

// A path the daemon hands out: no NUL (clients pass it to open()), and absolute or relative
// as the field requires. EINVAL otherwise.
Status CheckPath(std::string_view field, std::string_view path, bool absolute);

// Writes `s` as u16 length + bytes, cut to what the length can express.
void PutString16(std::vector<uint8_t>& out, std::string_view s);
// Writes a time field: "" as 20 NULs, else the first 20 bytes, NUL-padded.
void PutTime(std::vector<uint8_t>& out, std::string_view time);

}  // namespace atraced::proto::internal

#endif  // ATRACED_PROTO_SRC_CHECKS_H_
