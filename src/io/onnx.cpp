// ONNX: a .onnx file is one serialized protobuf ModelProto (proto2), with no framing.
// Field numbers and DataType ids: ../shared/reference/formats.md, sections 0 and 7.
//
// Note [Protobuf by hand]: io reads the wire format itself instead of linking libprotobuf.
// libprotobuf would copy every raw_data into a std::string (a multi-GB model held twice in memory)
// and refuses messages over 2 GB; reading by hand, raw_data becomes a TensorView straight into the
// mapped file, memory stays bounded by the tensors that need decoding (typed fields), and the
// parser is small enough to fuzz. Every length is checked against its enclosing message before
// use, nothing is allocated from an unchecked count, and subgraph nesting is capped
// (kMaxGraphDepth), so hostile input cannot exhaust the stack.
//
// Note [ONNX tensors]: the tensors reported are every graph initializer, of the main graph and of
// every subgraph (GRAPH/GRAPHS attributes of any node: If branches, Loop and Scan bodies, at any
// depth), and the value of every Constant node (its `value` tensor, or `value_float(s)` /
// `value_int(s)` as f32/i64 tensors), named by the node's first output. Tensors of other
// attributes (ConstantOfShape's `value`, ...), sparse tensors, and tensors of model-local
// functions are not reported. Element types tfdebug has no DType for (STRING, COMPLEX64/128,
// UINT16/32/64, the FNUZ float8 types, 4-bit types) and string or sparse Constant values are
// skipped and counted in the metadata key "onnx.skipped_tensors".
#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "quote.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

static_assert(std::endian::native == std::endian::little, "typed ONNX fields are decoded little-endian");

constexpr int kMaxGraphDepth = 32;

enum Wire : std::uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

const char* wire_name(std::uint32_t wire) {
  switch (wire) {
    case kVarint:
      return "varint";
    case kFixed64:
      return "64-bit";
    case kLength:
      return "length-delimited";
    case kFixed32:
      return "32-bit";
    default:
      return "invalid";
  }
}

struct Field {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;
  std::uint64_t value = 0;           // varint, 32-bit and 64-bit fields
  std::span<const std::byte> bytes;  // length-delimited fields
};

std::string to_string(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The fields of one message, in order. `where` names the message in error messages.
class FieldReader {
 public:
  // `where` is copied: callers pass temporaries such as node_where + ".attribute".
  FieldReader(const std::string& origin, std::string where, std::span<const std::byte> bytes)
      : origin_(origin), where_(std::move(where)), bytes_(bytes) {}

  bool next(Field& f) {
    if (pos_ == bytes_.size()) return false;
    const std::uint64_t key = varint("a field key");
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire = static_cast<std::uint32_t>(key & 7);
    if (f.number == 0 || (key >> 3) > 0x1FFFFFFF) {
      problem("invalid field number " + std::to_string(key >> 3) + " at byte " + std::to_string(start_));
    }
    switch (f.wire) {
      case kVarint:
        f.value = varint("field " + std::to_string(f.number));
        break;
      case kFixed64:
        f.value = fixed(8, f.number);
        break;
      case kFixed32:
        f.value = fixed(4, f.number);
        break;
      case kLength: {
        const std::uint64_t length = varint("the length of field " + std::to_string(f.number));
        if (length > bytes_.size() - pos_) {
          problem("field " + std::to_string(f.number) + " claims " + std::to_string(length) +
                  " bytes, but its message has " + std::to_string(bytes_.size() - pos_) + " left");
        }
        f.bytes = bytes_.subspan(pos_, static_cast<std::size_t>(length));
        pos_ += static_cast<std::size_t>(length);
        break;
      }
      default:
        problem("field " + std::to_string(f.number) + " has wire type " + std::to_string(f.wire) +
                ", which ONNX does not use (only varint, 64-bit, length-delimited and 32-bit)");
    }
    return true;
  }

  // Fails unless `f` has wire type `wire`; `name` is the field's name in the .proto.
  void expect(const Field& f, std::uint32_t wire, const char* name) const {
    if (f.wire != wire) {
      problem(std::string(name) + " (field " + std::to_string(f.number) + ") has wire type " +
              wire_name(f.wire) + ", expected " + wire_name(wire));
    }
  }

  [[noreturn]] void problem(const std::string& what) const { fail(origin_, where_ + ": " + what); }

 private:
  std::uint64_t varint(const std::string& what) {
    start_ = pos_;
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size()) problem(what + ": the varint is truncated at the end of its message");
      const auto byte = static_cast<std::uint8_t>(bytes_[pos_++]);
      if (shift == 63 && byte > 1) problem(what + ": the varint overflows 64 bits");
      value |= std::uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    problem(what + ": the varint is longer than 10 bytes");
  }

  std::uint64_t fixed(std::size_t size, std::uint32_t number) {
    if (bytes_.size() - pos_ < size) {
      problem("field " + std::to_string(number) + ": " + std::to_string(size) + "-byte value is truncated");
    }
    std::uint64_t value = 0;
    for (std::size_t i = size; i-- > 0;) value = (value << 8) | static_cast<std::uint8_t>(bytes_[pos_ + i]);
    pos_ += size;
    return value;
  }

  const std::string& origin_;
  std::string where_;
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;
};

