#include "array_input.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "safe_text.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::cli {

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

std::vector<float> npy_values(const std::string& path, std::vector<std::int64_t>* shape) {
  const io::ModelFile file = io::ModelFile::open(path);
  if (file.tensors().size() != 1) throw Error(path + ": expected one array");
  const io::NamedTensor& t = file.tensors().front();
  if (t.quantized) throw Error(path + ": a block-quantised array cannot be an input");
  const Tensor values = Tensor::copy_of(t.view, DType::f32);
  if (shape != nullptr) shape->assign(t.view.shape().begin(), t.view.shape().end());
  return {values.values<float>().begin(), values.values<float>().end()};
}

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

}  // namespace tfdebug::cli

namespace tfdebug::cli {

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
