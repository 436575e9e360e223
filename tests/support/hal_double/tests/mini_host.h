// A minimal host for the self-tests, written against the driver API only (through
// hdc_channel's packet chains): short and long links as CANN's host client opens them.
// Not the project's receiver; just enough to drive the fake device.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ascend_hal_double.h"
#include "hdc_channel.h"
#include "trace_wire.h"

namespace mini_host {

namespace wire = atraced::hal_double::wire;
namespace channel = atraced::hal_double::channel;

// A fresh directory for the double's sockets, removed at scope exit; short, for sun_path.
class SocketDir {
 public:
  SocketDir() {
    char tmpl[] = "/tmp/haldbl.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~SocketDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for a scope (the double reads it at every call).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = ::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// One HDC session of service BBOX, opened as adcore does: client, connect, reference.
class Link {
 public:
  drvError_t Open(int dev) {
    drvError_t rc = drvHdcClientCreate(&client_, 96, HDC_SERVICE_TYPE_BBOX, 0);
    if (rc != DRV_ERROR_NONE) return rc;
    rc = drvHdcSessionConnect(0, dev, client_, &session_);
    if (rc != DRV_ERROR_NONE) return rc;
    return drvHdcSetSessionReference(session_);
  }
  ~Link() { Close(); }
  void Close() {
    if (session_ != nullptr) drvHdcSessionClose(session_);
    if (client_ != nullptr) drvHdcClientDestroy(client_);
    session_ = client_ = nullptr;
  }
  HDC_SESSION session() const { return session_; }

  drvError_t Send(uint16_t status, std::string_view payload) {
    return channel::SendMessage(session_, wire::Proto(status, payload));
  }
  // One logical message; its MsgProto checked as the host does, the payload returned.
  channel::Recv Read(std::string* payload, int timeout_ms, std::string* why, size_t cap = 24 + 116 + 600 * 1024) {
    std::string message;
    const auto r = channel::RecvMessage(session_, &message, timeout_ms, cap, why);
    if (r != channel::Recv::kOk) return r;
    wire::ProtoView proto;
    if (!wire::ParseProto(message, &proto, why)) return channel::Recv::kBadPacket;
    payload->assign(proto.payload);
    return r;
  }

 private:
  HDC_CLIENT client_ = nullptr;
  HDC_SESSION session_ = nullptr;
};

// The long link: LONG_LINK_DEFAULT with status 12, then TraceStartMsg with the flush timeout.
inline drvError_t OpenLongLink(Link& link, int dev, int flush_timeout_ms = 0) {
  drvError_t rc = link.Open(dev);
  if (rc == DRV_ERROR_NONE) rc = link.Send(wire::kStatusLongLink, wire::kLongLink);
  if (rc == DRV_ERROR_NONE) rc = link.Send(wire::kStatusNoneError, wire::Start(flush_timeout_ms));
  return rc;
}

// [end] on a short session: connect, send, close, nothing read.
inline drvError_t SendEnd(int dev) {
  Link link;
  drvError_t rc = link.Open(dev);
  if (rc == DRV_ERROR_NONE) rc = link.Send(wire::kStatusNoneError, wire::End());
  return rc;
}

}  // namespace mini_host