// How a repeated scalar field encodes each value.
enum class Encoding { varint, fixed32, fixed64 };

Wire wire_of(Encoding e) {
  return e == Encoding::varint ? kVarint : e == Encoding::fixed32 ? kFixed32 : kFixed64;
}

// Calls emit(value) for every value of the repeated scalar field `number` of `message`, in
// order, whether packed (one length-delimited field) or not (one field per value), or both.
template <class Emit>
void for_each_value(const std::string& origin, const std::string& where, std::span<const std::byte> message,
                    std::uint32_t number, Encoding encoding, const char* name, Emit emit) {
  FieldReader fields(origin, where, message);
  Field f;
  while (fields.next(f)) {
    if (f.number != number) continue;
    if (f.wire == kLength) {  // packed
      const std::string packed_where = where + "." + name;
      if (encoding != Encoding::varint) {
        const std::size_t size = encoding == Encoding::fixed32 ? 4 : 8;
        if (f.bytes.size() % size != 0) {
          fail(origin, packed_where + ": packed field of " + std::to_string(f.bytes.size()) +
                           " bytes is not a whole number of " + std::to_string(size) + "-byte values");
        }
        for (std::size_t i = 0; i < f.bytes.size(); i += size) {
          std::uint64_t value = 0;
          for (std::size_t b = size; b-- > 0;)
            value = (value << 8) | static_cast<std::uint8_t>(f.bytes[i + b]);
          emit(value);
        }
        continue;
      }
      // A packed run of varints.
      std::size_t pos = 0;
      while (pos < f.bytes.size()) {
        std::uint64_t value = 0;
        int shift = 0;
        for (;; shift += 7) {
          if (pos == f.bytes.size()) fail(origin, packed_where + ": a packed varint is truncated");
          if (shift > 63) fail(origin, packed_where + ": a packed varint is longer than 10 bytes");
          const auto byte = static_cast<std::uint8_t>(f.bytes[pos++]);
          if (shift == 63 && byte > 1) fail(origin, packed_where + ": a packed varint overflows 64 bits");
          value |= std::uint64_t{byte & 0x7Fu} << shift;
          if ((byte & 0x80) == 0) break;
        }
        emit(value);
      }
      continue;
    }
    fields.expect(f, wire_of(encoding), name);
    emit(f.value);
  }
}

std::size_t count_values(const std::string& origin, const std::string& where,
                         std::span<const std::byte> message, std::uint32_t number, Encoding encoding,
                         const char* name) {
  std::size_t n = 0;
  for_each_value(origin, where, message, number, encoding, name, [&](std::uint64_t) { ++n; });
  return n;
}

