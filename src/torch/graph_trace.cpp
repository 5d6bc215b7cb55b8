// trace_graph: one forward pass recorded as an ModelGraph (graph_trace.hpp).
//
// Note [Traced ops]
// RecordFunction's start and end callbacks of one thread nest like a stack, so a stack of frames
// tells the ops the forward called (no op frame below them) from the ops those run inside
// (aten::linear's addmm): only the first are nodes. Inputs are resolved in the start callback,
// before the op runs (an in-place op changes what its input is); outputs in the end callback.
//
// Note [Tensor identity]
// A value is the TensorImpl an op returned; the map from TensorImpl address to value name is
// updated by every op that returns the impl (an in-place op makes a new value of the same impl).
// The trace keeps a weak reference to each impl it names: that keeps the impl's memory, and so
// its address, from being reused by a later tensor while the trace runs, without keeping the
// tensor's data alive. A tensor whose impl is unknown but whose memory (storage, offset, shape,
// strides) equals a known value's is that value (a tensor rewrapped outside the dispatcher).
#include "tfdebug/torch/graph_trace.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "module_attribution.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch {
namespace {

using WeakImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

// at::ScalarType to ONNX TensorProto.DataType; 0 for types ONNX has no id for.
int onnx_elem_type(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return 1;
    case at::kByte:
      return 2;
    case at::kChar:
      return 3;
    case at::kShort:
      return 5;
    case at::kInt:
      return 6;
    case at::kLong:
      return 7;
    case at::kBool:
      return 9;
    case at::kHalf:
      return 10;
    case at::kDouble:
      return 11;
    case at::kComplexFloat:
      return 14;
    case at::kComplexDouble:
      return 15;
    case at::kBFloat16:
      return 16;
    default:
      return 0;
  }
}

GraphValue value_of(const std::string& name, const at::Tensor& t) {
  GraphValue v;
  v.name = name;
  v.elem_type = onnx_elem_type(t.scalar_type());
  v.has_shape = true;
  for (const auto d : t.sizes()) v.dims.emplace_back(static_cast<std::int64_t>(d));
  return v;
}

// "blocks.0.attn" -> "blocks.0/attn": module components as name scopes, a list index staying
// with its list (TensorBoard groups by "/").
std::string scoped(const std::string& module) {
  std::string out;
  std::size_t start = 0;
  while (start <= module.size()) {
    std::size_t dot = module.find('.', start);
    if (dot == std::string::npos) dot = module.size();
    const std::string part = module.substr(start, dot - start);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (!out.empty()) out += index ? "." : "/";
    out += part;
    start = dot + 1;
  }
  return out;
}

std::string parent_of(const std::string& module) {
  const auto dot = module.rfind('.');
  return dot == std::string::npos ? std::string() : module.substr(0, dot);
}

std::string memory_key(const at::Tensor& t) {
  std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(t.storage().data())) + "@" +
                    std::to_string(t.storage_offset()) + "/" +
                    std::to_string(static_cast<int>(t.scalar_type()));
  for (const auto d : t.sizes()) key += "," + std::to_string(d);
  key += "/";
  for (const auto s : t.strides()) key += "," + std::to_string(s);
  return key;
}

struct Weight {
  std::string name;    // "blocks.0.attn.q.weight"
  std::string module;  // "blocks.0.attn.q"
  at::Tensor tensor;
  bool listed = false;  // already in graph.initializers
};

enum class FrameKind : std::uint8_t { node, inner, scope };

struct Frame {
  FrameKind kind = FrameKind::inner;
  std::size_t node = 0;
};

struct Trace {
  ModelGraph graph;
  std::vector<Weight> weights;
  std::unordered_map<const c10::TensorImpl*, std::size_t> weight_of_impl;
  std::unordered_map<const void*, std::size_t> weight_of_storage;
  std::unordered_map<const c10::TensorImpl*, std::string> value_of_impl;
  std::unordered_map<std::string, std::string> value_of_memory;
  std::vector<WeakImpl> named;  // Note [Tensor identity]
  std::map<std::string, std::int64_t> op_counts;
  std::vector<Frame> frames;
  std::vector<std::string> scopes;  // RECORD_USER_SCOPE names
  std::size_t op_depth = 0;
  std::string last_weight_module;
  bool after_weight = false;
  detail::ModuleTree tree;  // module -> parent, in detail::module_paths()
  std::int64_t failures = 0;
  std::string first_failure;

  void name_value(const at::Tensor& t, const std::string& value) {
    value_of_impl[t.unsafeGetTensorImpl()] = value;
    named.emplace_back(t.getIntrusivePtr());
    if (t.has_storage()) value_of_memory[memory_key(t)] = value;
  }

