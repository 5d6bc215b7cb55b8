// SinkQueue: a queued sink's bounded queue and thread (Note [Sink delivery] in sink_queue.cpp).
// Private to tfdebug::session: the Session makes one for each sink whose delivery() is queued.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tfdebug/session/sink.hpp"

namespace tfdebug::detail {

// The sink's type, for messages: "tfdebug::MlflowSink".
std::string sink_name(const Sink& sink);

class SinkQueue {
 public:
  // `stop_timeout`: how long the destructor waits for the thread to deliver what is queued.
  SinkQueue(std::shared_ptr<Sink> sink, std::size_t capacity, std::chrono::milliseconds stop_timeout);
  // Stops the thread once the queue is empty (waiting at most stop_timeout); a thread stuck in
  // the sink is left to finish alone (it keeps the sink and the queue alive).
  ~SinkQueue();
  SinkQueue(const SinkQueue&) = delete;
  SinkQueue& operator=(const SinkQueue&) = delete;

  // Never block: when the queue holds `capacity` events the event is dropped and counted.
  void finding(const Finding& finding);
  void step(std::shared_ptr<const StepMetrics> metrics);

  // Waits until every event queued so far was delivered, at most `timeout`; false on timeout.
  bool drain(std::chrono::milliseconds timeout);
  // Queues on_run_end (never dropped) and waits for it, at most `timeout`. The error is what
  // on_run_end threw, or that it did not return in time.
  std::optional<std::string> finish(const RunSummary& summary, std::chrono::milliseconds timeout);

  std::int64_t dropped() const noexcept;
  // What on_finding and on_step threw since the last call ("sink <name>: <what>").
  std::vector<std::string> take_errors();
  const std::string& name() const noexcept { return name_; }

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  std::chrono::milliseconds stop_timeout_;
  std::string name_;
};

}  // namespace tfdebug::detail