// ONNX TensorProto.DataType ids and what tfdebug makes of them.
struct OnnxType {
  int id;
  const char* name;
  bool readable;  // false: tfdebug has no DType for it; such tensors are skipped and counted
  DType dtype;
};
constexpr OnnxType kTypes[] = {
    {1, "FLOAT", true, DType::f32},
    {2, "UINT8", true, DType::u8},
    {3, "INT8", true, DType::i8},
    {4, "UINT16", false, DType::u8},
    {5, "INT16", true, DType::i16},
    {6, "INT32", true, DType::i32},
    {7, "INT64", true, DType::i64},
    {8, "STRING", false, DType::u8},
    {9, "BOOL", true, DType::boolean},
    {10, "FLOAT16", true, DType::f16},
    {11, "DOUBLE", true, DType::f64},
    {12, "UINT32", false, DType::u8},
    {13, "UINT64", false, DType::u8},
    {14, "COMPLEX64", false, DType::u8},
    {15, "COMPLEX128", false, DType::u8},
    {16, "BFLOAT16", true, DType::bf16},
    {17, "FLOAT8E4M3FN", true, DType::f8_e4m3fn},
    {18, "FLOAT8E4M3FNUZ", false, DType::u8},
    {19, "FLOAT8E5M2", true, DType::f8_e5m2},
    {20, "FLOAT8E5M2FNUZ", false, DType::u8},
    {21, "UINT4", false, DType::u8},
    {22, "INT4", false, DType::u8},
    {23, "FLOAT4E2M1", false, DType::u8},
};

