// How deep a JSON text nests and how many keys its largest object holds, found by one scan of the
// text before it is parsed.
//
//   const tfdebug::JsonShape shape = tfdebug::json_shape(text);
//   if (shape.depth > 4) throw tfdebug::Error(path + ": nested deeper than 4 levels");
//
// A recursive parser given a file of 100,000 '[' runs out of stack, and nlohmann's depth callback
// costs the square of an object's siblings; readers of files that may be hostile (report.json,
// metrics.jsonl, a run's analyses) bound both on this scan instead. It reads strings and their
// escapes, so brackets inside a string do not count; it does not check that the text is JSON.
#pragma once

#include <cstddef>
#include <string_view>

namespace tfdebug {

struct JsonShape {
  std::size_t depth = 0;     // the deepest nesting of objects and arrays (a scalar: 0, [1]: 1)
  std::size_t max_keys = 0;  // the most keys of any one object
};

JsonShape json_shape(std::string_view text);

}  // namespace tfdebug
