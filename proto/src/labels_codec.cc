// LABELS (1.1, behind ATR_FEATURE_LABELS): the job, rank and world size a process read from
// its environment. They are the process's word and name nothing the daemon trusts; what is
// checked here is only that they are short and harmless to print anywhere.
#include <cstdlib>

#include "atraced/base/time_span.h"

#include "atraced/proto/byte_io.h"
#include "atraced/proto/codec.h"
#include "atraced/proto/stack_report.h"
#include "checks.h"

namespace atraced::proto {

using internal::Error;
using internal::PutString16;
using internal::ReadString16;

namespace {

bool IsJobByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == ':' || c == '@' || c == '+' || c == '=' || c == '-';
}

// A decimal of at most 10 digits, no sign, no leading zero (but "0"), at most 2^31-1.
bool IsSmallDecimal(std::string_view v, uint64_t min) {
  if (v.empty() || v.size() > 10 || (v.size() > 1 && v[0] == '0')) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n >= min && n <= 0x7fffffffu;
}

}  // namespace

std::string CheckLabel(LabelKind kind, std::string_view value) {
  if (value.empty()) return "";
  switch (kind) {
    case LabelKind::kJob:
      if (value.size() > ATR_MAX_LABEL) {
        return "job: " + std::to_string(value.size()) + " bytes, longer than " + std::to_string(ATR_MAX_LABEL);
      }
      for (char c : value) {
        if (!IsJobByte(c)) return "job: only letters, digits and . _ : @ + = - are allowed";
      }
      return "";
    case LabelKind::kRank:
      return IsSmallDecimal(value, 0) ? "" : "rank: not a decimal from 0 to 2147483647";
    case LabelKind::kWorldSize:
      return IsSmallDecimal(value, 1) ? "" : "world_size: not a decimal from 1 to 2147483647";
  }
  return "";
}

namespace {

// Where each label comes from: the first set of its variables.
struct LabelSource {
  LabelKind kind;
  std::string Labels::*field;
  std::initializer_list<const char*> names;
};
const LabelSource kLabelSources[] = {{LabelKind::kJob, &Labels::job, {"ATRACE_JOB", "SLURM_JOB_ID", "JOB_ID"}},
                                     // JOB_COMPLETION_INDEX: a Kubernetes Indexed Job's pod index.
                                     {LabelKind::kRank, &Labels::rank,
                                      {"RANK_ID", "RANK", "SLURM_PROCID", "JOB_COMPLETION_INDEX"}},
                                     {LabelKind::kWorldSize, &Labels::world_size, {"RANK_SIZE", "WORLD_SIZE", "SLURM_NTASKS"}}};

// The first set variable of `names` and its value (at most 4 labels long: the daemon refuses
// it whole), or a null name.
std::pair<const char*, std::string> FirstSet(const char* (*get)(const char*), std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = get(n);
    if (v != nullptr && *v != '\0') return {n, std::string(v).substr(0, 4 * ATR_MAX_LABEL)};
  }
  return {nullptr, ""};
}

}  // namespace

std::string CheckHangTimeout(std::string_view value) {
  if (value.empty()) return "";
  if (value.size() > ATR_MAX_LABEL) {
    return "hang_timeout: " + std::to_string(value.size()) + " bytes, longer than " + std::to_string(ATR_MAX_LABEL);
  }
  const auto span = ParseTimeSpan(value);
  if (!span || span->count() <= 0) return "hang_timeout: not a time span above zero like 500ms, 30s or 5min";
  return "";
}

std::string HangTimeoutFromEnvironment(const char* (*get)(const char*)) {
  const char* v = get("ATRACE_HANG_TIMEOUT");
  return v == nullptr ? std::string() : std::string(v).substr(0, 4 * ATR_MAX_LABEL);  // the daemon refuses it whole
}

Labels LabelsFromEnvironment(const char* (*get)(const char*)) {
  Labels out;
  for (const LabelSource& s : kLabelSources) out.*s.field = FirstSet(get, s.names).second;
  return out;
}

Labels CheckedLabelsFromEnvironment(const char* (*get)(const char*), std::string* refused) {
  Labels out;
  refused->clear();
  for (const LabelSource& s : kLabelSources) {
    auto [name, value] = FirstSet(get, s.names);
    if (std::string why = CheckLabel(s.kind, value); !why.empty()) {
      *refused += (refused->empty() ? "" : "; ") + std::string(name) + "='" + EscapeStackText(value, false) + "': " + why;
      continue;
    }
    out.*s.field = std::move(value);
  }
  return out;
}

void Encode(const Labels& m, std::vector<uint8_t>& out) {
  PutString16(out, m.job);
  PutString16(out, m.rank);
  PutString16(out, m.world_size);
}

void Encode(const LabelsRequest& m, std::vector<uint8_t>& out) {
  Encode(m.labels, out);
  if (!m.hang_timeout.empty()) PutString16(out, m.hang_timeout);
}

namespace {

// The three labels, read and checked.
Status ReadLabels(ByteReader& in, Labels* m) {
  PROTO_TRY(ReadString16(in, "job", &m->job));
  PROTO_TRY(ReadString16(in, "rank", &m->rank));
  PROTO_TRY(ReadString16(in, "world_size", &m->world_size));
  for (auto [kind, value] : {std::pair{LabelKind::kJob, &m->job}, std::pair{LabelKind::kRank, &m->rank},
                             std::pair{LabelKind::kWorldSize, &m->world_size}}) {
    if (std::string why = CheckLabel(kind, *value); !why.empty()) {
      return Status::Error(EINVAL, why);
    }
  }
  return Status::Ok();
}

}  // namespace

Status Decode(std::span<const uint8_t> payload, Labels* m) {
  ByteReader in(payload);
  PROTO_TRY(ReadLabels(in, m));
  if (in.remaining() != 0) return Error(EBADMSG, "LABELS", std::to_string(in.remaining()) + " bytes after world_size");
  return Status::Ok();
}

Status Decode(std::span<const uint8_t> payload, LabelsRequest* m) {
  ByteReader in(payload);
  PROTO_TRY(ReadLabels(in, &m->labels));
  m->hang_timeout.clear();
  if (in.remaining() != 0) {
    PROTO_TRY(ReadString16(in, "hang_timeout", &m->hang_timeout));
    // Sent only when set: an empty one is not a form a client writes.
    if (m->hang_timeout.empty()) return Error(EBADMSG, "LABELS", "hang_timeout sent empty; leave it out");
  }
  if (in.remaining() != 0) return Error(EBADMSG, "LABELS", std::to_string(in.remaining()) + " bytes after hang_timeout");
  if (std::string why = CheckHangTimeout(m->hang_timeout); !why.empty()) return Status::Error(EINVAL, why);
  return Status::Ok();
}

}  // namespace atraced::proto
