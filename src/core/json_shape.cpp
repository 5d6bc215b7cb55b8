#include "tfdebug/core/json_shape.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tfdebug {

JsonShape json_shape(std::string_view text) {
  constexpr std::size_t kArray = SIZE_MAX;  // an open array; else the keys of an open object so far
  JsonShape shape;
  std::vector<std::size_t> open;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? 0 : kArray);
      shape.depth = std::max(shape.depth, open.size());
    } else if ((c == '}' || c == ']') && !open.empty()) {
      open.pop_back();
    } else if (c == ':' && !open.empty() && open.back() != kArray) {
      shape.max_keys = std::max(shape.max_keys, ++open.back());
    }
  }
  return shape;
}

}  // namespace tfdebug
