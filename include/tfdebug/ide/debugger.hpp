// Debugger: a Session sink that stops the training thread at breakpoints (breakpoint.hpp) and
// steps it op by op, module by module or to the end of the step, through the Session's pause
// channel (Note [Pause channel] in src/session/session.cpp). While stopped, a handler (the
// console, a debug adapter, a test) reads the Stop: the module stack, phase, step, the op's
// inputs and output, the parameters and gradients by name; and answers how to go on.
//
//   tfdebug::ide::Debugger debugger([](const tfdebug::ide::Stop& stop) {
//     std::printf("stopped at %s in %s\n", stop.op().c_str(), stop.module().c_str());
//     return tfdebug::ide::Resume::next_op;     // or continue_run, next_module, finish_step, abort
//   });
//   auto dbg = std::shared_ptr<tfdebug::ide::Debugger>(&debugger, [](auto*) {});
//   session.add_sink(dbg);
//   debugger.add(tfdebug::ide::parse_breakpoint("nan"));
//
// The handler runs on the stopped thread (the training thread, or the thread running backward),
// with no lock of the Session held; stops of several threads are taken one at a time. Stepping
// follows the thread that stopped last: another thread's ops never end a step, and while a thread
// steps, breakpoints stop no other thread unless they say so (Breakpoint::thread: `thread any`,
// `thread 2`).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tfdebug/core/tensor.hpp"
#include "tfdebug/ide/breakpoint.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug::ide {

// How a stopped run goes on.
enum class Resume : std::uint8_t {
  continue_run,  // to the next breakpoint
  next_op,       // to the next observed op of this thread
  next_module,   // to the next op of this thread in another module
  finish_step,   // to the first op of a later step (breakpoints still stop on the way)
  detach,        // on to the end without stopping again (breakpoints are kept but not checked)
  abort,         // like detach, and aborted() turns true: the training loop should stop
};

// Why the run stopped.
struct StopReason {
  std::string kind;    // "breakpoint", "step" (stepping ended), "nan" (a nonfinite breakpoint)
  int breakpoint = 0;  // the breakpoint's id when one stopped it
  std::string text;    // "breakpoint 1: op aten::log*", "next op", "entered blocks.1.mlp"
};

// A watched tensor, as last seen: its statistics and, when it held at most kWatchKeepValues
// values, a copy of the tensor itself (a glob's last matching output).
struct Watched {
  static constexpr std::int64_t kWatchKeepValues = std::int64_t{1} << 20;  // 4 MiB of f32
  std::string name;            // the watch expression: a tensor name or a module/op glob
  std::optional<Stats> stats;  // nullopt until it was seen
  std::int64_t step = -1;
  std::string where;                    // "blocks.1.mlp aten::log" for an op glob
  std::shared_ptr<const Tensor> value;  // the last matching output (null: none yet, or too large)
  std::int64_t numel = 0;               // its number of values (also when too large to keep)
};

// The stopped frame; valid only during the handler call.
class Stop {
 public:
  // A watch's kept tensor, shown at a stop as "watch1", "watch2" ... (the watch's position).
  struct Kept {
    std::string name;
    std::shared_ptr<const Tensor> value;
  };
  Stop(const PausePoint& point, StopReason reason, std::vector<Finding> raised, int thread = 0,
       std::vector<Kept> kept = {})
      : point_(point),
        reason_(std::move(reason)),
        raised_(std::move(raised)),
        thread_(thread),
        kept_(std::move(kept)) {}

  const PausePoint& point() const noexcept { return point_; }
  const Observation& observation() const noexcept { return point_.observation(); }
  const StopReason& reason() const noexcept { return reason_; }
  std::int64_t step() const noexcept { return observation().step; }
  Phase phase() const noexcept { return observation().phase; }
  // The stopped thread's number (1, 2, ...: Debugger::thread_number); 0 when unknown.
  int thread() const noexcept { return thread_; }
  std::string module() const { return std::string(observation().module); }
  std::string op() const { return std::string(observation().op); }
  // "blocks", "blocks.1", "blocks.1.mlp": the module path chain, outermost first.
  std::vector<std::string> module_stack() const;
  // The findings the observation raised (repeats included).
  const std::vector<Finding>& raised() const noexcept { return raised_; }

