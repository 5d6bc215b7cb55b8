// Words and numbers of the console's and the breakpoints' text.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfdebug::ide::detail {

inline std::string_view trim(std::string_view text) noexcept {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Split at runs of blanks; the views point into `text`.
inline std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t first = text.find_first_not_of(" \t\r\n", at);
    if (first == std::string_view::npos) break;
    std::size_t end = text.find_first_of(" \t\r\n", first);
    if (end == std::string_view::npos) end = text.size();
    words.push_back(text.substr(first, end - first));
    at = end;
  }
  return words;
}

// The whole of `text` as a number, or nullopt.
inline std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

inline std::optional<std::int64_t> parse_integer(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace tfdebug::ide::detail
