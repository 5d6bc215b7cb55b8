#include "tfdebug/ide/tensor_tools.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/tensor.hpp"
#include "words.hpp"

namespace tfdebug::ide {

namespace {

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.5g", v);
  return text;
}

std::string shape_text(TensorView view) {
  std::string out = std::string(dtype_name(view.dtype())) + "[";
  for (int d = 0; d < view.rank(); ++d) out += (d ? ", " : "") + std::to_string(view.shape(d));
  return out + "]";
}

std::int64_t index_number(std::string_view text, std::string_view whole) {
  const auto n = detail::parse_integer(detail::trim(text));
  if (!n)
    throw Error("index " + std::string(whole) + ": '" + std::string(detail::trim(text)) +
                "' is not an integer");
  return *n;
}

}  // namespace

IndexedName split_index(std::string_view text) {
  text = detail::trim(text);
  const std::size_t open = text.find('[');
  if (open == std::string_view::npos) return {std::string(text), {}};
  return {std::string(detail::trim(text.substr(0, open))), std::string(text.substr(open))};
}

TensorView slice(TensorView view, std::string_view index) {
  std::string_view body = detail::trim(index);
  if (body.size() < 2 || body.front() != '[' || body.back() != ']')
    throw Error("index '" + std::string(index) + "': expected [i, a:b, ...]");
  body = body.substr(1, body.size() - 2);
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  while (true) {
    const std::size_t comma = body.find(',', at);
    parts.push_back(detail::trim(body.substr(at, comma == std::string_view::npos ? comma : comma - at)));
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  if (parts.size() == 1 && parts[0].empty()) return view;
  if (int(parts.size()) > view.rank())
    throw Error("index " + std::string(index) + ": " + std::to_string(parts.size()) + " indices for " +
                shape_text(view));
  std::vector<std::int64_t> shape, strides;
  std::int64_t offset = 0;  // in elements
  for (int d = 0; d < view.rank(); ++d) {
    const std::int64_t size = view.shape(d), stride = view.stride(d);
    if (d >= int(parts.size())) {
      shape.push_back(size);
      strides.push_back(stride);
      continue;
    }
    const std::string_view part = parts[std::size_t(d)];
    if (part.find(':') == std::string_view::npos) {
      std::int64_t i = index_number(part, index);
      if (i < 0) i += size;
      if (i < 0 || i >= size)
        throw Error("index " + std::string(index) + ": " + std::string(part) +
                    " is out of range for dimension " + std::to_string(d) + " of size " +
                    std::to_string(size));
      offset += i * stride;
      continue;
    }
    // start:stop[:step], numpy's clamping.
    std::array<std::string_view, 3> fields{};
    std::size_t from = 0;
    int n = 0;
    for (; n < 3; ++n) {
      const std::size_t colon = part.find(':', from);
      fields[std::size_t(n)] =
          detail::trim(part.substr(from, colon == std::string_view::npos ? colon : colon - from));
      if (colon == std::string_view::npos) break;
      from = colon + 1;
    }
    if (n == 3) throw Error("index " + std::string(index) + ": '" + std::string(part) + "' has too many ':'");
    const std::int64_t step = fields[2].empty() ? 1 : index_number(fields[2], index);
    if (step <= 0) throw Error("index " + std::string(index) + ": steps must be positive");
    const auto bound = [&](std::string_view f, std::int64_t fallback) {
      if (f.empty()) return fallback;
      std::int64_t v = index_number(f, index);
      if (v < 0) v += size;
      return std::clamp<std::int64_t>(v, 0, size);
    };
    const std::int64_t start = bound(fields[0], 0), stop = bound(fields[1], size);
    const std::int64_t count = stop > start ? (stop - start + step - 1) / step : 0;
    if (count > 0) offset += start * stride;
    shape.push_back(count);
    strides.push_back(stride * step);
  }
  const auto* base = static_cast<const std::byte*>(view.data()) + offset * std::int64_t(view.element_size());
  return TensorView(base, view.dtype(), shape, strides);
}

std::string stats_text(const Stats& s) {
  std::string out = std::string(dtype_name(s.dtype)) + " count " + std::to_string(s.count);
  if (s.finite() > 0) {
    out += "  min " + number_text(s.min) + "  max " + number_text(s.max) + "  mean " + number_text(s.mean) +
           "  std " + number_text(s.std) + "  abs_max " + number_text(s.abs_max);
  }
  out += "  negative " + std::to_string(s.negative) + "  zero " + std::to_string(s.zero) + "  nan " +
         std::to_string(s.nan) + "  inf " + std::to_string(s.pos_inf + s.neg_inf);
  return out;
}

std::string values_text(TensorView view, int max_values) {
  std::string out = shape_text(view) + " ";
  const std::int64_t total = view.numel();
  if (total == 0) return out + "[]";
  std::vector<std::int64_t> index(std::size_t(view.rank()), 0);
  if (view.rank() == 0) return out + number_text(view.at(std::span<const std::int64_t>(index)));
  if (view.rank() <= 2) {
    const std::int64_t rows = view.rank() == 2 ? view.shape(0) : 1;
    const std::int64_t cols = view.shape(view.rank() - 1);
    int shown = 0;
    if (view.rank() == 2) out += "[";
    for (std::int64_t r = 0; r < rows; ++r) {
      if (r > 0) out += ", ";
      if (shown >= max_values) {
        out += "...";
        break;
      }
      out += "[";
      for (std::int64_t c = 0; c < cols; ++c) {
        if (c > 0) out += ", ";
        if (shown >= max_values || (c >= 8 && c < cols - 2)) {
          out += "...";
          c = std::max(c, cols - 3);
          if (shown >= max_values) break;
          continue;
        }
        if (view.rank() == 2) index[0] = r;
        index.back() = c;
        out += number_text(view.at(std::span<const std::int64_t>(index)));
        ++shown;
      }
      out += "]";
    }
    if (view.rank() == 2) out += "]";
    return out;
  }
  // Higher ranks: the first values in row-major order.
  out += "first values [";
  const std::int64_t n = std::min<std::int64_t>(total, max_values);
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    out += number_text(view.at(std::span<const std::int64_t>(index)));
    for (int d = view.rank() - 1; d >= 0; --d) {
      if (++index[std::size_t(d)] < view.shape(d)) break;
      index[std::size_t(d)] = 0;
    }
  }
  return out + (n < total ? ", ...]" : "]");
}

