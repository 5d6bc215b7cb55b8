// Block-quantised tensors (GGUF's ggml formats): values stored as small integers in fixed-size
// blocks that carry their own f16 scale (and minimum). The stats kernel reads them by decoding
// one chunk of blocks at a time into f32, never the whole tensor.
//
//   tfdebug::QuantizedView q{tfdebug::BlockFormat::q4_0, bytes, {4096, 4096}};
//   tfdebug::Stats s = tfdebug::compute_stats(q);        // statistics of the decoded values
//   std::vector<float> row(4096);
//   tfdebug::dequantize(q.format, q.data, 4096 / 32, row.data());   // the first row
//
// Block layouts (ggml's, little-endian; d and m are IEEE f16):
//   q8_0  32 values, 34 bytes:  d, int8 q[32];                      x = q·d
//   q4_0  32 values, 18 bytes:  d, u8 q[16] (value j: low nibble of q[j], j+16: high); x = (q-8)·d
//   q4_1  32 values, 20 bytes:  d, m, u8 q[16];                     x = q·d + m
//   q5_0  32 values, 22 bytes:  d, u32 qh, u8 q[16]; the 5th bit of value j is bit j of qh;
//                                                                   x = (q-16)·d
//   q5_1  32 values, 24 bytes:  d, m, u32 qh, u8 q[16];             x = q·d + m
//   q4_k 256 values, 144 bytes: d, dmin, 12 bytes of eight 6-bit (scale, min) pairs, u8 q[128];
//                               sub-block i of 32: x = d·scale_i·q - dmin·min_i
//   q5_k 256 values, 176 bytes: as q4_k with u8 qh[32] before q: the 5th bit of value l of
//                               group g is bit 2g (first 32) or 2g+1 (next 32) of qh[l]
//   q6_k 256 values, 210 bytes: u8 ql[128] (low 4 bits), u8 qh[64] (high 2 bits), int8
//                               scales[16] (one per 16 values), d;  x = d·scale·(q-32)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tfdebug {

enum class BlockFormat : std::uint8_t { q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k };

struct BlockFormatInfo {
  BlockFormat format;
  std::string_view name;  // "q4_0", ... (ggml's names in lower case)
  int block_elements;     // values per block
  int block_bytes;        // bytes per block
};

const BlockFormatInfo& block_format_info(BlockFormat format) noexcept;
std::span<const BlockFormatInfo> block_formats() noexcept;
// "q4_0", "Q4_0", ...; nullopt for anything else.
std::optional<BlockFormat> parse_block_format(std::string_view name) noexcept;

// A row-major tensor of blocks. Rows (the last dimension) are whole numbers of blocks, so
// element i is value i % block_elements of block i / block_elements.
struct QuantizedView {
  BlockFormat format = BlockFormat::q8_0;
  const std::byte* data = nullptr;
  std::vector<std::int64_t> shape;  // numpy order: the last dimension is contiguous

  std::int64_t numel() const noexcept;
  std::int64_t blocks() const noexcept;
  std::size_t bytes() const noexcept;
};

// Decodes `blocks` consecutive blocks at `data` into blocks × block_elements floats.
void dequantize(BlockFormat format, const std::byte* data, std::int64_t blocks, float* out) noexcept;

}  // namespace tfdebug