  // The value an op input is (Note [Tensor identity]); parameters and new inputs are listed.
  std::string resolve(const at::Tensor& t, std::string& weight_module) {
    if (!t.defined()) return "";
    // A view of a weight (weight.t() made in the forward) places the op in the weight's module.
    const Weight* viewed = nullptr;
    if (t.has_storage()) {
      if (const auto s = weight_of_storage.find(t.storage().data()); s != weight_of_storage.end()) {
        viewed = &weights[s->second];
      }
    }
    if (const auto it = value_of_impl.find(t.unsafeGetTensorImpl()); it != value_of_impl.end()) {
      if (viewed != nullptr && weight_module.empty())
        weight_module = viewed->module.empty() ? "." : viewed->module;
      return it->second;
    }
    auto weight = weight_of_impl.find(t.unsafeGetTensorImpl());
    if (weight == weight_of_impl.end() && viewed != nullptr) {
      weight = weight_of_impl.find(viewed->tensor.unsafeGetTensorImpl());
    }
    if (weight != weight_of_impl.end()) {
      Weight& w = weights[weight->second];
      if (!w.listed) {
        graph.initializers.push_back(value_of(w.name, w.tensor));
        w.listed = true;
      }
      if (weight_module.empty()) weight_module = w.module.empty() ? "." : w.module;
      return w.name;
    }
    if (t.has_storage()) {
      if (const auto it = value_of_memory.find(memory_key(t)); it != value_of_memory.end()) return it->second;
    }
    std::string name = "input." + std::to_string(graph.inputs.size());
    graph.inputs.push_back(value_of(name, t));
    name_value(t, name);
    return name;
  }

  void add_attribute(GraphNode& node, std::string name, const c10::IValue& v) {
    GraphAttribute a;
    a.name = std::move(name);
    if (v.isBool()) {
      a.value = static_cast<std::int64_t>(v.toBool());
    } else if (v.isInt()) {
      a.value = v.toInt();
    } else if (v.isDouble()) {
      a.value = v.toDouble();
    } else if (v.isString()) {
      a.value = v.toStringRef();
    } else if (v.isIntList()) {
      a.value = v.toIntVector();
    } else if (v.isDoubleList()) {
      a.value = v.toDoubleVector();
    } else if (v.isBoolList()) {
      std::vector<std::int64_t> flags;
      for (const bool b : v.toBoolList()) flags.push_back(b ? 1 : 0);
      a.value = std::move(flags);
    } else if (v.isDevice()) {
      a.value = v.toDevice().str();
    } else {
      return;  // None, generators, layouts given as None, ...: nothing a graph shows
    }
    node.attributes.push_back(std::move(a));
  }

  void start_node(const at::RecordFunction& fn) {
    GraphNode node;
    node.op_type = fn.name();
    node.domain = "aten";
    const auto schema = fn.operator_schema();
    std::string weight_module;
    const auto inputs = fn.inputs();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const c10::IValue& v = inputs[i];
      if (v.isTensor()) {
        node.inputs.push_back(resolve(v.toTensor(), weight_module));
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorVector()) node.inputs.push_back(resolve(t, weight_module));
      } else if (v.isList() && !v.isIntList() && !v.isDoubleList() && !v.isBoolList()) {
        for (const c10::IValue& e : v.toListRef()) {
          if (e.isTensor()) {
            node.inputs.push_back(resolve(e.toTensor(), weight_module));
          } else if (e.isNone()) {
            node.inputs.emplace_back();
          }
        }
      } else {
        const bool has_name = schema && i < schema->arguments().size();
        add_attribute(node, has_name ? schema->arguments()[i].name() : "arg" + std::to_string(i), v);
      }
    }
    if (weight_module == ".") {  // a weight of the root module itself
      node.module.clear();
      last_weight_module.clear();
      after_weight = true;
    } else {
      // Note [Module of an op]: the one decision the adapter and the profiler take too.
      Interner& paths = detail::module_paths();
      detail::ModuleClues clues;
      clues.parameter = paths.intern(weight_module);
      clues.scope = !scopes.empty() ? paths.intern(scopes.back()) : detail::current_scope_id();
      clues.last_parameter = after_weight ? paths.intern(last_weight_module) : 0;
      clues.op = node.op_type;
      node.module = std::string(paths.name(detail::forward_module(tree, clues)));
      if (!weight_module.empty()) {
        last_weight_module = weight_module;
        after_weight = true;
      }
    }
    const std::int64_t n = op_counts[node.op_type]++;
    const std::string own = node.op_type + "_" + std::to_string(n);
    node.name = node.module.empty() ? own : scoped(node.module) + "/" + own;
    graph.nodes.push_back(std::move(node));
  }

  void end_node(const at::RecordFunction& fn, std::size_t index) {
    GraphNode& node = graph.nodes[index];
    std::size_t k = 0;
    auto add = [&](const at::Tensor& t) {
      if (!t.defined()) return;
      const std::string value = k == 0 ? node.name : node.name + ":" + std::to_string(k);
      ++k;
      node.outputs.push_back(value);
      graph.value_info.push_back(value_of(value, t));
      name_value(t, value);
    };
    for (const c10::IValue& v : fn.outputs()) {
      if (v.isTensor()) {
        add(v.toTensor());
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorVector()) add(t);
      }
    }
  }

  void fail(const std::exception* e, const at::RecordFunction& fn) {
    if (failures++ == 0) first_failure = std::string(fn.name()) + (e ? std::string(": ") + e->what() : "");
  }
};

