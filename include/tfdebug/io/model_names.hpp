// Conventions of parameter names, shared by the checkpoint commands and rules (inspect, diff):
// the layer number in a name, and the guesses the checkpoint rules make from a name (an embedding
// table, a normalisation's scale), which no file format records.
//
//   tfdebug::io::layer_index("model.layers.3.self_attn.q_proj.weight");   // 3
//   tfdebug::io::is_embedding_name("transformer.wte.weight");              // true
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tfdebug::io {

// The layer number of a parameter name: the first dotted integer component, as in
// "layers.3.attn.q.weight", "h.3.mlp.c_fc.weight" or "3.weight". None for "embed.weight".
std::optional<int> layer_index(const std::string& name);

// An embedding table's name (embed, wte, token_embd): rows are tokens, whose input is one-hot, so
// neither fan-in scale nor all-zero columns say anything about it.
bool is_embedding_name(std::string_view name);
// A normalisation's parameters (norm, ln_): scales start at 1 and biases at 0 by design.
bool is_norm_name(std::string_view name);

}  // namespace tfdebug::io
