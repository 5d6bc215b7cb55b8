// The dashboard's event fan-out (event_stream.hpp).
#include "event_stream.hpp"

#include <algorithm>

namespace tfdebug::serve::detail {

// Note [Streaming that cannot hurt training]: the training thread only copies an event into the
// Session's queue for this sink (Delivery::queued, src/session/sink_queue.cpp). The sink's thread
// formats the event once (one JSON line, one SSE frame) and pushes a pointer to it into each
// client's queue under that client's own short lock; it never touches a socket. Each client's
// server thread takes its frames and writes them; a slow or stalled browser blocks only its own
// thread (up to the write timeout). A queue that is full when an event comes means the client
// fell `capacity` events behind: it is dropped (closed, counted, logged) instead of being waited
// for or growing memory. A browser's EventSource then reconnects with Last-Event-ID: when the
// backlog still holds every later event, the client resumes where it stopped; otherwise it gets a
// fresh snapshot. The snapshot and the registration happen under the dashboard's lock that also
// orders publish, so a new client sees every event after its snapshot exactly once, in order.
//
// Writes are coalesced: a client's thread that has just written does not wait for the next event
// but sleeps until DashboardOptions::flush_interval has passed, then takes everything that queued
// meanwhile and writes it as one chunk. An event after a quiet spell goes out at once; during a
// burst (the demo's 200 steps a second) each client costs one wake-up and one socket write per
// interval instead of one per event. Without this, 100 clients' threads made 20,000 writes a
// second and took the cores the training thread needed (docs/performance.md, "The live
// dashboard"). push() signals only a thread that is waiting, so a sleeping one costs nothing.
std::string sse_frame(std::uint64_t id, const std::string& json) {
  // JSON from nlohmann's dump has no raw newline: one data line.
  std::string frame = "id: " + std::to_string(id) + "\ndata: ";
  frame.reserve(frame.size() + json.size() + 2);
  frame += json;
  frame += "\n\n";
  return frame;
}

bool StreamClient::push(const Frame& frame) {
  bool kept = true;
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (dropped_) return false;
    if (closed_) return true;
    if (queue_.size() >= capacity_) {
      dropped_ = true;
      queue_.clear();
      kept = false;
    } else {
      queue_.push_back(frame);
    }
    wake = waiting_ || !kept;
  }
  if (wake) ready_.notify_one();
  return kept;
}

StreamClient::Wait StreamClient::take(std::vector<Frame>& out, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  waiting_ = true;
  ready_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_ || dropped_; });
  waiting_ = false;
  if (dropped_) return Wait::closed;
  if (queue_.empty()) return closed_ ? Wait::closed : Wait::idle;
  out.assign(queue_.begin(), queue_.end());
  queue_.clear();
  return Wait::frames;
}

void StreamClient::join(const std::vector<Frame>& frames, std::string& out) {
  std::size_t size = out.size();
  for (const Frame& frame : frames) size += frame->size();
  out.reserve(size);
  for (const Frame& frame : frames) out += *frame;
}

void StreamClient::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  ready_.notify_one();
}

bool StreamClient::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::uint64_t EventStream::publish(const std::string& json,
                                   std::vector<std::shared_ptr<StreamClient>>& dropped) {
  const std::uint64_t id = ++last_id_;
  auto frame = std::make_shared<const std::string>(sse_frame(id, json));
  backlog_frames_.emplace_back(id, frame);
  while (backlog_frames_.size() > backlog_) backlog_frames_.pop_front();
  for (auto it = clients_.begin(); it != clients_.end();) {
    if ((*it)->push(frame)) {
      ++it;
    } else {
      dropped.push_back(*it);
      it = clients_.erase(it);
    }
  }
  return id;
}

bool EventStream::can_resume(std::uint64_t last_event_id) const {
  if (last_event_id > last_id_) return false;  // an id of another server (restarted)
  if (last_event_id == last_id_) return true;  // nothing missed
  // Every event after last_event_id must still be kept, and fit the client's queue.
  return !backlog_frames_.empty() && backlog_frames_.front().first <= last_event_id + 1 &&
         last_id_ - last_event_id <= client_capacity_;
}

void EventStream::unsubscribe(const std::shared_ptr<StreamClient>& client) {
  clients_.erase(std::remove(clients_.begin(), clients_.end(), client), clients_.end());
}

void EventStream::close_all() {
  for (const auto& client : clients_) client->close();
  clients_.clear();
}

}  // namespace tfdebug::serve::detail
