// Note [Sink delivery]
// A sink used to be called with the Session's lock held, on the training thread: a sink that
// waits (a dashboard's client on a slow network, a debug adapter, a metrics file on a full NFS
// mount) stalled every observing thread. So a sink is queued unless it declares itself quick
// (Delivery::synchronous: the console, report.json, the profiler's anomaly marker). Each queued
// sink gets a thread and a bounded queue, the pattern of TensorBoardWriter: the Session copies a
// finding into the queue, or a pointer to the step's metrics (one StepMetrics per step, shared by
// every queue), and goes on; the thread delivers in order. A full queue drops the new event and
// counts it (RunSummary::dropped_sink_events, and a line in hook_errors naming the sink): the
// first events of a run (the first error) are the ones kept. finish() waits for each queue to
// empty, then hands the summary to on_run_end, each wait bounded by
// RunConfig::sink_finish_timeout_s; a sink that never returns is abandoned with its thread, which
// owns the queue's shared state and the sink, so nothing it touches is freed under it.
#include "sink_queue.hpp"

#include <cxxabi.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <typeinfo>
#include <variant>

namespace tfdebug::detail {

std::string sink_name(const Sink& sink) {
  const char* mangled = typeid(sink).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : mangled;
  std::free(demangled);
  return name;
}

namespace {
struct RunEnd {
  RunSummary summary;
};
using Event = std::variant<Finding, std::shared_ptr<const StepMetrics>, RunEnd>;
}  // namespace

struct SinkQueue::Shared {
  std::shared_ptr<Sink> sink;
  std::size_t capacity = 0;
  std::string name;
  std::mutex mutex;
  std::condition_variable wake;  // the thread: an event, or stop
  std::condition_variable done;  // waiters: an event delivered
  std::deque<Event> events;
  std::uint64_t queued = 0;     // events accepted
  std::uint64_t delivered = 0;  // events handed to the sink (returned or threw)
  std::int64_t dropped = 0;
  bool stop = false;
  bool exited = false;
  bool run_end_done = false;
  std::optional<std::string> run_end_error;
  std::vector<std::string> errors;

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stop || !events.empty(); });
      if (events.empty()) {  // stop, and nothing left
        exited = true;
        done.notify_all();
        return;
      }
      Event event = std::move(events.front());
      events.pop_front();
      lock.unlock();
      std::optional<std::string> error;
      const bool run_end = std::holds_alternative<RunEnd>(event);
      try {
        if (const auto* f = std::get_if<Finding>(&event))
          sink->on_finding(*f);
        else if (const auto* m = std::get_if<std::shared_ptr<const StepMetrics>>(&event))
          sink->on_step(**m);
        else
          sink->on_run_end(std::get<RunEnd>(event).summary);
      } catch (const std::exception& e) {
        error = e.what();
      } catch (...) {
        error = "unknown exception";
      }
      lock.lock();
      ++delivered;
      if (run_end) {
        run_end_done = true;
        run_end_error = error;
      } else if (error && errors.size() < 16) {
        errors.push_back("sink: " + *error);
      }
      done.notify_all();
    }
  }
};

SinkQueue::SinkQueue(std::shared_ptr<Sink> sink, std::size_t capacity, std::chrono::milliseconds stop_timeout)
    : shared_(std::make_shared<Shared>()), stop_timeout_(stop_timeout) {
  name_ = sink_name(*sink);
  shared_->sink = std::move(sink);
  shared_->capacity = capacity;
  shared_->name = name_;
  // The thread owns a reference to the shared state: it outlives this object if the sink is stuck.
  thread_ = std::thread([shared = shared_] { shared->run(); });
}

SinkQueue::~SinkQueue() {
  std::unique_lock lock(shared_->mutex);
  shared_->stop = true;
  shared_->wake.notify_all();
  const bool exited = shared_->done.wait_for(lock, stop_timeout_, [&] { return shared_->exited; });
  lock.unlock();
  if (exited)
    thread_.join();  // the sink is released here, on this thread
  else
    thread_.detach();  // stuck in the sink: it keeps the sink and the queue alive
}

void SinkQueue::finding(const Finding& finding) {
  const std::lock_guard lock(shared_->mutex);
  if (shared_->events.size() >= shared_->capacity) {
    ++shared_->dropped;
    return;
  }
  shared_->events.emplace_back(finding);
  ++shared_->queued;
  shared_->wake.notify_one();
}

void SinkQueue::step(std::shared_ptr<const StepMetrics> metrics) {
  const std::lock_guard lock(shared_->mutex);
  if (shared_->events.size() >= shared_->capacity) {
    ++shared_->dropped;
    return;
  }
  shared_->events.emplace_back(std::move(metrics));
  ++shared_->queued;
  shared_->wake.notify_one();
}

bool SinkQueue::drain(std::chrono::milliseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  const std::uint64_t target = shared_->queued;
  return shared_->done.wait_for(lock, timeout, [&] { return shared_->delivered >= target; });
}

std::optional<std::string> SinkQueue::finish(const RunSummary& summary, std::chrono::milliseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  shared_->events.emplace_back(RunEnd{summary});
  ++shared_->queued;
  shared_->wake.notify_one();
  if (!shared_->done.wait_for(lock, timeout, [&] { return shared_->run_end_done; }))
    return "did not finish its run within " + std::to_string(timeout.count() / 1000.0) + " s; abandoned";
  return shared_->run_end_error;
}

std::int64_t SinkQueue::dropped() const noexcept {
  const std::lock_guard lock(shared_->mutex);
  return shared_->dropped;
}

std::vector<std::string> SinkQueue::take_errors() {
  const std::lock_guard lock(shared_->mutex);
  std::vector<std::string> out;
  out.swap(shared_->errors);
  return out;
}

}  // namespace tfdebug::detail
