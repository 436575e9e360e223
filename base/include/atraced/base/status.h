// Errors as values, the one error type of atraced. A Status is OK or carries a positive
// errno and a message with context (path, peer, field); Result<T> is a value or such an
// error. No exceptions cross a library boundary in atraced, so every fallible call returns
// one of these: the store and the daemon's rooms, the protocol's decoders, the handlers'
// replies. The wire's negative status (wire.h atr_status) is made of it in one place, the
// reply encoder (proto::WireStatus).
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace atraced {

class Status {
 public:
  // How whoever reports this error logs it. A refusal comes in floods from one uid, so the
  // daemon logs refusals through one throttle, as a notice; an attempt on a bound or a
  // permission as a warning; and not at all when its own summary lines count it already (a
  // rate limit, a full disk).
  enum class LogAs : uint8_t { kNotice, kWarning, kSummarized };

  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // `err` is a positive errno value (EINVAL, ENOSPC, ...).
  static Status Error(int err, std::string message, LogAs log_as = LogAs::kNotice) {
    return Status(err, std::move(message), log_as);
  }

  bool ok() const { return err_ == 0; }
  int err() const { return err_; }
  const std::string& message() const { return message_; }
  LogAs log_as() const { return log_as_; }

  // The same error, logged as `log_as` says.
  Status LoggedAs(LogAs log_as) && {
    log_as_ = log_as;
    return std::move(*this);
  }
  // The same error with `prefix` before its message ("vacuum: " + message).
  Status Prefixed(std::string_view prefix) && {
    message_.insert(0, prefix);
    return std::move(*this);
  }

 private:
  Status(int err, std::string message, LogAs log_as)
      : err_(err == 0 ? EIO : err), message_(std::move(message)), log_as_(log_as) {}
  int err_ = 0;
  std::string message_;
  LogAs log_as_ = LogAs::kNotice;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // An error. An OK status here is a bug in the caller (a Result that is neither a value nor
  // an error); it becomes an EIO error that names itself rather than a value-less success.
  Result(Status error)  // NOLINT: implicit by design
      : v_(error.ok() ? Status::Error(EIO, "internal error: a result was made from an OK status")
                      : std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const Status& status() const { return std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

// "<what>: <strerror(err)>" — the one way errno text is rendered in messages.
std::string ErrnoMessage(std::string_view what, int err);

}  // namespace atraced
