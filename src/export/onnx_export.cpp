// ModelGraph -> ONNX ModelProto (onnx_export.hpp). Field numbers from onnx/onnx.proto
// (../shared/reference/formats.md): ModelProto ir_version 1, producer_name 2, producer_version 3,
// graph 7, opset_import 8; GraphProto node 1, name 2, initializer 5, input 11, output 12,
// value_info 13;
// NodeProto input 1, output 2, name 3, op_type 4, attribute 5, domain 7; AttributeProto name 1,
// f 2, i 3, s 4, t 5, floats 7, ints 8, type 20; ValueInfoProto name 1, type 2; TypeProto
// tensor_type 1 {elem_type 1, shape 2 {dim 1 {dim_value 1, dim_param 2}}}; TensorProto dims 1,
// data_type 2, name 8, raw_data 9.
#include "tfdebug/export/onnx_export.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protobuf.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace {

using detail::ProtoWriter;

constexpr std::int64_t kIrVersion = 8;
constexpr std::int64_t kOpset = 17;
constexpr const char* kCustomDomain = "ai.tfdebug.aten";

enum AttributeType : std::int64_t { kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kFloats = 6, kInts = 7 };

void write_value_info(ProtoWriter& out, std::uint32_t field, const GraphValue& v) {
  ProtoWriter tensor;
  if (v.elem_type != 0) tensor.integer(1, v.elem_type);
  if (v.has_shape) {
    ProtoWriter shape;
    for (const GraphDim& d : v.dims) {
      ProtoWriter dim;
      if (const auto* n = std::get_if<std::int64_t>(&d)) {
        dim.integer(1, *n);
      } else if (const auto* p = std::get_if<std::string>(&d)) {
        dim.bytes(2, *p);
      }
      shape.message(1, dim);
    }
    tensor.message(2, shape);
  }
  ProtoWriter type;
  type.message(1, tensor);
  ProtoWriter info;
  info.bytes(1, v.name);
  info.message(2, type);
  out.message(field, info);
}

// One ONNX node being built: its attributes are encoded AttributeProto messages.
struct OnnxNode {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attributes;

  void attribute_int(const std::string& key, std::int64_t v) {
    ProtoWriter a;
    a.bytes(1, key);
    a.integer(3, v);
    a.integer(20, kInt);
    attributes.push_back(a.str());
  }
  void attribute_float(const std::string& key, double v) {
    ProtoWriter a;
    a.bytes(1, key);
    a.fixed32(2, static_cast<float>(v));
    a.integer(20, kFloat);
    attributes.push_back(a.str());
  }
  void attribute_ints(const std::string& key, const std::vector<std::int64_t>& v) {
    ProtoWriter a;
    a.bytes(1, key);
    for (const auto x : v) a.integer(8, x);
    a.integer(20, kInts);
    attributes.push_back(a.str());
  }
  void attribute_floats(const std::string& key, const std::vector<double>& v) {
    ProtoWriter a;
    a.bytes(1, key);
    for (const auto x : v) a.fixed32(7, static_cast<float>(x));
    a.integer(20, kFloats);
    attributes.push_back(a.str());
  }
  void attribute_string(const std::string& key, const std::string& v) {
    ProtoWriter a;
    a.bytes(1, key);
    a.bytes(4, v);
    a.integer(20, kString);
    attributes.push_back(a.str());
  }
  void attribute_tensor(const std::string& key, const std::string& tensor_proto) {
    ProtoWriter a;
    a.bytes(1, key);
    a.bytes(5, tensor_proto);
    a.integer(20, kTensor);
    attributes.push_back(a.str());
  }

  void write(ProtoWriter& graph) const {
    ProtoWriter n;
    for (const auto& i : inputs) n.bytes(1, i);
    for (const auto& o : outputs) n.bytes(2, o);
    if (!name.empty()) n.bytes(3, name);
    n.bytes(4, op_type);
    for (const auto& a : attributes) n.bytes(5, a);
    if (!domain.empty()) n.bytes(7, domain);
    graph.message(1, n);
  }
};

// TensorProto with raw little-endian data.
std::string tensor_proto(int elem_type, const std::vector<std::int64_t>& dims, const std::string& raw) {
  ProtoWriter t;
  for (const auto d : dims) t.integer(1, d);
  t.integer(2, elem_type);
  t.bytes(9, raw);
  return t.str();
}

