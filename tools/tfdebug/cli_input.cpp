#include "cli_input.hpp"

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "safe_text.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::cli {

// "a,b,c" -> {"a", "b", "c"} (fields kept as written; an empty text gives none).
std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  if (text.empty()) return names;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    names.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

// Numbers from text: a CSV line or file ("5.1,3.5,1.4,0.2", one row a line; a first line that
// is not all numbers is a header and skipped). tfdebug::Error naming `what` and the bad field.
std::vector<std::vector<float>> csv_rows(const std::string& text, const std::string& what,
                                         std::string* header) {
  std::vector<std::vector<float>> rows;
  std::istringstream lines(text);
  std::size_t line_number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<float> row;
    bool numeric = true;
    std::string bad;
    for (std::string field : split_names(line)) {
      field.erase(0, field.find_first_not_of(" \t"));
      field.erase(field.find_last_not_of(" \t") + 1);
      float value = 0;
      const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
      if (field.empty() || ec != std::errc() || ptr != field.data() + field.size()) {
        numeric = false;
        bad = field;
        break;
      }
      row.push_back(value);
    }
    if (!numeric) {
      if (rows.empty() && line_number == 1) {  // a header
        if (header != nullptr) *header = line;
        continue;
      }
      throw Error(what + ": line " + std::to_string(line_number) + ": '" + terminal_safe(bad) +
                  "' is not a number (expected comma-separated numbers)");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A .npy file's one array as f32 values, and its shape.
std::vector<float> npy_values(const std::string& path, std::vector<std::int64_t>* shape) {
  const io::ModelFile file = io::ModelFile::open(path);
  if (file.tensors().size() != 1) throw Error(path + ": expected one array");
  const io::NamedTensor& t = file.tensors().front();
  if (t.quantized) throw Error(path + ": a block-quantised array cannot be an input");
  const Tensor values = Tensor::copy_of(t.view, DType::f32);
  if (shape != nullptr) shape->assign(t.view.shape().begin(), t.view.shape().end());
  return {values.values<float>().begin(), values.values<float>().end()};
}

// Rows of numbers from a .npy file (f32/f64/integers; the last dimensions are one example) or
// a CSV file; `numel` values a row.
std::vector<float> read_rows(const std::string& path, std::int64_t numel, const std::string& what) {
  std::vector<float> out;
  if (path.ends_with(".npy")) {
    out = npy_values(path);
  } else {
    for (const auto& row : csv_rows(read_text(path), path)) {
      if (static_cast<std::int64_t>(row.size()) != numel) {
        throw Error(path + ": a row of " + std::to_string(row.size()) + " numbers; the model takes " +
                    std::to_string(numel) + " (" + what + ")");
      }
      out.insert(out.end(), row.begin(), row.end());
    }
  }
  if (out.empty() || out.size() % static_cast<std::size_t>(numel) != 0) {
    throw Error(path + ": " + std::to_string(out.size()) + " values are not whole examples of " +
                std::to_string(numel) + " (" + what + ")");
  }
  return out;
}

// The input: a .npy file, a CSV file of one row, or the row itself ("5.1,3.5,1.4,0.2"), with its
// shape (a .npy's own, without a leading 1; a row's is [n]).
Input read_input(const std::string& spec) {
  Input in;
  if (spec.starts_with("tok:")) {  // token ids: lime explains the tokens
    in.tokens = true;
    for (const std::string& field : split_names(spec.substr(4))) {
      std::int64_t id = 0;
      const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), id);
      if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() || id < 0)
        throw Error("--input: '" + terminal_safe(field) + "' is not a token id (tok:3,5,1)");
      in.values.push_back(static_cast<float>(id));
    }
    in.shape = {static_cast<std::int64_t>(in.values.size())};
    return in;
  }
  if (spec.ends_with(".npy")) {
    in.values = npy_values(spec, &in.shape);
    if (in.shape.size() > 1 && in.shape.front() == 1) {
      in.shape.erase(in.shape.begin());
      in.dropped_one = true;
    }
    if (in.shape.empty()) in.shape = {1};
    return in;
  }
  const bool file = std::filesystem::exists(spec);
  const auto rows = csv_rows(file ? read_text(spec) : spec, file ? spec : "--input", &in.header);
  if (rows.size() != 1) {
    throw Error((file ? spec : std::string("--input")) + ": expected one row of numbers, got " +
                std::to_string(rows.size()) + " rows");
  }
  in.values = rows.front();
  in.shape = {static_cast<std::int64_t>(in.values.size())};
  return in;
}

// Note: a .npy of version 1.0 (numpy.lib.format): magic, header length, a dict padded to 64 bytes.
void write_npy(const std::string& path, const std::vector<float>& values,
               const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (const std::int64_t d : shape) dims += std::to_string(d) + ", ";
  // "(3,)" for one dimension, "(3, 4)" for more.
  if (!dims.empty()) dims.pop_back();
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded with spaces to a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  const auto length = static_cast<std::uint16_t>(header.size());
  const char len[2] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(len, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!out) throw Error(path + ": cannot write");
}

}  // namespace tfdebug::cli
