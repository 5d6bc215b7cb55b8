// Numbers from the user's files for the commands that run models (explain, attack): .npy arrays
// and CSV rows, with errors that name the file and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tfdebug::cli {

// "a,b,c" -> {"a", "b", "c"} (fields kept as written; an empty text gives none).
std::vector<std::string> split_names(const std::string& text);

// Numbers from text: a CSV line or file ("5.1,3.5,1.4,0.2", one row a line; a first line that
// is not all numbers is a header, skipped and kept in *header). tfdebug::Error naming `what` and
// the bad field.
std::vector<std::vector<float>> csv_rows(const std::string& text, const std::string& what,
                                         std::string* header = nullptr);

// A file's bytes; tfdebug::Error when it cannot be opened.
std::string read_text(const std::string& path);

// A .npy file's one array as f32 values, and its shape.
std::vector<float> npy_values(const std::string& path, std::vector<std::int64_t>* shape = nullptr);

// Rows of numbers from a .npy file (f32/f64/integers; the last dimensions are one example) or
// a CSV file; `numel` values a row.
std::vector<float> read_rows(const std::string& path, std::int64_t numel, const std::string& what);

}  // namespace tfdebug::cli

namespace tfdebug::cli {

// Writes f32 `values` of `shape` as a .npy file (version 1.0, little-endian, C order) that
// numpy.load reads; tfdebug::Error naming the file when it cannot be written.
void write_npy(const std::string& path, const std::vector<float>& values,
               const std::vector<std::int64_t>& shape);

}  // namespace tfdebug::cli
