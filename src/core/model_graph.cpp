#include "tfdebug/core/model_graph.hpp"

namespace tfdebug {
namespace {

// ONNX TensorProto.DataType ids to tfdebug's dtype names.
const char* onnx_type_name(int id) {
  switch (id) {
    case 1:
      return "f32";
    case 2:
      return "u8";
    case 3:
      return "i8";
    case 4:
      return "u16";
    case 5:
      return "i16";
    case 6:
      return "i32";
    case 7:
      return "i64";
    case 8:
      return "string";
    case 9:
      return "bool";
    case 10:
      return "f16";
    case 11:
      return "f64";
    case 12:
      return "u32";
    case 13:
      return "u64";
    case 16:
      return "bf16";
    default:
      return "?";
  }
}

}  // namespace

std::string graph_value_text(const GraphValue& v) {
  std::string s = onnx_type_name(v.elem_type);
  if (!v.has_shape) return s;
  s += "[";
  for (std::size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    if (const auto* n = std::get_if<std::int64_t>(&v.dims[i])) {
      s += std::to_string(*n);
    } else if (const auto* p = std::get_if<std::string>(&v.dims[i])) {
      s += *p;
    } else {
      s += "?";
    }
  }
  return s + "]";
}

}  // namespace tfdebug
