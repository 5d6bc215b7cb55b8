// What the built-in rules share to write their findings: numbers in messages, where an
// observation was, and a Finding with its place filled in. Private to tfdebug::session.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tfdebug/session/finding.hpp"

namespace tfdebug::detail {

// A number as a message shows it: three significant digits ("0.0123", "1.5e+04").
std::string num(double value);
// "aten::log in blocks.1.mlp", "blocks.1.mlp", or "<top level>".
std::string where(std::string_view module, std::string_view op);
// " (forward, step 12)".
std::string at_step(Phase phase, std::int64_t step);
Finding make_finding(std::string_view rule, Severity severity, std::int64_t step, Phase phase,
                     std::string_view module, std::string_view op);
// Whether `text` contains the lower-case ASCII `word`, ignoring the case of ASCII letters: no
// allocation, no locale (it runs for forward outputs).
bool contains_word(std::string_view text, std::string_view word);

}  // namespace tfdebug::detail
