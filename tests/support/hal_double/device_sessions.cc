#include "device_sessions.h"

#include <algorithm>

#include "device_log.h"
#include "hdc_channel.h"
#include "trace_wire.h"

namespace atraced::hal_double::device {
namespace {

// CANN's device blocks on a host that stops reading; the fake device gives up on a message
// after this long (the double then ends the session, and the next tick reaps the node), so
// a hostile host cannot stall it for the others.
constexpr UINT32 kSendTimeoutMs = 5000;

void Close(HDC_SESSION session) { drvHdcSessionClose(session); }

}  // namespace

std::shared_ptr<SessionStore::Node> SessionStore::FindLocked(int pid, int dev) {
  for (auto* list : {&live_, &deleted_}) {
    for (auto& node : *list) {
      if (node->pid == pid && node->dev == dev) return node;
    }
  }
  return nullptr;
}

void SessionStore::RemoveLocked(const std::shared_ptr<Node>& node) {
  for (auto* list : {&live_, &deleted_}) list->erase(std::remove(list->begin(), list->end(), node), list->end());
  changed_.notify_all();
}

bool SessionStore::Add(int pid, int dev, HDC_SESSION session, int timeout_ms) {
  std::lock_guard lock(mu_);
  if (FindLocked(pid, dev)) return false;
  auto node = std::make_shared<Node>();
  node->pid = pid;
  node->dev = dev;
  node->session = session;
  node->timeout_ms = timeout_ms;
  live_.push_back(std::move(node));
  changed_.notify_all();
  return true;
}

bool SessionStore::MarkDeleted(int pid, int dev) {
  std::lock_guard lock(mu_);
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    if ((*it)->pid == pid && (*it)->dev == dev) {
      (*it)->deleted = true;
      deleted_.push_back(*it);
      live_.erase(it);
      changed_.notify_all();
      return true;
    }
  }
  return false;
}

SessionStore::Queued SessionStore::Enqueue(int pid, int dev, Outgoing message) {
  std::lock_guard lock(mu_);
  auto node = FindLocked(pid, dev);
  if (!node) return Queued::kNoSession;
  if (node->queue.size() >= kMaxQueued || node->queued_bytes + message.bytes > kMaxQueuedBytes) return Queued::kFull;
  node->queued_bytes += message.bytes;
  node->queue.push_back(std::move(message));
  return Queued::kOk;
}

std::string SessionStore::TsEventTime(int pid, int dev, uint8_t seq_flag) {
  std::lock_guard lock(mu_);
  auto node = FindLocked(pid, dev);
  if (!node) return {};
  if (seq_flag == wire::kSeqStart || node->ts_time.empty()) node->ts_time = wire::NowTime20();
  std::string time = node->ts_time;
  if (seq_flag == wire::kSeqEnd) node->ts_time.clear();
  return time;
}