template <typename T>
std::string raw_bytes(const std::vector<T>& values) {
  std::string raw(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

// Translates traced aten nodes to ONNX nodes (Note in onnx_export.hpp on the mapping).
class AtenTranslator {
 public:
  explicit AtenTranslator(const ModelGraph& g) {
    for (const auto* list : {&g.inputs, &g.initializers, &g.value_info, &g.outputs}) {
      for (const auto& v : *list) values_[v.name] = &v;
    }
  }

  std::vector<OnnxNode> translate(const GraphNode& n) {
    out_.clear();
    if (n.outputs.empty()) return out_;  // ops that return no tensor (aten::item) draw nothing
    if (!translate_standard(n)) custom(n);
    return out_;
  }
  bool used_custom() const noexcept { return used_custom_; }

 private:
  const GraphAttribute* attribute(const GraphNode& n, const std::string& name) const {
    for (const auto& a : n.attributes) {
      if (a.name == name) return &a;
    }
    return nullptr;
  }
  std::optional<std::int64_t> int_attribute(const GraphNode& n, const std::string& name) const {
    const auto* a = attribute(n, name);
    if (a == nullptr) return std::nullopt;
    if (const auto* i = std::get_if<std::int64_t>(&a->value)) return *i;
    return std::nullopt;
  }
  std::optional<double> number_attribute(const GraphNode& n, const std::string& name) const {
    const auto* a = attribute(n, name);
    if (a == nullptr) return std::nullopt;
    if (const auto* i = std::get_if<std::int64_t>(&a->value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&a->value)) return *d;
    return std::nullopt;
  }
  std::optional<std::vector<std::int64_t>> ints_attribute(const GraphNode& n, const std::string& name) const {
    const auto* a = attribute(n, name);
    if (a == nullptr) return std::nullopt;
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&a->value)) return *v;
    return std::nullopt;
  }
  // The rank of a value, when the graph records its shape.
  std::optional<std::int64_t> rank(const std::string& value) const {
    const auto it = values_.find(value);
    if (it == values_.end() || !it->second->has_shape) return std::nullopt;
    return static_cast<std::int64_t>(it->second->dims.size());
  }
  int elem_type(const std::string& value) const {
    const auto it = values_.find(value);
    return it == values_.end() ? 0 : it->second->elem_type;
  }

  OnnxNode& emit(const GraphNode& n, const std::string& op, std::vector<std::string> inputs,
                 std::vector<std::string> outputs, const std::string& suffix = "") {
    OnnxNode& o = out_.emplace_back();
    o.name = n.name + suffix;
    o.op_type = op;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    return o;
  }

  // A Constant holding one number of the given ONNX type; nullopt for types not written here.
  std::optional<std::string> scalar_constant(const GraphNode& n, double value, int type,
                                             const std::string& suffix) {
    std::string raw;
    switch (type) {
      case 1:
        raw = raw_bytes(std::vector<float>{static_cast<float>(value)});
        break;
      case 11:
        raw = raw_bytes(std::vector<double>{value});
        break;
      case 6:
        raw = raw_bytes(std::vector<std::int32_t>{static_cast<std::int32_t>(value)});
        break;
      case 7:
        raw = raw_bytes(std::vector<std::int64_t>{static_cast<std::int64_t>(value)});
        break;
      default:
        return std::nullopt;
    }
    std::string name = n.name + suffix;
    emit(n, "Constant", {}, {name}, suffix).attribute_tensor("value", tensor_proto(type, {}, raw));
    return name;
  }
  std::string ints_constant(const GraphNode& n, const std::vector<std::int64_t>& values,
                            const std::string& suffix) {
    std::string name = n.name + suffix;
    emit(n, "Constant", {}, {name}, suffix)
        .attribute_tensor("value",
                          tensor_proto(7, {static_cast<std::int64_t>(values.size())}, raw_bytes(values)));
    return name;
  }

  bool elementwise(const GraphNode& n, const std::string& op) {
    if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.size() != 1) return false;
    if (n.op_type.starts_with("aten::add") || n.op_type.starts_with("aten::sub")) {
      const auto alpha = number_attribute(n, "alpha");
      if (alpha && *alpha != 1.0) return false;
    }
    if (attribute(n, "rounding_mode") != nullptr) return false;
    if (n.inputs.size() == 2 && !n.inputs[1].empty()) {
      emit(n, op, {n.inputs[0], n.inputs[1]}, n.outputs);
      return true;
    }
    const auto other = number_attribute(n, "other");
    if (n.inputs.size() != 1 || !other) return false;
    const auto constant = scalar_constant(n, *other, elem_type(n.inputs[0]), "/other");
    if (!constant) return false;
    emit(n, op, {n.inputs[0], *constant}, n.outputs);
    return true;
  }

  bool translate_standard(const GraphNode& n) {
    static const std::map<std::string, std::string> kUnary = {
        {"aten::relu", "Relu"},        {"aten::tanh", "Tanh"},
        {"aten::sigmoid", "Sigmoid"},  {"aten::exp", "Exp"},
        {"aten::log", "Log"},          {"aten::sqrt", "Sqrt"},
        {"aten::neg", "Neg"},          {"aten::abs", "Abs"},
        {"aten::erf", "Erf"},          {"aten::contiguous", "Identity"},
        {"aten::clone", "Identity"},   {"aten::detach", "Identity"},
        {"aten::relu_", "Relu"},       {"aten::tanh_", "Tanh"},
        {"aten::sigmoid_", "Sigmoid"}, {"aten::exp_", "Exp"},
        {"aten::log_", "Log"},         {"aten::sqrt_", "Sqrt"},
        {"aten::neg_", "Neg"},         {"aten::abs_", "Abs"},
    };
    static const std::map<std::string, std::string> kBinary = {
        {"aten::add", "Add"},  {"aten::sub", "Sub"},  {"aten::mul", "Mul"},  {"aten::div", "Div"},
        {"aten::add_", "Add"}, {"aten::sub_", "Sub"}, {"aten::mul_", "Mul"}, {"aten::div_", "Div"}};
    const std::string& op = n.op_type;
    const auto& in = n.inputs;
    const bool one_output = n.outputs.size() == 1;
    if (!one_output) return false;
    if (const auto u = kUnary.find(op); u != kUnary.end()) {
      if (in.empty() || in[0].empty()) return false;
      emit(n, u->second, {in[0]}, n.outputs);
      return true;
    }
    if (const auto b = kBinary.find(op); b != kBinary.end()) return elementwise(n, b->second);
    if (op == "aten::matmul" || op == "aten::mm" || op == "aten::bmm") {
      if (in.size() != 2) return false;
      emit(n, "MatMul", in, n.outputs);
      return true;
    }
    if (op == "aten::addmm") {
      if (in.size() != 3) return false;
      OnnxNode& g = emit(n, "Gemm", {in[1], in[2], in[0]}, n.outputs);
      g.attribute_float("alpha", number_attribute(n, "alpha").value_or(1.0));
      g.attribute_float("beta", number_attribute(n, "beta").value_or(1.0));
      return true;
    }
    if (op == "aten::linear") {
      if (in.size() < 2 || in[0].empty() || in[1].empty()) return false;
      const bool bias = in.size() > 2 && !in[2].empty();
      if (rank(in[0]) == 2 && bias) {
        emit(n, "Gemm", {in[0], in[1], in[2]}, n.outputs).attribute_int("transB", 1);
        return true;
      }
      const std::string wt = n.name + "/weight_t";
      emit(n, "Transpose", {in[1]}, {wt}, "/weight_t").attribute_ints("perm", {1, 0});
      if (!bias) {
        emit(n, "MatMul", {in[0], wt}, n.outputs, "/matmul");
        return true;
      }
      const std::string product = n.name + "/matmul";
      emit(n, "MatMul", {in[0], wt}, {product}, "/matmul");
      emit(n, "Add", {product, in[2]}, n.outputs);
      return true;
    }
    if (op == "aten::softmax" || op == "aten::_softmax" || op == "aten::log_softmax") {
      const auto dim = int_attribute(n, "dim");
      if (in.size() != 1 || !dim) return false;
      emit(n, op == "aten::log_softmax" ? "LogSoftmax" : "Softmax", in, n.outputs)
          .attribute_int("axis", *dim);
      return true;
    }
    if (op == "aten::layer_norm") {
      const auto shape = ints_attribute(n, "normalized_shape");
      if (in.size() < 2 || in[1].empty() || !shape) return false;
      std::vector<std::string> inputs = {in[0], in[1]};
      if (in.size() > 2 && !in[2].empty()) inputs.push_back(in[2]);
      OnnxNode& l = emit(n, "LayerNormalization", inputs, n.outputs);
      l.attribute_int("axis", -static_cast<std::int64_t>(shape->size()));
      l.attribute_float("epsilon", number_attribute(n, "eps").value_or(1e-5));
      return true;
    }
    if (op == "aten::embedding") {
      if (in.size() != 2) return false;
      emit(n, "Gather", {in[0], in[1]}, n.outputs).attribute_int("axis", 0);
      return true;
    }
    if (op == "aten::transpose" || op == "aten::t" || op == "aten::permute") {
      const auto r = rank(in.empty() ? "" : in[0]);
      if (in.size() != 1 || !r) return false;
      std::vector<std::int64_t> perm(static_cast<std::size_t>(*r));
      for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
      auto wrap = [&](std::int64_t d) { return d < 0 ? d + *r : d; };
      if (op == "aten::permute") {
        const auto dims = ints_attribute(n, "dims");
        if (!dims || dims->size() != perm.size()) return false;
        for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = wrap((*dims)[i]);
      } else if (op == "aten::t") {
        if (*r == 2) perm = {1, 0};
      } else {
        const auto d0 = int_attribute(n, "dim0");
        const auto d1 = int_attribute(n, "dim1");
        if (!d0 || !d1 || wrap(*d0) < 0 || wrap(*d0) >= *r || wrap(*d1) < 0 || wrap(*d1) >= *r) return false;
        std::swap(perm[static_cast<std::size_t>(wrap(*d0))], perm[static_cast<std::size_t>(wrap(*d1))]);
      }
      emit(n, "Transpose", in, n.outputs).attribute_ints("perm", perm);
      return true;
    }
    if (op == "aten::view" || op == "aten::reshape" || op == "aten::_unsafe_view") {
      const auto size =
          ints_attribute(n, op == "aten::view" || op == "aten::_unsafe_view" ? "size" : "shape");
      if (in.size() != 1 || !size) return false;
      const std::string shape = ints_constant(n, *size, "/shape");
      OnnxNode& r = emit(n, "Reshape", {in[0], shape}, n.outputs);
      // torch's 0 is an empty dimension; ONNX's 0 copies the input's unless allowzero.
      for (const auto d : *size) {
        if (d == 0) {
          r.attribute_int("allowzero", 1);
          break;
        }
      }
      return true;
    }
    if (op == "aten::cat" || op == "aten::concat") {
      const auto dim = int_attribute(n, "dim");
      if (in.empty() || !dim) return false;
      emit(n, "Concat", in, n.outputs).attribute_int("axis", *dim);
      return true;
    }
    if (op == "aten::dropout") {
      const auto train = int_attribute(n, "train");
      if (in.size() != 1 || !train || *train != 0) return false;
      emit(n, "Identity", in, n.outputs);
      return true;
    }
    return false;
  }

  void custom(const GraphNode& n) {
    used_custom_ = true;
    std::string op = n.op_type;
    if (op.starts_with("aten::")) op = op.substr(6);
    OnnxNode& o = emit(n, op, n.inputs, n.outputs);
    o.domain = kCustomDomain;
    for (const auto& a : n.attributes) {
      if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
        o.attribute_int(a.name, *i);
      } else if (const auto* d = std::get_if<double>(&a.value)) {
        o.attribute_float(a.name, *d);
      } else if (const auto* s = std::get_if<std::string>(&a.value)) {
        o.attribute_string(a.name, *s);
      } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&a.value)) {
        o.attribute_ints(a.name, *is);
      } else if (const auto* ds = std::get_if<std::vector<double>>(&a.value)) {
        o.attribute_floats(a.name, *ds);
      }
    }
  }

  std::map<std::string, const GraphValue*> values_;
  std::vector<OnnxNode> out_;
  bool used_custom_ = false;
};