std::string histogram_text(TensorView view, int bins, int width) {
  if (bins < 1 || bins > 1000) throw Error("hist: expected 1 to 1000 bins, got " + std::to_string(bins));
  const Histogram h = histogram_fixed(view, bins);
  std::int64_t peak = 1;
  for (const std::int64_t c : h.counts) peak = std::max(peak, c);
  std::string out;
  for (std::size_t i = 0; i < h.counts.size() && i + 1 < h.edges.size(); ++i) {
    char label[64];
    std::snprintf(label, sizeof label, "[%11.4g, %11.4g%c %8lld ", h.edges[i], h.edges[i + 1],
                  i + 2 == h.edges.size() ? ']' : ')', static_cast<long long>(h.counts[i]));
    out += label;
    out += std::string(std::size_t(h.counts[i] * width / peak), '#');
    out += '\n';
  }
  if (h.counts.empty()) out += "no finite values\n";
  out += "nan " + std::to_string(h.nan) + "  +inf " + std::to_string(h.pos_inf) + "  -inf " +
         std::to_string(h.neg_inf) + "\n";
  return out;
}

void save_npy(TensorView view, const std::filesystem::path& path) {
  std::string descr;
  DType as = view.dtype();
  switch (view.dtype()) {
    case DType::f64:
      descr = "<f8";
      break;
    case DType::f32:
      descr = "<f4";
      break;
    case DType::f16:
      descr = "<f2";
      break;
    case DType::i8:
      descr = "|i1";
      break;
    case DType::i16:
      descr = "<i2";
      break;
    case DType::i32:
      descr = "<i4";
      break;
    case DType::i64:
      descr = "<i8";
      break;
    case DType::u8:
      descr = "|u1";
      break;
    case DType::boolean:
      descr = "|b1";
      break;
    default:  // bf16, fp8: numpy has no such dtype
      descr = "<f4";
      as = DType::f32;
      break;
  }
  const Tensor data = Tensor::copy_of(view, as);
  std::string shape = "(";
  for (int d = 0; d < view.rank(); ++d)
    shape += std::to_string(view.shape(d)) + (view.rank() == 1 ? "," : d + 1 < view.rank() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error("save: cannot write " + path.string());
  out.write("\x93NUMPY\x01\x00", 8);
  const auto length = static_cast<std::uint16_t>(header.size());
  const char length_bytes[2] = {char(length & 0xff), char(length >> 8)};
  out.write(length_bytes, 2);
  out.write(header.data(), std::streamsize(header.size()));
  out.write(static_cast<const char*>(data.data()),
            std::streamsize(std::size_t(data.numel()) * dtype_size(as)));
  if (!out.flush()) throw Error("save: cannot write " + path.string());
}

}  // namespace tfdebug::ide
