// UTF-8 read one code point at a time, for the writers that must stay valid JSON or safe on a
// terminal whatever bytes a file's names hold. An invalid sequence is reported as its maximal
// subpart (Unicode 15, section 3.9: the bytes that start a well-formed sequence and stop where it
// breaks, at least one), so a writer that substitutes U+FFFD for each invalid step writes what
// Python's bytes.decode("utf-8", "replace") gives.
//
//   for (std::size_t i = 0; i < text.size();) {
//     const tfdebug::Utf8Step step = tfdebug::next_utf8(text, i);
//     if (step.valid) use(step.code_point); else use_bytes(text.substr(i, step.length));
//     i += step.length;
//   }
#pragma once

#include <cstddef>
#include <string_view>

namespace tfdebug {

struct Utf8Step {
  char32_t code_point = 0;  // meaningful when valid
  std::size_t length = 0;   // bytes this step covers: 1 to 4, never past the end of the text
  bool valid = false;
};

// The code point (or invalid bytes) at byte `pos` of `text`; pos < text.size().
Utf8Step next_utf8(std::string_view text, std::size_t pos) noexcept;

}  // namespace tfdebug
