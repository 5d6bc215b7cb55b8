// Conventions of parameter names shared by the checkpoint commands (inspect, diff).
#pragma once

#include <optional>
#include <string>

namespace tfdebug::cli {

// The layer number of a parameter name: the first dotted integer component, as in
// "layers.3.attn.q.weight", "h.3.mlp.c_fc.weight" or "3.weight". None for "embed.weight".
std::optional<int> layer_index(const std::string& name);

}  // namespace tfdebug::cli
