/* Compile check: wire.h must stay valid C99 for device-side forwarders written in C.
 * Built as C99 with -Wall -Wextra -pedantic -Werror; it is never run, so it only has to use
 * every struct, enum and macro in a way the compiler checks. */
#include "atraced/proto/wire.h"

#include <stddef.h>
#include <string.h>

/* The layouts document byte offsets; pin a few so a reordering fails here too. Named
 * typedefs rather than ATR_STATIC_ASSERT, whose __LINE__-based names could collide with
 * wire.h's own at the same line number (C99 forbids repeating a typedef). */
#define C99_CHECK(name, cond) typedef char c99_check_##name[(cond) ? 1 : -1]
C99_CHECK(request_id_at_12, offsetof(struct atr_frame_header, request_id) == 12);
C99_CHECK(event_time_at_16, offsetof(struct atr_event_begin, time) == 16);
C99_CHECK(file_time_at_24, offsetof(struct atr_file_open, time) == 24);
C99_CHECK(entry_bytes_at_24, offsetof(struct atr_list_entry, bytes) == 24);
C99_CHECK(append_fills_frame, ATR_MAX_APPEND + sizeof(struct atr_file_append) == ATR_MAX_PAYLOAD);

size_t atr_c99_wire_check(void);

size_t atr_c99_wire_check(void) {
  struct atr_frame_header header;
  struct atr_reply_head reply;
  struct atr_hello hello;
  struct atr_hello_reply hello_reply;
  struct atr_event_begin event;
  struct atr_file_open file;
  struct atr_file_append append;
  struct atr_id_request id;
  struct atr_status_reply status;
  struct atr_list_request list;
  struct atr_list_entry entry;
  struct atr_vacuum_request vacuum;
  enum atr_opcode opcode = ATR_OP_VACUUM;
  enum atr_event_kind kind = ATR_EVENT_EXIT;
  enum atr_side side = ATR_SIDE_DEVICE;
  enum atr_file_form form = ATR_FILE_STACKCORE;
  enum atr_suffix suffix = ATR_SUFFIX_BIN;
  enum atr_status err = ATR_ENOTSUP;

  memset(&header, 0, sizeof(header));
  header.magic = ATR_MAGIC;
  header.length = ATR_MAX_PAYLOAD;
  header.opcode = (uint16_t)opcode;
  header.flags = ATR_FLAG_REPLY;
  reply.status = err;
  reply.reserved = 0;
  hello.version_major = ATR_VERSION_MAJOR;
  hello.version_minor = ATR_VERSION_MINOR;
  hello.features = ATR_FEATURE_FD_PASSING | ATR_FEATURE_MEMFD;
  hello_reply.max_payload = ATR_MAX_PAYLOAD;
  event.kind = (uint8_t)kind;
  event.side = (uint8_t)side;
  event.device_id = ATR_MAX_DEVICE_ID;
  memset(event.time, 0, ATR_TIME_LEN);
  file.form = (uint8_t)form;
  file.suffix = (uint8_t)suffix;
  file.name_len = ATR_MAX_OBJECT_NAME + ATR_MAX_PROGRAM_NAME;
  append.file_id = 1;
  id.id = 1;
  status.record_num = ATR_MAX_MESSAGE;
  list.max_entries = 1024;
  entry.seq = 1;
  vacuum.dry_run = 1;

  return sizeof(header) + sizeof(reply) + sizeof(hello) + sizeof(hello_reply) +
         sizeof(event) + sizeof(file) + sizeof(append) + sizeof(id) + sizeof(status) +
         sizeof(list) + sizeof(entry) + sizeof(vacuum) + header.length + (size_t)reply.status +
         (size_t)hello.features + hello_reply.max_payload + event.device_id + file.name_len +
         append.file_id + id.id + status.record_num + list.max_entries + (size_t)entry.seq +
         vacuum.dry_run + (size_t)ATR_FRAME_HEADER_SIZE;
}
