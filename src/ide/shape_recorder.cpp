#include "tfdebug/ide/shape_recorder.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::ide {

namespace {

TensorShape shape_of(const TensorView& view) {
  const auto shape = view.shape();
  return {view.dtype(), std::vector<std::int64_t>(shape.begin(), shape.end())};
}

void append_signature(std::string& out, const TensorShape& t) {
  out += dtype_name(t.dtype);
  out += '[';
  for (const std::int64_t d : t.shape) {
    out += std::to_string(d);
    out += ',';
  }
  out += ']';
}

nlohmann::ordered_json shape_json(const TensorShape& t) {
  return {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}};
}

}  // namespace

ShapeRecorder::ShapeRecorder(std::string path) : path_(std::move(path)) {}

bool ShapeRecorder::pause_at(const Observation& o, const Stats& stats, std::span<const Finding> raised) {
  (void)stats;
  (void)raised;
  if (o.role == Role::update) return false;  // an update has its parameter's shape
  const TensorShape output = shape_of(o.value);
  std::vector<TensorShape> inputs;
  if (o.role == Role::output && o.inputs != nullptr) {
    for (const TensorView& input : o.inputs->input_views()) inputs.push_back(shape_of(input));
  }
  const std::lock_guard lock(mutex_);
  if (first_step_ < 0 || o.step < first_step_) first_step_ = o.step;
  last_step_ = std::max(last_step_, o.step);
  auto found = modules_.find(o.module);
  if (found == modules_.end()) {
    if (entries_ >= kMaxEntries) {
      ++dropped_;
      return false;
    }
    found = modules_.emplace(std::string(o.module), Module{}).first;
  }
  Module& module = found->second;
  if (o.role != Role::output) {
    // A parameter (or its gradient, which has its shape): the op field holds its full name.
    auto parameter = module.parameters.find(std::string(o.op));
    if (parameter != module.parameters.end()) {
      parameter->second = output;
    } else if (entries_ < kMaxEntries) {
      module.parameters.emplace(std::string(o.op), output);
      ++entries_;
    } else {
      ++dropped_;
    }
    return false;
  }
  std::string signature(o.op);
  signature += '|';
  signature += phase_name(o.phase);
  signature += '|';
  for (const TensorShape& input : inputs) append_signature(signature, input);
  signature += "->";
  append_signature(signature, output);
  const auto known = module.index.find(signature);
  if (known != module.index.end()) {
    OpShapes& entry = module.ops[known->second];
    ++entry.calls;
    entry.first_step = std::min(entry.first_step, o.step);
    entry.last_step = std::max(entry.last_step, o.step);
    return false;
  }
  if (entries_ >= kMaxEntries) {
    ++dropped_;
    return false;
  }
  module.index.emplace(std::move(signature), module.ops.size());
  module.ops.push_back({std::string(o.op), o.phase, std::move(inputs), output, 1, o.step, o.step});
  ++entries_;
  return false;
}

std::vector<ModuleShapes> ShapeRecorder::modules() const {
  const std::lock_guard lock(mutex_);
  std::vector<ModuleShapes> out;
  out.reserve(modules_.size());
  for (const auto& [path, module] : modules_) out.push_back({path, module.ops, module.parameters});
  return out;
}

std::int64_t ShapeRecorder::dropped() const {
  const std::lock_guard lock(mutex_);
  return dropped_;
}

std::string ShapeRecorder::json() const {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t dropped = 0;
  {
    const std::lock_guard lock(mutex_);
    first = first_step_;
    last = last_step_;
    dropped = dropped_;
  }
  nlohmann::ordered_json modules = nlohmann::ordered_json::array();
  for (const ModuleShapes& m : this->modules()) {
    nlohmann::ordered_json parameters = nlohmann::ordered_json::array();
    for (const auto& [name, shape] : m.parameters) {
      nlohmann::ordered_json p = {{"name", name}};
      p.update(shape_json(shape));
      parameters.push_back(std::move(p));
    }
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const OpShapes& op : m.ops) {
      nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
      for (const TensorShape& input : op.inputs) inputs.push_back(shape_json(input));
      ops.push_back({{"op", op.op},
                     {"phase", phase_name(op.phase)},
                     {"inputs", std::move(inputs)},
                     {"output", shape_json(op.output)},
                     {"calls", op.calls},
                     {"first_step", op.first_step},
                     {"last_step", op.last_step}});
    }
    modules.push_back({{"module", m.module}, {"parameters", std::move(parameters)}, {"ops", std::move(ops)}});
  }
  const nlohmann::ordered_json doc = {{"format", "tfdebug-shapes"}, {"version", 1},
                                      {"first_step", first},        {"last_step", last},
                                      {"dropped", dropped},         {"modules", std::move(modules)}};
  // Module and op names come from the model: replace invalid UTF-8 rather than throw.
  return doc.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void ShapeRecorder::write(const std::string& path) const {
  const std::filesystem::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec)
      throw Error("shapes: cannot create the folder " + target.parent_path().string() + ": " + ec.message());
  }
  const std::string text = json();
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw Error("shapes: cannot write " + temporary);
  }
  std::filesystem::rename(temporary, target, ec);
  if (ec) throw Error("shapes: cannot rename " + temporary + " to " + path + ": " + ec.message());
}

void ShapeRecorder::on_run_end(const RunSummary& summary) {
  (void)summary;
  if (!path_.empty()) write(path_);
}

}  // namespace tfdebug::ide
