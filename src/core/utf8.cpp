#include "tfdebug/core/utf8.hpp"

namespace tfdebug {

Utf8Step next_utf8(std::string_view text, std::size_t pos) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return {lead, 1, true};
  // The continuation bytes a lead byte takes, and the range of the first one (Unicode 15,
  // table 3-7: the bounds that exclude overlong forms, surrogates and code points past U+10FFFF).
  std::size_t extra = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  char32_t code_point = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    extra = 1;
    code_point = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    extra = 2;
    code_point = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    extra = 3;
    code_point = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {0, 1, false};  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  for (std::size_t k = 1; k <= extra; ++k) {
    const std::size_t i = pos + k;
    if (i >= text.size()) return {0, k, false};
    const unsigned char c = byte(i);
    const bool fits = k == 1 ? c >= low && c <= high : c >= 0x80 && c <= 0xBF;
    if (!fits) return {0, k, false};
    code_point = (code_point << 6) | (c & 0x3Fu);
  }
  return {code_point, extra + 1, true};
}

}  // namespace tfdebug
