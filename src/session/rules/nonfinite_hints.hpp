// What to do about a NaN or Inf an op produced, by what the op is (Note [What the op says] in
// nonfinite_hints.cpp). Private to tfdebug::session.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tfdebug/core/phase.hpp"

namespace tfdebug::detail {

struct MadeValues {
  std::int64_t nan = 0;
  std::int64_t pos_inf = 0;
  std::int64_t neg_inf = 0;
};

// The suggestion for a producer: from finite inputs, or (`from_infinities`) a NaN from inputs
// that held +-Inf; `node`: a backward op's autograd node ("SqrtBackward0"), "" when not known.
// "" when the op says nothing more than the general advice.
std::string producer_hint(std::string_view op, Phase phase, MadeValues made, bool from_infinities,
                          std::string_view node = {});

}  // namespace tfdebug::detail