void SessionStore::Tick() {
  struct Work {
    std::shared_ptr<Node> node;
    std::deque<Outgoing> messages;
  };
  std::vector<Work> work;
  std::vector<HDC_SESSION> gone;
  {
    std::lock_guard lock(mu_);
    // 1. Deleted list: the flush window runs down; what is queued goes out.
    for (auto& node : deleted_) {
      node->timeout_ms -= tick_ms_;
      work.push_back({node, std::move(node->queue)});
      node->queue.clear();
      node->queued_bytes = 0;
    }
    // 2. Live list: a host that went away (closed, exited, killed) is reaped.
    for (auto it = live_.begin(); it != live_.end();) {
      auto& node = *it;
      int status = 0;
      if (halHdcGetSessionAttr(node->session, HDC_SESSION_ATTR_STATUS, &status) != DRV_ERROR_NONE ||
          status == HDC_SESSION_STATUS_CLOSE) {
        Say("host pid %d closed its long link: session node freed", node->pid);
        gone.push_back(node->session);
        it = live_.erase(it);
        changed_.notify_all();
        continue;
      }
      if (!node->queue.empty()) {
        work.push_back({node, std::move(node->queue)});
        node->queue.clear();
        node->queued_bytes = 0;
      }
      ++it;
    }
    ++sending_;
  }
  for (HDC_SESSION session : gone) Close(session);

  for (auto& [node, messages] : work) {
    bool end_sent = false;
    for (const auto& m : messages) {
      const drvError_t rc = channel::SendAll(node->session, m.hdc, HDC_FLAG_WAIT_TIMEOUT, kSendTimeoutMs);
      if (rc != DRV_ERROR_NONE) {
        Say("send of %s to pid %d failed (%d): dropped", m.what.c_str(), node->pid, rc);
        continue;
      }
      Say("sent %s to pid %d (%zu HDC messages)", m.what.c_str(), node->pid, m.hdc.size());
      end_sent = end_sent || m.seq_flag == wire::kSeqEnd;
    }
    if (node->deleted && end_sent) {
      // An end chunk went out after the host's [end]: the device says it is done.
      channel::SendMessage(node->session, wire::Proto(wire::kStatusNoneError, wire::End()), HDC_FLAG_WAIT_TIMEOUT,
                           kSendTimeoutMs);
      channel::SendMessage(node->session, wire::Proto(wire::kStatusNoneError, wire::kHdcEndMsg),
                           HDC_FLAG_WAIT_TIMEOUT, kSendTimeoutMs);
      Say("sent TraceEndMsg and HDC_END_MSG to pid %d", node->pid);
      std::lock_guard lock(mu_);
      node->timeout_ms = 0;
    }
  }

  std::vector<HDC_SESSION> finished;
  {
    std::lock_guard lock(mu_);
    --sending_;
    for (auto it = deleted_.begin(); it != deleted_.end();) {
      if ((*it)->timeout_ms <= 0) {
        Say("flush window of pid %d over: session closed", (*it)->pid);
        finished.push_back((*it)->session);
        it = deleted_.erase(it);
      } else {
        ++it;
      }
    }
    changed_.notify_all();
  }
  for (HDC_SESSION session : finished) Close(session);
}

HDC_SESSION SessionStore::Take(int pid, int dev) {
  std::lock_guard lock(mu_);
  for (auto it = live_.begin(); it != live_.end(); ++it) {
    if ((*it)->pid == pid && (*it)->dev == dev) {
      HDC_SESSION session = (*it)->session;
      live_.erase(it);
      changed_.notify_all();
      return session;
    }
  }
  return nullptr;
}

size_t SessionStore::DropAll() {
  std::vector<HDC_SESSION> sessions;
  {
    std::lock_guard lock(mu_);
    for (auto* list : {&live_, &deleted_}) {
      for (auto& node : *list) sessions.push_back(node->session);
      list->clear();
    }
    changed_.notify_all();
  }
  for (HDC_SESSION session : sessions) Close(session);
  return sessions.size();
}

std::string SessionStore::Describe() {
  std::lock_guard lock(mu_);
  std::string out = std::to_string(live_.size() + deleted_.size());
  for (auto* list : {&live_, &deleted_}) {
    for (auto& node : *list) {
      out += " " + std::to_string(node->pid) + ":" + std::to_string(node->dev) + (node->deleted ? ":deleted" : ":live");
    }
  }
  return out;
}

bool SessionStore::WaitForNode(int pid, int dev, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] {
    return std::any_of(live_.begin(), live_.end(),
                       [&](const auto& n) { return n->pid == pid && (dev < 0 || n->dev == dev); });
  });
}

bool SessionStore::IdleLocked() const {
  if (sending_ > 0) return false;
  for (auto* list : {&live_, &deleted_}) {
    for (auto& node : *list) {
      if (!node->queue.empty()) return false;
    }
  }
  return true;
}

bool SessionStore::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return IdleLocked(); });
}

}  // namespace atraced::hal_double::device
