// safetensors: u64 LE header length N, N bytes of JSON, then the tensor bytes.
// Validation follows the format's own rules (../shared/reference/formats.md): N <= 100,000,000;
// the header is a JSON object with unique keys; every tensor's [begin, end) lies in the data,
// matches numel * element size, and, sorted by begin, the tensors tile the data exactly (no gaps,
// no overlaps, no trailing bytes).
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypes[] = {
    {"F64", DType::f64},           {"F32", DType::f32},         {"F16", DType::f16}, {"BF16", DType::bf16},
    {"F8_E4M3", DType::f8_e4m3fn}, {"F8_E5M2", DType::f8_e5m2}, {"I8", DType::i8},   {"I16", DType::i16},
    {"I32", DType::i32},           {"I64", DType::i64},         {"U8", DType::u8},   {"BOOL", DType::boolean},
};

DType parse_dtype_name(const std::string& origin, const std::string& tensor, const std::string& name) {
  for (const DTypeName& d : kDTypes) {
    if (name == d.name) return d.dtype;
  }
  fail(origin, "tensor '" + tensor + "' has dtype '" + name +
                   "', which tfdebug does not read (it reads F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I8 I16 I32 "
                   "I64 U8 BOOL)");
}

std::int64_t as_count(const std::string& origin, const std::string& what, const nlohmann::ordered_json& v) {
  if (!v.is_number_unsigned()) fail(origin, what + " must be a non-negative integer, got " + v.dump());
  const auto value = v.get<std::uint64_t>();
  if (value > static_cast<std::uint64_t>(INT64_MAX)) fail(origin, what + " " + v.dump() + " is too large");
  return static_cast<std::int64_t>(value);
}

struct Range {
  std::uint64_t begin, end;
  std::string name;
};

}  // namespace

void read_safetensors(const std::string& origin, std::span<const std::byte> bytes,
                      std::vector<NamedTensor>& out, std::map<std::string, std::string>& metadata) {
  if (bytes.size() < 8) {
    fail(origin, "truncated: " + std::to_string(bytes.size()) +
                     " bytes, but a safetensors file starts with an 8-byte header length");
  }
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i)
    header_size = (header_size << 8) | static_cast<std::uint8_t>(bytes[std::size_t(i)]);
  if (header_size > kMaxHeader) {
    fail(origin, "header length " + std::to_string(header_size) + " exceeds the format's limit of 100000000");
  }
  if (8 + header_size > bytes.size()) {
    fail(origin, "header length " + std::to_string(header_size) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  }
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  const std::string_view header(header_begin, header_size);

  // Parse, refusing duplicate keys in the top-level object (nlohmann would keep the last).
  std::set<std::string> seen;
  std::string duplicate;
  nlohmann::ordered_json::parser_callback_t check =
      [&](int depth, nlohmann::ordered_json::parse_event_t event, nlohmann::ordered_json& parsed) {
        if (event == nlohmann::ordered_json::parse_event_t::key && depth == 1 &&
            !seen.insert(parsed.get<std::string>()).second && duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        return true;
      };
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(header.begin(), header.end(), check);
  } catch (const nlohmann::json::exception& e) {
    fail(origin, std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) fail(origin, "header names '" + duplicate + "' twice");
  if (!json.is_object()) fail(origin, "header must be a JSON object, got " + std::string(json.type_name()));

  const std::span<const std::byte> data = bytes.subspan(8 + header_size);
  std::vector<Range> ranges;
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail(origin, "__metadata__ must be an object of strings");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail(origin, "__metadata__ value of '" + key + "' must be a string");
        metadata[key] = value.get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets")) {
      fail(origin, what + " must be an object with dtype, shape and data_offsets");
    }
    if (!entry["dtype"].is_string()) fail(origin, what + ": dtype must be a string");
    const DType dtype = parse_dtype_name(origin, name, entry["dtype"].get<std::string>());
    const auto& shape_json = entry["shape"];
    if (!shape_json.is_array() || shape_json.size() > static_cast<std::size_t>(kMaxRank)) {
      fail(origin, what + ": shape must be an array of at most " + std::to_string(kMaxRank) + " dimensions");
    }
    std::vector<std::int64_t> shape;
    for (const auto& d : shape_json) shape.push_back(as_count(origin, what + " shape dimension", d));
    const auto& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
      fail(origin, what + ": data_offsets must be [begin, end]");
    const auto begin = static_cast<std::uint64_t>(as_count(origin, what + " data_offsets begin", offsets[0]));
    const auto end = static_cast<std::uint64_t>(as_count(origin, what + " data_offsets end", offsets[1]));
    const std::int64_t numel = checked_numel(shape, origin + ": " + what);
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(numel), dtype_size(dtype), &expected)) {
      fail(origin, what + ": the byte size of its shape overflows");
    }
    if (end < begin || end - begin != expected) {
      fail(origin, what + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                       "] hold " + std::to_string(end >= begin ? end - begin : 0) +
                       " bytes, but its shape and dtype need " + std::to_string(expected));
    }
    if (end > data.size()) {
      fail(origin, what + ": data_offsets end " + std::to_string(end) + " is past the end of the data (" +
                       std::to_string(data.size()) + " bytes)");
    }
    ranges.push_back({begin, end, name});
    out.push_back({name, origin, TensorView(data.data() + begin, dtype, shape)});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t position = 0;
  for (const Range& r : ranges) {
    if (r.begin < position) fail(origin, "tensor '" + r.name + "' overlaps the tensor before it in the data");
    if (r.begin > position) {
      fail(origin,
           "a gap of " + std::to_string(r.begin - position) + " bytes precedes tensor '" + r.name + "'");
    }
    position = r.end;
  }
  if (position != data.size()) {
    fail(origin, std::to_string(data.size() - position) +
                     " bytes follow the last tensor; the header accounts for " + std::to_string(position) +
                     " of " + std::to_string(data.size()));
  }
}

}  // namespace tfdebug::io::detail
