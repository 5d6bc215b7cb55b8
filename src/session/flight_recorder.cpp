#include "tfdebug/session/flight_recorder.hpp"

#include <algorithm>

#include "tfdebug/core/error.hpp"

namespace tfdebug {

namespace {
constexpr std::string_view kOtherName = "<other>";
}  // namespace

FlightRecorder::FlightRecorder(int steps, int max_ops_per_step, int max_names)
    : ring_(static_cast<std::size_t>(std::max(steps, 1))),
      max_ops_(static_cast<std::size_t>(std::max(max_ops_per_step, 0))),
      max_names_(static_cast<std::size_t>(std::max(max_names, 1))) {
  names_.emplace_back(kOtherName);
  ids_.emplace(std::string(kOtherName), 0);
}

std::uint32_t FlightRecorder::intern(std::string_view name) {
  const auto address = reinterpret_cast<std::uintptr_t>(name.data());
  Recent& recent = recent_[((address >> 3) * 0x9E3779B97F4A7C15ULL) >> (64 - 10)];
  if (recent.data == name.data() && recent.size == name.size() && names_[recent.id] == name) return recent.id;
  const std::string key(name);
  std::uint32_t id = 0;
  if (const auto it = ids_.find(key); it != ids_.end()) {
    id = it->second;
  } else {
    if (names_.size() >= max_names_) return 0;
    id = static_cast<std::uint32_t>(names_.size());
    names_.push_back(key);
    ids_.emplace(key, id);
  }
  recent = Recent{name.data(), name.size(), id};
  return id;
}

void FlightRecorder::begin_step(std::int64_t step) {
  if (open_) end_step(std::nullopt);
  Slot& slot = ring_[next_];
  slot.step = step;
  slot.loss.reset();
  slot.dropped = 0;
  slot.ops.clear();  // keeps its capacity: a warm ring allocates nothing
  next_ = (next_ + 1) % ring_.size();
  used_ = std::min(used_ + 1, ring_.size());
  open_ = true;
}

void FlightRecorder::restart_step() {
  if (used_ == 0 || !open_) return;
  Slot& slot = ring_[(next_ + ring_.size() - 1) % ring_.size()];
  dropped_total_ -= slot.dropped;
  slot.dropped = 0;
  slot.ops.clear();
}

void FlightRecorder::record(const Observation& observation, const Stats& stats) {
  if (used_ == 0) begin_step(observation.step);
  Slot& slot = ring_[(next_ + ring_.size() - 1) % ring_.size()];
  if (slot.ops.size() >= max_ops_) {
    ++slot.dropped;
    ++dropped_total_;
    return;
  }
  if (slot.ops.capacity() == 0) slot.ops.reserve(std::min<std::size_t>(max_ops_, 256));
  slot.ops.push_back(Summary{intern(observation.module), intern(observation.op), observation.phase,
                             observation.role, stats.count, stats.nan, stats.pos_inf + stats.neg_inf,
                             stats.min, stats.max, stats.mean, stats.std, stats.abs_max});
}

void FlightRecorder::end_step(std::optional<double> loss) {
  if (used_ == 0) return;
  ring_[(next_ + ring_.size() - 1) % ring_.size()].loss = loss;
  open_ = false;
}

std::vector<RecordedStep> FlightRecorder::steps() const {
  std::vector<RecordedStep> result;
  result.reserve(used_);
  for (std::size_t i = 0; i < used_; ++i) {
    const Slot& slot = ring_[(next_ + ring_.size() - used_ + i) % ring_.size()];
    RecordedStep step{slot.step, slot.loss, slot.dropped, {}};
    step.ops.reserve(slot.ops.size());
    for (const Summary& s : slot.ops) {
      step.ops.push_back(RecordedOp{names_[s.module_id], names_[s.op_id], s.phase, s.role, s.count, s.nan,
                                    s.inf, s.min, s.max, s.mean, s.std, s.abs_max});
    }
    result.push_back(std::move(step));
  }
  return result;
}

}  // namespace tfdebug
