// EventStream: the dashboard's fan-out of Server-Sent Events to its clients (Note [Streaming that
// cannot hurt training] in event_stream.cpp). Private to tfdebug::serve.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tfdebug::serve::detail {

// One event as it goes on the wire ("id: N\ndata: JSON\n\n"), formatted once for every client.
using Frame = std::shared_ptr<const std::string>;

std::string sse_frame(std::uint64_t id, const std::string& json);

// One client's bounded queue; the server's thread for that client waits on it.
class StreamClient {
 public:
  enum class Wait : std::uint8_t { frames, idle, closed };
  explicit StreamClient(std::size_t capacity) : capacity_(capacity) {}

  // Never blocks on the client: false when the queue was full (the client is then dropped).
  bool push(const Frame& frame);
  // Takes what is queued, waiting at most `timeout` for something. `closed` once the client was
  // dropped or the stream closed, after what was queued before that was taken.
  Wait take(std::vector<Frame>& out, std::chrono::milliseconds timeout);
  // Appends what take() returns as one block of text: the frames go to the socket in one write.
  static void join(const std::vector<Frame>& frames, std::string& out);
  void close();
  bool dropped() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Frame> queue_;
  std::size_t capacity_;
  bool waiting_ = false;  // the server's thread waits in take(): push wakes it
  bool dropped_ = false;
  bool closed_ = false;
};

class EventStream {
 public:
  EventStream(std::size_t client_capacity, std::size_t backlog)
      : client_capacity_(client_capacity), backlog_(backlog) {}

  // Gives `json` the next id, keeps it in the backlog and queues it for every client; clients
  // whose queue is full are dropped (returned, for the log). The caller serialises calls.
  std::uint64_t publish(const std::string& json, std::vector<std::shared_ptr<StreamClient>>& dropped);
  std::uint64_t last_id() const noexcept { return last_id_; }

  // A new client. With `last_event_id` still in the backlog (every later event kept), it gets
  // those events; otherwise `snapshot()` (called here, JSON of the state at last_id()) first.
  // `resumed` says which. The caller serialises this with publish.
  template <class Snapshot>
  std::shared_ptr<StreamClient> subscribe(std::optional<std::uint64_t> last_event_id, Snapshot&& snapshot,
                                          bool& resumed) {
    auto client = std::make_shared<StreamClient>(client_capacity_);
    resumed = last_event_id && can_resume(*last_event_id);
    if (resumed) {
      for (const auto& [id, frame] : backlog_frames_)
        if (id > *last_event_id) client->push(frame);
    } else {
      client->push(std::make_shared<const std::string>(sse_frame(last_id_, snapshot())));
    }
    clients_.push_back(client);
    return client;
  }
  void unsubscribe(const std::shared_ptr<StreamClient>& client);
  std::size_t clients() const noexcept { return clients_.size(); }
  void close_all();

 private:
  bool can_resume(std::uint64_t last_event_id) const;

  std::size_t client_capacity_;
  std::size_t backlog_;
  std::uint64_t last_id_ = 0;
  std::deque<std::pair<std::uint64_t, Frame>> backlog_frames_;
  std::vector<std::shared_ptr<StreamClient>> clients_;
};

}  // namespace tfdebug::serve::detail
