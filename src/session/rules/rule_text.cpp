#include "rule_text.hpp"

#include <cmath>
#include <cstdio>

namespace tfdebug::detail {

std::string num(double value) {
  if (std::isnan(value)) return "nan";  // never "-nan": the sign of a NaN means nothing
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

std::string where(std::string_view module, std::string_view op) {
  if (module.empty()) return std::string(op.empty() ? "<top level>" : op);
  if (op.empty()) return std::string(module);
  return std::string(op) + " in " + std::string(module);
}

std::string at_step(Phase phase, std::int64_t step) {
  return " (" + std::string(phase_name(phase)) + ", step " + std::to_string(step) + ")";
}

Finding make_finding(std::string_view rule, Severity severity, std::int64_t step, Phase phase,
                     std::string_view module, std::string_view op) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  f.step = step;
  f.last_step = step;
  f.phase = phase;
  f.module = module;
  f.op = op;
  return f;
}

bool contains_word(std::string_view text, std::string_view word) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  if (word.empty()) return true;
  for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
    if (lower(text[i]) != word[0]) continue;
    std::size_t j = 1;
    while (j < word.size() && lower(text[i + j]) == word[j]) ++j;
    if (j == word.size()) return true;
  }
  return false;
}

}  // namespace tfdebug::detail
