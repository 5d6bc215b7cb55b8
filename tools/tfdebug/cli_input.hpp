// Inputs of the commands that run a model on data (explain, attack, robust): .npy arrays, CSV rows (a
// header line is taken as names), or one row written on the command line. tfdebug::Error naming
// the file and what was expected for anything malformed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfdebug::cli {

// "a,b,c" -> {"a", "b", "c"} (fields kept as written; an empty text gives none).
std::vector<std::string> split_names(const std::string& text);

// Numbers from text: a CSV line or file ("5.1,3.5,1.4,0.2", one row a line; a first line that
// is not all numbers is a header, skipped and stored in *header). `what` names the source.
std::vector<std::vector<float>> csv_rows(const std::string& text, const std::string& what,
                                         std::string* header = nullptr);

// A file's bytes; tfdebug::Error when it cannot be opened.
std::string read_text(const std::string& path);

// A .npy file's one array as f32 values, and its shape.
std::vector<float> npy_values(const std::string& path, std::vector<std::int64_t>* shape = nullptr);

// Rows of numbers from a .npy file (f32/f64/integers; the last dimensions are one example) or
// a CSV file; `numel` values a row.
std::vector<float> read_rows(const std::string& path, std::int64_t numel, const std::string& what);

// The input: a .npy file, a CSV file of one row, the row itself ("5.1,3.5,1.4,0.2"), or token
// ids ("tok:3,5,1"), with its shape (a .npy's own, without a leading 1; a row's is [n]).
struct Input {
  std::vector<float> values;
  std::vector<std::int64_t> shape;
  std::string header;        // a CSV file's header line: the features' names
  bool tokens = false;       // tok:...: token ids
  bool dropped_one = false;  // a .npy's leading 1 left out of `shape` (a batch of one, or one channel)
};
Input read_input(const std::string& spec);

// Writes f32 `values` of `shape` as a .npy file (version 1.0, little-endian, C order) that
// numpy.load reads; tfdebug::Error naming the file when it cannot be written.
void write_npy(const std::string& path, const std::vector<float>& values,
               const std::vector<std::int64_t>& shape);

}  // namespace tfdebug::cli
