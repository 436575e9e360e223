// Errors as values. A Status is OK or carries a positive errno and a message with context
// (path, peer, field); Result<T> is a value or such an error. No exceptions cross a library
// boundary in atraced, so every fallible call returns one of these.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace atraced {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return Status(); }
  // `err` is a positive errno value (EINVAL, ENOSPC, ...).
  static Status Error(int err, std::string message) { return Status(err, std::move(message)); }

  bool ok() const { return err_ == 0; }
  int err() const { return err_; }
  const std::string& message() const { return message_; }

 private:
  Status(int err, std::string message) : err_(err == 0 ? EIO : err), message_(std::move(message)) {}
  int err_ = 0;
  std::string message_;
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
