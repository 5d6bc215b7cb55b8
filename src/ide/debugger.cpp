#include "tfdebug/ide/debugger.hpp"

#include <algorithm>
#include <utility>

namespace tfdebug::ide {

// Note [Where a thread is]
// Module entry and exit, the first op of a phase or a step, and "the next module" are changes
// between two consecutive observations of one thread, so each thread remembers its last module,
// phase and step (per Debugger). Producers observe an op after it ran, so a module is "entered"
// at its first op (stopped with that op's output) and "left" at the first op after its last one:
// no producer says in advance which op is a module's last. The record is kept even when no
// breakpoint is set, so that one set while stopped sees the right transitions.
namespace {

struct ThreadPlace {
  // The Debugger's serial number, not its address: a new Debugger at a freed one's address
  // starts afresh (thread numbers, module, phase).
  std::uint64_t owner = 0;
  std::string module;
  Phase phase = Phase::forward;
  std::int64_t step = -1;
  int number = 0;  // 1, 2, ... in the order threads first observed (Debugger::threads_)
  // The stop pause_at asked for, until on_pause takes it.
  std::optional<StopReason> pending;
  std::vector<Finding> pending_raised;
};
thread_local ThreadPlace t_place;

ThreadPlace& place_of(std::uint64_t debugger) {
  ThreadPlace& p = t_place;
  if (p.owner != debugger) {
    p = ThreadPlace{};
    p.owner = debugger;
  }
  return p;
}

// The deepest ancestor of `module` (itself included) that `pattern` matches, or nullopt.
std::optional<std::string_view> matching_ancestor(std::string_view pattern, std::string_view module) {
  if (module.empty()) return std::nullopt;
  std::optional<std::string_view> found;
  std::size_t at = 0;
  while (true) {
    const std::size_t dot = module.find('.', at);
    const std::string_view prefix = module.substr(0, dot);
    if (glob_match(pattern, prefix)) found = prefix;
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  return found;
}

bool inside(std::string_view ancestor, std::string_view module) {
  return module == ancestor ||
         (module.size() > ancestor.size() && module.substr(0, ancestor.size()) == ancestor &&
          module[ancestor.size()] == '.');
}

}  // namespace

std::vector<std::string> Stop::module_stack() const {
  std::vector<std::string> stack;
  const std::string_view module = observation().module;
  if (module.empty()) return stack;
  std::size_t at = 0;
  while (true) {
    const std::size_t dot = module.find('.', at);
    stack.emplace_back(module.substr(0, dot));
    if (dot == std::string_view::npos) break;
    at = dot + 1;
  }
  return stack;
}

std::vector<std::string> Stop::tensor_names() const {
  std::vector<std::string> names = {"output"};
  for (std::size_t i = 0; i < point_.inputs().size(); ++i) names.push_back("input" + std::to_string(i));
  for (std::string& name : point_.tensor_names()) names.push_back(std::move(name));
  for (const Kept& k : kept_) names.push_back(k.name);
  return names;
}

std::optional<TensorView> Stop::tensor(std::string_view name) const {
  if (name == "output") return observation().value;
  if (name.size() > 5 && name.substr(0, 5) == "input") {
    std::size_t index = 0;
    bool digits = true;
    for (const char c : name.substr(5)) {
      digits = digits && c >= '0' && c <= '9';
      index = index * 10 + std::size_t(c - '0');
      if (index > point_.inputs().size()) break;
    }
    if (digits && index < point_.inputs().size()) return point_.inputs()[index];
    if (digits) return std::nullopt;
  }
  for (const Kept& k : kept_) {
    if (k.name == name) return k.value->view();
  }
  return point_.tensor(name);
}

namespace {
std::atomic<std::uint64_t> g_debuggers{0};  // serial numbers of Debuggers
}  // namespace

Debugger::Debugger(Handler handler)
    : handler_(std::move(handler)), serial_(g_debuggers.fetch_add(1, std::memory_order_relaxed) + 1) {}
Debugger::~Debugger() = default;

void Debugger::refresh_armed() {
  armed_.store(!breakpoints_.empty() || !watches_.empty() || stepping_.mode != Resume::continue_run,
               std::memory_order_release);
}

int Debugger::add(Breakpoint breakpoint) {
  const std::lock_guard lock(mutex_);
  breakpoint.id = next_id_++;
  breakpoint.hits = 0;
  breakpoints_.push_back(std::move(breakpoint));
  refresh_armed();
  return breakpoints_.back().id;
}

bool Debugger::remove(int id) {
  const std::lock_guard lock(mutex_);
  const auto it =
      std::find_if(breakpoints_.begin(), breakpoints_.end(), [&](const Breakpoint& b) { return b.id == id; });
  if (it == breakpoints_.end()) return false;
  breakpoints_.erase(it);
  refresh_armed();
  return true;
}

void Debugger::clear() {
  const std::lock_guard lock(mutex_);
  breakpoints_.clear();
  refresh_armed();
}

bool Debugger::set_condition(int id, std::optional<Condition> condition) {
  const std::lock_guard lock(mutex_);
  for (Breakpoint& b : breakpoints_) {
    if (b.id != id) continue;
    b.condition = std::move(condition);
    return true;
  }
  return false;
}

bool Debugger::set_ignore(int id, std::int64_t ignore) {
  const std::lock_guard lock(mutex_);
  for (Breakpoint& b : breakpoints_) {
    if (b.id != id) continue;
    b.ignore = b.hits + ignore;  // the next `ignore` hits
    return true;
  }
  return false;
}

bool Debugger::set_enabled(int id, bool enabled) {
  const std::lock_guard lock(mutex_);
  for (Breakpoint& b : breakpoints_) {
    if (b.id != id) continue;
    b.enabled = enabled;
    return true;
  }
  return false;
}

std::vector<Breakpoint> Debugger::breakpoints() const {
  const std::lock_guard lock(mutex_);
  return breakpoints_;
}

void Debugger::watch(std::string name) {
  const std::lock_guard lock(mutex_);
  for (const Watched& w : watches_) {
    if (w.name == name) return;
  }
  Watched w;
  w.name = std::move(name);
  watches_.push_back(std::move(w));
  refresh_armed();
}

bool Debugger::unwatch(std::string_view name) {
  const std::lock_guard lock(mutex_);
  const auto it =
      std::find_if(watches_.begin(), watches_.end(), [&](const Watched& w) { return w.name == name; });
  if (it == watches_.end()) return false;
  watches_.erase(it);
  refresh_armed();
  return true;
}

std::vector<Watched> Debugger::watched() const {
  const std::lock_guard lock(mutex_);
  return watches_;
}

std::vector<Finding> Debugger::findings() const {
  const std::lock_guard lock(mutex_);
  return findings_;
}

std::vector<std::string> Debugger::modules() const {
  const std::lock_guard lock(mutex_);
  return {modules_.begin(), modules_.end()};
}

void Debugger::on_finding(const Finding& finding) {
  const std::lock_guard lock(mutex_);
  findings_.push_back(finding);
}

void Debugger::on_run_end(const RunSummary& /*summary*/) {}

void Debugger::update_watches(const Observation& o) {
  if (o.role != Role::output) return;
  std::string key;
  for (Watched& w : watches_) {
    if (key.empty()) key = std::string(o.module) + " " + std::string(o.op);
    // "blocks.1.mlp*" (a module's ops) or "*aten::log" (an op anywhere), over "MODULE OP".
    if (!glob_match(w.name, key) && !glob_match(w.name, o.module)) continue;
    w.stats = compute_stats(o.value);  // the Session's may hold the counts only
    w.step = o.step;
    w.where = key;
    // The tensor itself, copied (the producer's memory is gone or rewritten by the next stop);
    // an earlier copy still shown at a stop lives on through its shared_ptr.
    w.numel = o.value.numel();
    w.value = w.numel <= Watched::kWatchKeepValues ? std::make_shared<const Tensor>(Tensor::copy_of(o.value))
                                                   : nullptr;
  }
}

std::optional<StopReason> Debugger::match(const Observation& o, const Stats& stats,
                                          std::span<const Finding> raised) {
  ThreadPlace& place = place_of(serial_);
  std::optional<Stats> full;  // measured here, once, when a condition reads moments
  const auto measured = [&](const Condition& c) -> const Stats& {
    if (!c.needs_moments()) return stats;
    if (!full) full = compute_stats(o.value);
    return *full;
  };
  std::optional<StopReason> reason;
  int spent = 0;  // a one-shot breakpoint that stopped
  const bool op = o.role == Role::output;
  // Note [Threads of a breakpoint]: while a thread steps, a breakpoint without a thread of its
  // own stops only that thread, so that another thread's op never takes the step over.
  const bool stepping_elsewhere =
      stepping_.mode != Resume::continue_run && stepping_.thread != std::this_thread::get_id();
  for (Breakpoint& b : breakpoints_) {
    if (!b.enabled) continue;
    if (b.thread > 0 ? b.thread != place.number : b.thread == 0 && stepping_elsewhere) continue;
    // A module is left in the phase it was in (Note [Where a thread is]).
    const Phase phase = b.kind == BreakKind::module && b.at_exit ? place.phase : o.phase;
    if (b.phase && b.kind != BreakKind::phase && phase != *b.phase) continue;
    bool at = false;
    std::string where;
    switch (b.kind) {
      case BreakKind::op:
        at = op && glob_match(b.pattern, o.op);
        break;
      case BreakKind::module: {
        // Entry and exit are changes of module, phase or step: most ops change none.
        if (!op || (place.module == o.module && place.phase == o.phase && place.step == o.step)) break;
        // Inside a module: in it (or below it), in the same phase of the same step.
        const bool same_run = place.phase == o.phase && place.step == o.step;
        if (!b.at_exit) {
          const std::optional<std::string_view> now = matching_ancestor(b.pattern, o.module);
          at = now && !(same_run && inside(*now, place.module));
          if (at) where = "entered " + std::string(*now) + " (" + std::string(phase_name(o.phase)) + ")";
        } else {
          const std::optional<std::string_view> before = matching_ancestor(b.pattern, place.module);
          at = before && !(same_run && inside(*before, o.module));
          if (at) where = "left " + std::string(*before) + " (" + std::string(phase_name(place.phase)) + ")";
        }
        break;
      }
      case BreakKind::phase:
        at = o.role != Role::parameter && o.phase == *b.phase &&
             (place.phase != o.phase || place.step != o.step);
        break;
      case BreakKind::step:
        at = o.step == b.step && place.step != o.step;
        break;
      case BreakKind::nonfinite: {
        const bool bad = (b.nan && stats.nan > 0) || (b.inf && stats.pos_inf + stats.neg_inf > 0);
        if (!bad || o.role != Role::output || o.filled) break;
        // The producer, not an op that passed a bad value on or a mask filled with -inf; or the
        // first op that received it from the step's input data (every bad input value came
        // from outside the step's ops: Note [Inputs from outside] in src/torch/op_path.cpp).
        const std::optional<InputKinds> kinds = o.resolve_input_kinds();
        const bool from_data =
            kinds && !kinds->finite() && kinds->nan == kinds->outside_nan && kinds->inf == kinds->outside_inf;
        at = !kinds || kinds->finite() || from_data;
        if (from_data) where = "received from the input data";
        break;
      }
      case BreakKind::finding:
        at = std::any_of(raised.begin(), raised.end(), [&](const Finding& f) {
          return b.pattern.empty() || glob_match(b.pattern, f.rule);
        });
        break;
      case BreakKind::any:
        at = true;
        break;
    }
    if (!at) continue;
    if (b.condition && !b.condition->holds(measured(*b.condition))) continue;
    ++b.hits;
    if (b.hits <= b.ignore || reason) continue;
    reason = StopReason{
        b.kind == BreakKind::nonfinite ? "nan" : "breakpoint", b.id,
        "breakpoint " + std::to_string(b.id) + ": " + b.text() + (where.empty() ? "" : ", " + where)};
    if (b.once) spent = b.id;
  }
  if (spent != 0) {
    std::erase_if(breakpoints_, [&](const Breakpoint& b) { return b.id == spent; });
  }
  if (reason) return reason;
  if (stepping_.mode == Resume::continue_run || stepping_.thread != std::this_thread::get_id())
    return std::nullopt;
  switch (stepping_.mode) {
    case Resume::next_op:
      return StopReason{"step", 0, "next op"};
    case Resume::next_module:
      if (op && o.module != stepping_.module)
        return StopReason{
            "step", 0,
            "next module: " + (o.module.empty() ? std::string("(top level)") : std::string(o.module))};
      return std::nullopt;
    case Resume::finish_step:
      if (o.step > stepping_.step)
        return StopReason{"step", 0, "step " + std::to_string(stepping_.step) + " ended"};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool Debugger::pause_at(const Observation& o, const Stats& stats, std::span<const Finding> raised) {
  ThreadPlace& place = place_of(serial_);
  if (place.number == 0) place.number = threads_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (o.role == Role::output && place.module != o.module) {
    const std::lock_guard lock(mutex_);
    if (!o.module.empty() && modules_.size() < 100000) modules_.emplace(o.module);
  }
  std::optional<StopReason> reason;
  if (!detached_.load(std::memory_order_relaxed)) {
    if (interrupt_.exchange(false, std::memory_order_acq_rel)) reason = StopReason{"pause", 0, "paused"};
    if (armed_.load(std::memory_order_acquire)) {
      const std::lock_guard lock(mutex_);
      if (!watches_.empty()) update_watches(o);
      std::optional<StopReason> matched = match(o, stats, raised);
      if (!reason) reason = std::move(matched);
      refresh_armed();
    }
  }
  // Parameters are shown outside the order of ops (the probe labels them forward): they move
  // nothing; gradients and updates move the phase; only ops move the module.
  if (o.role != Role::parameter) {
    place.phase = o.phase;
    place.step = o.step;
  }
  if (o.role == Role::output) place.module.assign(o.module);
  if (!reason) return false;
  place.pending = std::move(reason);
  place.pending_raised.assign(raised.begin(), raised.end());
  return true;
}

void Debugger::on_pause(const PausePoint& point) {
  ThreadPlace& place = place_of(serial_);
  if (!place.pending) return;
  StopReason reason = std::move(*place.pending);
  place.pending.reset();
  const std::lock_guard stop_lock(stop_mutex_);
  {
    const std::lock_guard lock(mutex_);
    stepping_ = Stepping{};  // a stop ends any stepping
    refresh_armed();
  }
  stops_.fetch_add(1, std::memory_order_relaxed);
  std::vector<Stop::Kept> kept;
  {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < watches_.size(); ++i) {
      if (watches_[i].value) kept.push_back({"watch" + std::to_string(i + 1), watches_[i].value});
    }
  }
  const Stop stop(point, std::move(reason), std::move(place.pending_raised), place.number, std::move(kept));
  Resume resume = Resume::continue_run;
  try {
    resume = handler_(stop);
  } catch (...) {
    detached_.store(true, std::memory_order_relaxed);  // a broken handler must not stop the run again
    throw;
  }
  const std::lock_guard lock(mutex_);
  switch (resume) {
    case Resume::detach:
      detached_.store(true, std::memory_order_relaxed);
      break;
    case Resume::abort:
      aborted_.store(true, std::memory_order_relaxed);
      detached_.store(true, std::memory_order_relaxed);
      break;
    case Resume::continue_run:
      break;
    case Resume::next_op:
    case Resume::next_module:
    case Resume::finish_step:
      stepping_ = Stepping{resume, std::this_thread::get_id(), stop.module(), stop.step()};
      break;
  }
  refresh_armed();
}

}  // namespace tfdebug::ide