const OnnxType* find_type(std::int64_t id) {
  for (const OnnxType& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

// The typed field ONNX stores a readable type's values in when there is no raw_data.
struct TypedField {
  std::uint32_t number;
  const char* name;
  Encoding encoding;
};
TypedField typed_field(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return {4, "float_data", Encoding::fixed32};
    case DType::f64:
      return {10, "double_data", Encoding::fixed64};
    case DType::i64:
      return {7, "int64_data", Encoding::varint};
    default:  // i32, i16, i8, u8, bool, f16 and bf16 bit patterns, float8 bit patterns
      return {5, "int32_data", Encoding::varint};
  }
}

std::string shape_text(std::span<const std::int64_t> dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::uint64_t parse_decimal(const std::string& origin, const std::string& where, const std::string& key,
                            const std::string& text) {
  if (text.empty() || text.size() > 19 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail(origin, where + ": external_data " + escape_text(key) + " " + quote(text) +
                     " is not a non-negative decimal number");
  }
  return std::stoull(text);
}

class OnnxReader {
 public:
  OnnxReader(const std::string& origin, const ExternalData& external, std::vector<NamedTensor>& out,
             OwnedBuffers& owned, ModelGraph& graph)
      : origin_(origin), external_(external), out_(out), owned_(owned), graph_(graph) {}

  void read_model(std::span<const std::byte> bytes, std::map<std::string, std::string>& metadata) {
    const std::string where = "ModelProto";
    FieldReader fields(origin_, where, bytes);
    Field f;
    std::span<const std::byte> graph_bytes;
    bool has_graph = false;
    std::map<std::string, std::string> props;
    while (fields.next(f)) {
      switch (f.number) {
        case 1:
          fields.expect(f, kVarint, "ir_version");
          graph_.ir_version = static_cast<std::int64_t>(f.value);
          break;
        case 2:
          fields.expect(f, kLength, "producer_name");
          graph_.producer_name = to_string(f.bytes);
          break;
        case 3:
          fields.expect(f, kLength, "producer_version");
          graph_.producer_version = to_string(f.bytes);
          break;
        case 7:
          fields.expect(f, kLength, "graph");
          if (has_graph) fields.problem("more than one graph field");
          graph_bytes = f.bytes;
          has_graph = true;
          break;
        case 8:
          fields.expect(f, kLength, "opset_import");
          graph_.opsets.push_back(read_opset(f.bytes));
          break;
        case 14: {
          fields.expect(f, kLength, "metadata_props");
          const auto [key, value] = read_string_pair(f.bytes, "metadata_props");
          props[key] = value;
          break;
        }
        default:
          break;  // domain, model_version, doc_string, training_info, functions, unknown fields
      }
    }
    // A file that begins like a ModelProto (ir_version, then a ModelProto field) but holds no
    // graph is not an empty model: it is damaged or not ONNX at all.
    if (!has_graph)
      fail(origin_,
           "an ONNX ModelProto with no graph (field 7), which holds a model's operators and weights");
    read_graph(graph_bytes, "graph", 0);
    metadata.insert(props.begin(), props.end());
    metadata["onnx.ir_version"] = std::to_string(graph_.ir_version);
    metadata["onnx.producer_name"] = graph_.producer_name;
    metadata["onnx.producer_version"] = graph_.producer_version;
    std::string opsets;
    for (const OpsetImport& o : graph_.opsets) {
      opsets += (opsets.empty() ? "" : " ") + (o.domain.empty() ? std::string("ai.onnx") : o.domain) + "=" +
                std::to_string(o.version);
    }
    metadata["onnx.opset_import"] = opsets;
    metadata["onnx.skipped_tensors"] = std::to_string(skipped_);
    if (skipped_ > 0) {
      std::string reasons;
      for (const auto& [reason, n] : skipped_reasons_) {
        reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(n);
      }
      metadata["onnx.skipped_tensor_types"] = reasons;
    }
  }

 private:
  OpsetImport read_opset(std::span<const std::byte> bytes) {
    const std::string where = "opset_import";
    FieldReader fields(origin_, where, bytes);
    Field f;
    OpsetImport o;
    while (fields.next(f)) {
      if (f.number == 1) {
        fields.expect(f, kLength, "domain");
        o.domain = to_string(f.bytes);
      } else if (f.number == 2) {
        fields.expect(f, kVarint, "version");
        o.version = static_cast<std::int64_t>(f.value);
      }
    }
    return o;
  }

  std::pair<std::string, std::string> read_string_pair(std::span<const std::byte> bytes,
                                                       const std::string& where) {
    FieldReader fields(origin_, where, bytes);
    Field f;
    std::pair<std::string, std::string> kv;
    while (fields.next(f)) {
      if (f.number == 1) {
        fields.expect(f, kLength, "key");
        kv.first = to_string(f.bytes);
      } else if (f.number == 2) {
        fields.expect(f, kLength, "value");
        kv.second = to_string(f.bytes);
      }
    }
    return kv;
  }

  void read_graph(std::span<const std::byte> bytes, const std::string& where, int depth) {
    if (depth > kMaxGraphDepth) {
      fail(origin_, where + ": subgraphs nested more than " + std::to_string(kMaxGraphDepth) + " deep");
    }
    const bool main = depth == 0;
    FieldReader fields(origin_, where, bytes);
    Field f;
    // Initializers first, then the nodes (whose Constant values and subgraphs follow).
    std::size_t initializers = 0;
    while (fields.next(f)) {
      switch (f.number) {
        case 2:
          fields.expect(f, kLength, "name");
          if (main) graph_.name = to_string(f.bytes);
          break;
        case 5:
          fields.expect(f, kLength, "initializer");
          read_tensor(f.bytes, where + ".initializer[" + std::to_string(initializers++) + "]", "", main);
          break;
        case 15:
          fields.expect(f, kLength, "sparse_initializer");
          skip("sparse");
          break;
        case 11:
        case 12:
        case 13: {
          fields.expect(f, kLength, "input/output/value_info");
          if (!main) break;
          std::vector<GraphValue>& list = f.number == 11   ? graph_.inputs
                                          : f.number == 12 ? graph_.outputs
                                                           : graph_.value_info;
          list.push_back(read_value_info(f.bytes, where + ".value_info"));
          break;
        }
        default:
          break;
      }
    }
    FieldReader nodes(origin_, where, bytes);
    std::size_t index = 0;
    while (nodes.next(f)) {
      if (f.number != 1) continue;
      nodes.expect(f, kLength, "node");
      read_node(f.bytes, where + ".node[" + std::to_string(index++) + "]", depth);
    }
  }

  GraphValue read_value_info(std::span<const std::byte> bytes, const std::string& where) {
    GraphValue v;
    FieldReader fields(origin_, where, bytes);
    Field f;
    while (fields.next(f)) {
      if (f.number == 1) {
        fields.expect(f, kLength, "name");
        v.name = to_string(f.bytes);
      } else if (f.number == 2) {
        fields.expect(f, kLength, "type");
        read_type(f.bytes, where + " " + quote(v.name) + ".type", v);
      }
    }
    return v;
  }

  // TypeProto: only tensor_type is described; sequences, maps and optionals keep elem_type 0.
  void read_type(std::span<const std::byte> bytes, const std::string& where, GraphValue& v) {
    FieldReader fields(origin_, where, bytes);
    Field f;
    while (fields.next(f)) {
      if (f.number != 1) continue;
      fields.expect(f, kLength, "tensor_type");
      FieldReader tensor(origin_, where, f.bytes);
      Field t;
      while (tensor.next(t)) {
        if (t.number == 1) {
          tensor.expect(t, kVarint, "elem_type");
          v.elem_type = static_cast<int>(static_cast<std::int32_t>(t.value));
        } else if (t.number == 2) {
          tensor.expect(t, kLength, "shape");
          v.has_shape = true;
          v.dims.clear();
          FieldReader shape(origin_, where, t.bytes);
          Field d;
          while (shape.next(d)) {
            if (d.number != 1) continue;
            shape.expect(d, kLength, "dim");
            GraphDim dim;
            FieldReader dim_fields(origin_, where, d.bytes);
            Field x;
            while (dim_fields.next(x)) {
              if (x.number == 1) {
                dim_fields.expect(x, kVarint, "dim_value");
                dim = static_cast<std::int64_t>(x.value);
              } else if (x.number == 2) {
                dim_fields.expect(x, kLength, "dim_param");
                dim = to_string(x.bytes);
              }
            }
            v.dims.push_back(std::move(dim));
          }
        }
      }
    }
  }

  void read_node(std::span<const std::byte> bytes, const std::string& where, int depth) {
    GraphNode node;
    FieldReader fields(origin_, where, bytes);
    Field f;
    while (fields.next(f)) {
      switch (f.number) {
        case 1:
          fields.expect(f, kLength, "input");
          node.inputs.push_back(to_string(f.bytes));
          break;
        case 2:
          fields.expect(f, kLength, "output");
          node.outputs.push_back(to_string(f.bytes));
          break;
        case 3:
          fields.expect(f, kLength, "name");
          node.name = to_string(f.bytes);
          break;
        case 4:
          fields.expect(f, kLength, "op_type");
          node.op_type = to_string(f.bytes);
          break;
        case 7:
          fields.expect(f, kLength, "domain");
          node.domain = to_string(f.bytes);
          break;
        case 5:
          fields.expect(f, kLength, "attribute");
          node.onnx_attributes.emplace_back(reinterpret_cast<const char*>(f.bytes.data()), f.bytes.size());
          break;
        default:
          break;
      }
    }
    // Note [Quoted input]: names in the context of errors are cut short, so that the context of
    // each of a node's many attributes costs the same however long the node's name is.
    const std::string named = where + " " + quote(node.name) + " (" + escape_text(node.op_type) + ")";
    const bool constant = node.op_type == "Constant" && (node.domain.empty() || node.domain == "ai.onnx");
    FieldReader attributes(origin_, named, bytes);
    while (attributes.next(f)) {
      if (f.number == 5) read_attribute(f.bytes, named, node, constant, depth);
    }
    if (depth == 0) {
      graph_.nodes.push_back(std::move(node));
    } else {
      ++graph_.subgraph_nodes;
    }
  }

  void read_attribute(std::span<const std::byte> bytes, const std::string& node_where, const GraphNode& node,
                      bool constant, int depth) {
    std::string name;
    FieldReader fields(origin_, node_where + ".attribute", bytes);
    Field f;
    while (fields.next(f)) {
      if (f.number == 1) {
        fields.expect(f, kLength, "name");
        name = to_string(f.bytes);
      }
    }
    const std::string where = node_where + "." + escape_text(name);
    const std::string& output = node.outputs.empty() ? node.name : node.outputs.front();
    FieldReader values(origin_, where, bytes);
    std::size_t graphs = 0;
    bool has_value = false;
    while (values.next(f)) {
      switch (f.number) {
        case 6:  // g: a subgraph (If branches, Loop and Scan bodies)
          values.expect(f, kLength, "g");
          read_graph(f.bytes, where, depth + 1);
          break;
        case 11:  // graphs
          values.expect(f, kLength, "graphs");
          read_graph(f.bytes, where + "[" + std::to_string(graphs++) + "]", depth + 1);
          break;
        case 5:  // t
          values.expect(f, kLength, "t");
          if (constant && name == "value") {
            read_tensor(f.bytes, where, output);
            has_value = true;
          }
          break;
        case 2:  // f
          values.expect(f, kFixed32, "f");
          if (constant && name == "value_float") {
            const auto bits = static_cast<std::uint32_t>(f.value);
            add_owned(output, DType::f32, {}, &bits, sizeof bits);
            has_value = true;
          }
          break;
        case 3:  // i
          values.expect(f, kVarint, "i");
          if (constant && name == "value_int") {
            const std::uint64_t v = f.value;
            add_owned(output, DType::i64, {}, &v, sizeof v);
            has_value = true;
          }
          break;
        default:
          break;
      }
    }
    if (!constant || has_value) return;
    if (name == "value_floats" || name == "value_ints") {
      const bool floats = name == "value_floats";
      const std::uint32_t number = floats ? 7 : 8;
      const Encoding encoding = floats ? Encoding::fixed32 : Encoding::varint;
      const char* field = floats ? "floats" : "ints";
      const std::size_t count = count_values(origin_, where, bytes, number, encoding, field);
      const std::size_t size = floats ? 4 : 8;
      std::vector<std::byte>& buffer = owned_.allocate(count * size, origin_);
      std::size_t i = 0;
      for_each_value(origin_, where, bytes, number, encoding, field, [&](std::uint64_t v) {
        if (floats) {
          const auto bits = static_cast<std::uint32_t>(v);
          std::memcpy(buffer.data() + 4 * i++, &bits, 4);
        } else {
          std::memcpy(buffer.data() + 8 * i++, &v, 8);
        }
      });
      const std::int64_t dims[] = {static_cast<std::int64_t>(count)};
      out_.push_back({output, origin_, TensorView(buffer.data(), floats ? DType::f32 : DType::i64, dims)});
    } else if (name == "value_string" || name == "value_strings") {
      skip("STRING");
    } else if (name == "sparse_value") {
      skip("sparse");
    }
  }

  void add_owned(const std::string& name, DType dtype, std::span<const std::int64_t> dims, const void* data,
                 std::size_t size) {
    std::vector<std::byte>& buffer = owned_.allocate(size, origin_);
    std::memcpy(buffer.data(), data, size);
    out_.push_back({name, origin_, TensorView(buffer.data(), dtype, dims)});
  }

  void skip(const std::string& reason) {
    ++skipped_;
    ++skipped_reasons_[reason];
  }

  // A TensorProto. `name` overrides the tensor's own name (a Constant node's output).
  // `initializer`: a main-graph initializer, also listed in ModelGraph::initializers.
  void read_tensor(std::span<const std::byte> bytes, const std::string& where, const std::string& name,
                   bool initializer = false) {
    std::vector<std::int64_t> dims;
    std::int64_t data_type = 0;
    std::string own_name;
    bool has_raw = false;
    std::span<const std::byte> raw;
    std::uint64_t location = 0;
    std::vector<std::pair<std::string, std::string>> external;
    FieldReader fields(origin_, where, bytes);
    Field f;
    while (fields.next(f)) {
      switch (f.number) {
        case 2:
          fields.expect(f, kVarint, "data_type");
          data_type = static_cast<std::int32_t>(f.value);
          break;
        case 8:
          fields.expect(f, kLength, "name");
          own_name = to_string(f.bytes);
          break;
        case 9:
          fields.expect(f, kLength, "raw_data");
          has_raw = true;
          raw = f.bytes;
          break;
        case 13:
          fields.expect(f, kLength, "external_data");
          external.push_back(read_string_pair(f.bytes, where + ".external_data"));
          break;
        case 14:
          fields.expect(f, kVarint, "data_location");
          location = f.value;
          break;
        default:
          break;
      }
    }
    const std::string tensor_name = name.empty() ? own_name : name;
    const std::string named = where + " " + quote(tensor_name);
    for_each_value(origin_, named, bytes, 1, Encoding::varint, "dims", [&](std::uint64_t v) {
      const auto dim = static_cast<std::int64_t>(v);
      if (dim < 0)
        fail(origin_, named + ": dims[" + std::to_string(dims.size()) + "] is " + std::to_string(dim));
      if (dims.size() == static_cast<std::size_t>(kMaxRank)) {
        fail(origin_, named + ": more than " + std::to_string(kMaxRank) + " dims; tfdebug reads up to rank " +
                          std::to_string(kMaxRank));
      }
      dims.push_back(dim);
    });
    const OnnxType* type = find_type(data_type);
    if (type == nullptr) {
      fail(origin_,
           named + ": data_type " + std::to_string(data_type) + " is not an ONNX tensor type (1-23)");
    }
    const std::int64_t numel = checked_numel(dims, origin_ + ": " + named);
    if (initializer) {
      GraphValue& value = graph_.initializers.emplace_back();
      value.name = tensor_name;
      value.elem_type = static_cast<int>(data_type);
      value.has_shape = true;
      value.dims.assign(dims.begin(), dims.end());
    }
    if (!type->readable) {
      skip(type->name);
      return;
    }
    const std::size_t size = dtype_size(type->dtype);
    std::size_t needed = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel), size, &needed)) {
      fail(origin_, named + ": the byte size of " + type->name + " " + shape_text(dims) + " overflows");
    }
    const std::string what =
        std::string(type->name) + " " + shape_text(dims) + " needs " + std::to_string(needed) + " bytes";
    if (location == 1) {
      const std::span<const std::byte> data = external_bytes(named, external, needed, what);
      out_.push_back({tensor_name, origin_, TensorView(data.data(), type->dtype, dims)});
      return;
    }
    if (location != 0)
      fail(origin_, named + ": data_location " + std::to_string(location) + " is not 0 or 1");
    if (has_raw) {
      if (raw.size() != needed) {
        fail(origin_, named + ": raw_data has " + std::to_string(raw.size()) + " bytes, but " + what);
      }
      out_.push_back({tensor_name, origin_, TensorView(raw.data(), type->dtype, dims)});
      return;
    }
    read_typed(bytes, named, tensor_name, *type, dims, static_cast<std::size_t>(numel));
  }

  // Values in the typed field of the tensor's type, decoded into memory the ModelFile owns.
  void read_typed(std::span<const std::byte> bytes, const std::string& named, const std::string& tensor_name,
                  const OnnxType& type, std::span<const std::int64_t> dims, std::size_t numel) {
    const TypedField field = typed_field(type.dtype);
    const std::size_t count = count_values(origin_, named, bytes, field.number, field.encoding, field.name);
    if (count != numel) {
      fail(origin_, named + ": " + type.name + " " + shape_text(dims) + " needs " + std::to_string(numel) +
                        " values, but " + field.name + " holds " + std::to_string(count) +
                        (count == 0 ? " (and there is no raw_data or external data)" : ""));
    }
    const std::size_t size = dtype_size(type.dtype);
    std::vector<std::byte>& buffer = owned_.allocate(numel * size, origin_);
    std::byte* p = buffer.data();
    // Integers narrower than the field keep their low bytes (little-endian): int32_data holds
    // int8/uint8/int16/bool values and the bit patterns of f16, bf16 and float8.
    for_each_value(origin_, named, bytes, field.number, field.encoding, field.name, [&](std::uint64_t v) {
      std::memcpy(p, &v, size);
      p += size;
    });
    out_.push_back({tensor_name, origin_, TensorView(buffer.data(), type.dtype, dims)});
  }

  std::span<const std::byte> external_bytes(const std::string& named,
                                            const std::vector<std::pair<std::string, std::string>>& entries,
                                            std::size_t needed, const std::string& what) {
    std::string location;
    std::uint64_t offset = 0;
    std::optional<std::uint64_t> length;
    for (const auto& [key, value] : entries) {
      if (key == "location") {
        location = value;
      } else if (key == "offset") {
        offset = parse_decimal(origin_, named, key, value);
      } else if (key == "length") {
        length = parse_decimal(origin_, named, key, value);
      }
    }
    if (location.empty()) fail(origin_, named + ": external data without a location");
    const std::filesystem::path path(location);
    const bool escapes = std::any_of(path.begin(), path.end(), [](const auto& part) { return part == ".."; });
    if (path.is_absolute() || escapes || location.find('\0') != std::string::npos) {
      fail(origin_, named + ": external data location " + quote(location) +
                        " must be a relative path inside the model's folder");
    }
    std::span<const std::byte> file;
    try {
      file = external_(path.lexically_normal().string());
    } catch (const Error& e) {
      fail(origin_, named + ": external data: " + e.what());
    }
    if (offset > file.size()) {
      fail(origin_, named + ": external data offset " + std::to_string(offset) + " is past the end of " +
                        location + " (" + std::to_string(file.size()) + " bytes)");
    }
    const std::uint64_t available = file.size() - offset;
    const std::uint64_t used = length.value_or(available);
    if (used > available) {
      fail(origin_, named + ": external data offset " + std::to_string(offset) + " + length " +
                        std::to_string(used) + " runs past the end of " + location + " (" +
                        std::to_string(file.size()) + " bytes)");
    }
    if (used != needed) {
      fail(origin_,
           named + ": external data in " + location + " has " + std::to_string(used) + " bytes, but " + what);
    }
    return file.subspan(static_cast<std::size_t>(offset), needed);
  }

  const std::string& origin_;
  const ExternalData& external_;
  std::vector<NamedTensor>& out_;
  OwnedBuffers& owned_;
  ModelGraph& graph_;
  std::size_t skipped_ = 0;
  std::map<std::string, std::size_t> skipped_reasons_;
};

}  // namespace

