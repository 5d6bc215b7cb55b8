// llama.cpp's GGUF tensor names and layouts, for comparing a GGUF export with the Hugging Face
// checkpoint it came from. llama.cpp renames tensors (model.layers.3.self_attn.q_proj.weight
// becomes blk.3.attn_q.weight) and, for the "llama" architecture, permutes the rows of the
// query and key projections inside each head: GGUF rows [h, j, t] (j < head_dim/2, t < 2) hold
// Hugging Face rows [h, t, j], so that rotary pairs are adjacent.
//
//   tfdebug::io::hf_name_of_gguf("blk.3.attn_q.weight");   // "model.layers.3.self_attn.q_proj.weight"
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io {

// The Hugging Face (transformers) name of a llama.cpp tensor name, or nullopt for names
// outside the table (token_embd, output_norm, output, blk.N.attn_{norm,q,k,v,output},
// blk.N.ffn_{norm,gate,up,down}).
std::optional<std::string> hf_name_of_gguf(std::string_view gguf_name);

// For blk.N.attn_q / attn_k of an architecture whose export permutes them ("llama"): the
// number of heads (llama.attention.head_count, or head_count_kv for keys) to undo; else 0.
int gguf_permuted_heads(const ModelFile& gguf, std::string_view gguf_name);

}  // namespace tfdebug::io
