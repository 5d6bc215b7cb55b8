#include "tfdebug/io/gguf_names.hpp"

#include <charconv>

namespace tfdebug::io {
namespace {

struct Rename {
  std::string_view gguf;  // the part after "blk.N." (or the whole name)
  std::string_view hf;    // the part after "model.layers.N." (or the whole name)
};

constexpr Rename kGlobal[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output.weight", "lm_head.weight"},
};

constexpr Rename kPerLayer[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
};

// "blk.12.attn_q.weight" -> {"12", "attn_q.weight"}.
std::optional<std::pair<std::string_view, std::string_view>> split_block(std::string_view name) {
  constexpr std::string_view kPrefix = "blk.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const std::size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos) return std::nullopt;
  int layer = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
  if (ec != std::errc{} || end != name.data() + dot) return std::nullopt;
  return std::make_pair(name.substr(0, dot), name.substr(dot + 1));
}

int metadata_int(const ModelFile& m, const std::string& key) {
  const auto it = m.metadata().find(key);
  if (it == m.metadata().end()) return 0;
  int value = 0;
  const auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  return ec == std::errc{} && end == it->second.data() + it->second.size() ? value : 0;
}

}  // namespace

std::optional<std::string> hf_name_of_gguf(std::string_view gguf_name) {
  for (const Rename& r : kGlobal) {
    if (gguf_name == r.gguf) return std::string(r.hf);
  }
  const auto block = split_block(gguf_name);
  if (!block) return std::nullopt;
  for (const Rename& r : kPerLayer) {
    if (block->second == r.gguf) return "model.layers." + std::string(block->first) + "." + std::string(r.hf);
  }
  return std::nullopt;
}

int gguf_permuted_heads(const ModelFile& gguf, std::string_view gguf_name) {
  const auto arch = gguf.metadata().find("general.architecture");
  if (arch == gguf.metadata().end() || arch->second != "llama") return 0;
  const auto block = split_block(gguf_name);
  if (!block) return 0;
  const int heads = metadata_int(gguf, "llama.attention.head_count");
  if (block->second == "attn_q.weight") return heads;
  if (block->second == "attn_k.weight") {
    const int kv = metadata_int(gguf, "llama.attention.head_count_kv");
    return kv > 0 ? kv : heads;
  }
  return 0;
}

}  // namespace tfdebug::io