// The ONNX TensorProto.DataType of a dtype; 0 for fp8, which needs IR 9 (we write IR 8).
int onnx_elem_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 1;
    case DType::u8:
      return 2;
    case DType::i8:
      return 3;
    case DType::i16:
      return 5;
    case DType::i32:
      return 6;
    case DType::i64:
      return 7;
    case DType::boolean:
      return 9;
    case DType::f16:
      return 10;
    case DType::f64:
      return 11;
    case DType::bf16:
      return 16;
    case DType::f8_e4m3fn:
    case DType::f8_e5m2:
      return 0;
  }
  return 0;
}

// Whether `view` is the value `v` declares: its dtype, and every dimension when it has a shape.
bool matches(const GraphValue& v, const TensorView& view) {
  if (v.elem_type == 0 || onnx_elem_type(view.dtype()) != v.elem_type) return false;
  if (!v.has_shape) return true;
  if (v.dims.size() != static_cast<std::size_t>(view.rank())) return false;
  for (int d = 0; d < view.rank(); ++d) {
    const auto* n = std::get_if<std::int64_t>(&v.dims[static_cast<std::size_t>(d)]);
    if (n == nullptr || *n != view.shape(d)) return false;
  }
  return true;
}

// The TensorProto of an initializer: dims, data type, name, raw_data in row-major, little-endian.
std::string initializer_proto(const std::string& name, const TensorView& view) {
  std::string raw(static_cast<std::size_t>(view.numel()) * view.element_size(), '\0');
  if (view.is_contiguous()) {
    if (!raw.empty()) std::memcpy(raw.data(), view.data(), raw.size());
  } else {
    const Tensor copy = Tensor::copy_of(view);
    if (!raw.empty()) std::memcpy(raw.data(), copy.view().data(), raw.size());
  }
  if constexpr (std::endian::native == std::endian::big) {
    const std::size_t size = view.element_size();
    for (std::size_t at = 0; at + size <= raw.size(); at += size)
      std::reverse(raw.begin() + at, raw.begin() + at + size);
  }
  ProtoWriter t;
  for (int d = 0; d < view.rank(); ++d) t.integer(1, view.shape(d));
  t.integer(2, onnx_elem_type(view.dtype()));
  t.bytes(8, name);
  t.bytes(9, raw);
  return t.str();
}