  // Every tensor name this stop can show: "output", "input0" ... "inputN", then the producer's
  // (parameters; their gradients as NAME.grad), then the watches' kept tensors ("watch1" ...).
  std::vector<std::string> tensor_names() const;
  // A tensor by one of those names; nullopt for another name.
  std::optional<TensorView> tensor(std::string_view name) const;

 private:
  const PausePoint& point_;
  StopReason reason_;
  std::vector<Finding> raised_;
  int thread_ = 0;
  std::vector<Kept> kept_;
};

class Debugger final : public Sink {
 public:
  using Handler = std::function<Resume(const Stop&)>;
  explicit Debugger(Handler handler);
  ~Debugger() override;
  Debugger(const Debugger&) = delete;
  Debugger& operator=(const Debugger&) = delete;

  // Breakpoints; thread-safe, also while stopped (from the handler).
  int add(Breakpoint breakpoint);  // returns its id (1, 2, ...)
  bool remove(int id);             // false when there is none with that id
  void clear();
  // Replaces the condition of breakpoint `id` (nullopt: none); false when there is no such id.
  bool set_condition(int id, std::optional<Condition> condition);
  bool set_ignore(int id, std::int64_t ignore);
  bool set_enabled(int id, bool enabled);
  std::vector<Breakpoint> breakpoints() const;

  // Watches: `name` is a tensor name of the stops (a parameter, NAME.grad) or a glob over
  // "MODULE OP" of outputs ("blocks.1.mlp*", "*aten::log"): the latter's statistics, and a copy
  // of the last matching output itself (at most Watched::kWatchKeepValues values), are kept as
  // the run goes, for the handler to show; at a stop, watch N's copy is the tensor "watchN".
  void watch(std::string name);
  bool unwatch(std::string_view name);
  std::vector<Watched> watched() const;

  // Stop at the next observation (any thread), as if stepping: pause from another thread.
  void interrupt() noexcept { interrupt_.store(true, std::memory_order_release); }
  // Never stop again, and say aborted(): for a user who quits before the run stopped.
  void abort() noexcept {
    aborted_.store(true, std::memory_order_relaxed);
    detached_.store(true, std::memory_order_relaxed);
  }
  // Every finding the Session reported so far (on_finding), in order.
  std::vector<Finding> findings() const;
  // Module paths seen so far (for completion), sorted.
  std::vector<std::string> modules() const;
  std::int64_t stops() const noexcept { return stops_.load(std::memory_order_relaxed); }
  // Threads are numbered 1, 2, ... in the order they first observed (for `break ... thread N`);
  // the number of threads seen so far.
  int threads() const noexcept { return threads_.load(std::memory_order_relaxed); }
  bool aborted() const noexcept { return aborted_.load(std::memory_order_relaxed); }
  bool detached() const noexcept { return detached_.load(std::memory_order_relaxed); }

  // Sink.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;
  bool wants_pauses() const noexcept override { return true; }
  bool pause_at(const Observation& observation, const Stats& stats, std::span<const Finding> raised) override;
  void on_pause(const PausePoint& point) override;

 private:
  struct Stepping {
    Resume mode = Resume::continue_run;
    std::thread::id thread;
    std::string module;      // next_module: the module it stopped in
    std::int64_t step = -1;  // finish_step: the step it stopped in
  };
  std::optional<StopReason> match(const Observation& o, const Stats& stats, std::span<const Finding> raised);
  void update_watches(const Observation& o);
  void refresh_armed();

  Handler handler_;
  const std::uint64_t serial_;  // tells this Debugger's per-thread records from others'
  mutable std::mutex mutex_;    // breakpoints_, watches_, findings_, modules_, stepping_
  std::vector<Breakpoint> breakpoints_;
  int next_id_ = 1;
  std::vector<Watched> watches_;
  std::vector<Finding> findings_;
  std::set<std::string, std::less<>> modules_;
  Stepping stepping_;
  std::mutex stop_mutex_;           // one stop at a time
  std::atomic<bool> armed_{false};  // some breakpoint, watch or stepping: pause_at looks closer
  std::atomic<bool> interrupt_{false};
  std::atomic<bool> aborted_{false};
  std::atomic<bool> detached_{false};
  std::atomic<std::int64_t> stops_{0};
  std::atomic<int> threads_{0};
};

}  // namespace tfdebug::ide