thread_local Trace* t_trace = nullptr;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  Trace* trace = t_trace;
  if (trace == nullptr) return nullptr;
  Frame frame;
  try {
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
      frame.kind = FrameKind::scope;
      trace->scopes.emplace_back(fn.name());
    } else if (trace->op_depth == 0) {
      frame.kind = FrameKind::node;
      frame.node = trace->graph.nodes.size();
      trace->start_node(fn);
      ++trace->op_depth;
    } else {
      ++trace->op_depth;
    }
  } catch (const std::exception& e) {
    trace->fail(&e, fn);
    frame.kind = FrameKind::inner;
    ++trace->op_depth;
  } catch (...) {
    trace->fail(nullptr, fn);
    frame.kind = FrameKind::inner;
    ++trace->op_depth;
  }
  trace->frames.push_back(frame);
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* /*context*/) {
  Trace* trace = t_trace;
  if (trace == nullptr || trace->frames.empty()) return;
  const Frame frame = trace->frames.back();
  trace->frames.pop_back();
  if (frame.kind == FrameKind::scope) {
    if (!trace->scopes.empty()) trace->scopes.pop_back();
    return;
  }
  if (trace->op_depth > 0) --trace->op_depth;
  if (frame.kind != FrameKind::node || frame.node >= trace->graph.nodes.size()) return;
  try {
    trace->end_node(fn, frame.node);
  } catch (const std::exception& e) {
    trace->fail(&e, fn);
  } catch (...) {
    trace->fail(nullptr, fn);
  }
}

// Registers the callback on this thread for the lifetime of the guard.
class CallbackGuard {
 public:
  explicit CallbackGuard(Trace& trace) {
    t_trace = &trace;
    handle_ =
        at::addThreadLocalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                       .needsInputs(true)
                                       .needsOutputs(true)
                                       .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  ~CallbackGuard() {
    at::removeCallback(handle_);
    t_trace = nullptr;
  }
  CallbackGuard(const CallbackGuard&) = delete;
  CallbackGuard& operator=(const CallbackGuard&) = delete;

 private:
  at::CallbackHandle handle_;
};

}  // namespace

ModelGraph trace_graph(::torch::nn::Module& module, const std::function<void()>& forward) {
  if (t_trace != nullptr)
    throw Error("tfdebug::torch::trace_graph: a trace is already running on this thread");
  Trace trace;
  // The module's class name, demangled ("ns::(anonymous namespace)::TransformerLm"): its last part.
  trace.graph.name = module.name();
  if (const auto colons = trace.graph.name.rfind("::"); colons != std::string::npos) {
    trace.graph.name = trace.graph.name.substr(colons + 2);
  }
  trace.graph.producer_name = "tfdebug trace_graph";
  auto add_weight = [&](const std::string& name, const at::Tensor& tensor) {
    if (!tensor.defined() || trace.weight_of_impl.contains(tensor.unsafeGetTensorImpl())) return;
    const std::size_t index = trace.weights.size();
    trace.weights.push_back({name, parent_of(name), tensor, false});
    trace.weight_of_impl.emplace(tensor.unsafeGetTensorImpl(), index);
    if (tensor.has_storage()) trace.weight_of_storage.emplace(tensor.storage().data(), index);
  };
  detail::StorageModules unused;
  detail::map_modules(module, detail::module_paths(), trace.tree, unused);
  for (const auto& p : module.named_parameters(/*recurse=*/true)) add_weight(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true)) add_weight(b.key(), b.value());
  try {
    const CallbackGuard guard(trace);
    forward();
  } catch (const std::exception& e) {
    throw Error(std::string("tfdebug::torch::trace_graph: the forward pass threw: ") + e.what());
  }
  if (trace.failures > 0) {
    throw Error("tfdebug::torch::trace_graph: " + std::to_string(trace.failures) +
                " op(s) could not be recorded; the first: " + trace.first_failure);
  }
  // Outputs: the values no later op read.
  std::map<std::string, bool> read;
  for (const auto& node : trace.graph.nodes) {
    for (const auto& in : node.inputs) read[in] = true;
  }
  for (const auto& v : trace.graph.value_info) {
    if (!read.contains(v.name)) trace.graph.outputs.push_back(v);
  }
  return std::move(trace.graph);
}

}  // namespace tfdebug::torch