bool is_traced(const ModelGraph& g) {
  for (const auto& n : g.nodes) {
    if (n.domain == "aten") return true;
  }
  return false;
}

}  // namespace

std::string onnx_model_bytes(const ModelGraph& g, const OnnxWriteOptions& options, OnnxWriteStats* stats) {
  const bool traced = is_traced(g);
  ProtoWriter graph;
  bool custom = false;
  if (traced) {
    AtenTranslator translator(g);
    for (const auto& n : g.nodes) {
      for (const OnnxNode& o : translator.translate(n)) o.write(graph);
    }
    custom = translator.used_custom();
  } else {
    for (const auto& n : g.nodes) {
      OnnxNode o{n.name, n.op_type, n.domain, n.inputs, n.outputs, n.onnx_attributes};
      o.write(graph);
    }
  }
  graph.bytes(2, g.name.empty() ? "graph" : g.name);
  // Weights with values become initializers (in the graph's order, within the cap).
  OnnxWriteStats counted;
  std::set<std::string> with_data;
  for (const auto& v : g.initializers) {
    if (with_data.contains(v.name)) continue;
    const std::optional<TensorView> value = options.weights ? options.weights(v.name) : std::nullopt;
    if (!value || !matches(v, *value)) {
      ++counted.weights_shape_only;
      continue;
    }
    const auto bytes = static_cast<std::uint64_t>(value->numel()) * value->element_size();
    if (static_cast<std::uint64_t>(counted.weight_bytes) + bytes > options.max_weight_bytes) {
      ++counted.weights_over_cap;
      continue;
    }
    graph.bytes(5, initializer_proto(v.name, *value));
    with_data.insert(v.name);
    ++counted.weights_written;
    counted.weight_bytes += static_cast<std::int64_t>(bytes);
  }
  if (stats != nullptr) *stats = counted;
  // Inputs: the graph's, then the weights not already listed that have no data (shapes only).
  std::set<std::string> listed;
  for (const auto& v : g.inputs) {
    write_value_info(graph, 11, v);
    listed.insert(v.name);
  }
  for (const auto& v : g.initializers) {
    if (!with_data.contains(v.name) && listed.insert(v.name).second) write_value_info(graph, 11, v);
  }
  listed.insert(with_data.begin(), with_data.end());  // their type is the initializer's
  for (const auto& v : g.outputs) {
    write_value_info(graph, 12, v);
    listed.insert(v.name);
  }
  for (const auto& v : g.value_info) {
    if (!listed.contains(v.name) && v.elem_type != 0) write_value_info(graph, 13, v);
  }

  ProtoWriter model;
  const std::int64_t ir = traced || g.ir_version <= 0 ? kIrVersion : g.ir_version;
  model.integer(1, ir);
  model.bytes(2, g.producer_name.empty() ? "tfdebug" : g.producer_name);
  if (!g.producer_version.empty()) model.bytes(3, g.producer_version);
  model.message(7, graph);
  auto opset = [&](const std::string& domain, std::int64_t version) {
    ProtoWriter o;
    if (!domain.empty()) o.bytes(1, domain);
    o.integer(2, version);
    model.message(8, o);
  };
  if (traced) {
    opset("", kOpset);
    if (custom) opset(kCustomDomain, 1);
  } else {
    for (const auto& o : g.opsets) opset(o.domain, o.version);
  }
  return model.str();
}

void write_onnx_model(const ModelGraph& graph, const std::string& path, const OnnxWriteOptions& options,
                      OnnxWriteStats* stats) {
  const std::string bytes = onnx_model_bytes(graph, options, stats);
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    throw Error(path + ": cannot write");
  }
}

}  // namespace tfdebug