void read_onnx(const std::string& origin, std::span<const std::byte> bytes, const ExternalData& external,
               std::vector<NamedTensor>& out, std::map<std::string, std::string>& metadata,
               OwnedBuffers& owned, ModelGraph& graph) {
  OnnxReader(origin, external, out, owned, graph).read_model(bytes, metadata);
}

bool starts_like_onnx(std::span<const std::byte> bytes) {
  // ir_version (field 1, varint) comes first in every serializer's output, and is small.
  if (bytes.size() < 3 || static_cast<std::uint8_t>(bytes[0]) != 0x08) return false;
  const auto ir_version = static_cast<std::uint8_t>(bytes[1]);
  if (ir_version == 0 || ir_version > 0x40) return false;
  // The next key is a ModelProto field with its wire type: producer_name (2), producer_version
  // (3), domain (4), doc_string (6), graph (7), opset_import (8), metadata_props (14), all
  // length-delimited, or model_version (5, varint).
  switch (static_cast<std::uint8_t>(bytes[2])) {
    case 0x12:
    case 0x1A:
    case 0x22:
    case 0x28:
    case 0x32:
    case 0x3A:
    case 0x42:
    case 0x72:
      return true;
    default:
      return false;
  }
}

bool is_onnx(std::span<const std::byte> bytes) {
  if (!starts_like_onnx(bytes)) return false;
  // Every top-level field must be well-formed (known ModelProto fields with their wire types),
  // there must be a graph, and the last field must end exactly at the end of the file. Length-delimited
  // contents are skipped, so this reads a few dozen keys even for a multi-GB model.
  const std::string origin = "sniff";
  const std::string where;
  FieldReader fields(origin, where, bytes);
  Field f;
  bool has_graph = false;
  try {
    while (fields.next(f)) {
      switch (f.number) {
        case 1:
        case 5:
          if (f.wire != kVarint) return false;
          break;
        case 7:
          has_graph = true;
          if (f.wire != kLength) return false;
          break;
        case 2:
        case 3:
        case 4:
        case 6:
        case 8:
        case 14:
        case 20:
        case 25:
          if (f.wire != kLength) return false;
          break;
        default:
          break;  // a field of a newer ONNX: well-formed is enough
      }
    }
  } catch (const Error&) {
    return false;
  }
  return has_graph;
}

}  // namespace tfdebug::io::detail
