// Decoders for ggml's block formats (layouts in quantized.hpp). Plain loops over one block at a
// time that the compiler vectorises; the stats driver calls them one chunk of blocks at a time.
#include "tfdebug/core/quantized.hpp"

#include <array>
#include <cctype>
#include <cstring>

#include "tfdebug/core/dtype.hpp"

namespace tfdebug {
namespace {

constexpr std::array<BlockFormatInfo, 8> kFormats{{
    {BlockFormat::q4_0, "q4_0", 32, 18},
    {BlockFormat::q4_1, "q4_1", 32, 20},
    {BlockFormat::q5_0, "q5_0", 32, 22},
    {BlockFormat::q5_1, "q5_1", 32, 24},
    {BlockFormat::q8_0, "q8_0", 32, 34},
    {BlockFormat::q4_k, "q4_k", 256, 144},
    {BlockFormat::q5_k, "q5_k", 256, 176},
    {BlockFormat::q6_k, "q6_k", 256, 210},
}};

float half_at(const std::byte* p) noexcept {
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return f16_to_f32(bits);
}

std::uint32_t u32_at(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

const std::uint8_t* bytes_at(const std::byte* p) noexcept {
  return reinterpret_cast<const std::uint8_t*>(p);
}

void q8_0(const std::byte* b, float* y) noexcept {
  const float d = half_at(b);
  const auto* q = reinterpret_cast<const std::int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j]) * d;
}

// The 32-value formats q4_0, q4_1, q5_0 and q5_1: d, then m (kMin), then the fifth bits
// (kFifthBit: value j's is bit j of the u32 qh), then 16 bytes of nibbles (value j: low nibble
// of q[j]; value j+16: high nibble). Without a minimum the values are centred: q - 8 or q - 16.
template <bool kMin, bool kFifthBit>
void legacy_quant(const std::byte* b, float* y) noexcept {
  const float d = half_at(b);
  const float m = kMin ? half_at(b + 2) : 0.0f;
  const std::byte* after = b + (kMin ? 4 : 2);
  const std::uint32_t qh = kFifthBit ? u32_at(after) : 0;
  const std::uint8_t* q = bytes_at(after + (kFifthBit ? 4 : 0));
  constexpr int kCentre = kMin ? 0 : (kFifthBit ? 16 : 8);
  for (int j = 0; j < 16; ++j) {
    const int lo = (q[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (q[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    if constexpr (kMin) {
      y[j] = static_cast<float>(lo) * d + m;
      y[j + 16] = static_cast<float>(hi) * d + m;
    } else {
      y[j] = static_cast<float>(lo - kCentre) * d;
      y[j + 16] = static_cast<float>(hi - kCentre) * d;
    }
  }
}

// Eight 6-bit (scale, min) pairs packed in 12 bytes: pairs 0-3 in the low 6 bits of bytes 0-3
// (scales) and 4-7 (mins); pairs 4-7 take their low 4 bits from bytes 8-11 and their top 2 bits
// from the top of bytes 0-3 (scales) and 4-7 (mins).
void k4_scale_min(int i, const std::uint8_t* s, int& scale, int& min) noexcept {
  if (i < 4) {
    scale = s[i] & 63;
    min = s[i + 4] & 63;
  } else {
    scale = (s[i + 4] & 0x0F) | ((s[i - 4] >> 6) << 4);
    min = (s[i + 4] >> 4) | ((s[i] >> 6) << 4);
  }
}

// Four groups of 64 values; each group's 32 bytes of q give its first 32 values (low nibbles,
// pair 2g) and its next 32 (high nibbles, pair 2g+1). q5_k adds a fifth bit from qh[32]:
// bit 2g of qh[l] for value l of the first half, bit 2g+1 for the second.
template <bool kFifthBit>
void k_quant(const std::byte* b, float* y) noexcept {
  const float d = half_at(b);
  const float dmin = half_at(b + 2);
  const std::uint8_t* scales = bytes_at(b + 4);
  const std::uint8_t* qh = bytes_at(b + 16);
  const std::uint8_t* q = bytes_at(b + (kFifthBit ? 48 : 16));
  for (int g = 0; g < 4; ++g, q += 32, y += 64) {
    int sc = 0;
    int mn = 0;
    k4_scale_min(2 * g, scales, sc, mn);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(mn);
    k4_scale_min(2 * g + 1, scales, sc, mn);
    const float d2 = d * static_cast<float>(sc);
    const float m2 = dmin * static_cast<float>(mn);
    for (int l = 0; l < 32; ++l) {
      int lo = q[l] & 0x0F;
      int hi = q[l] >> 4;
      if constexpr (kFifthBit) {
        lo |= ((qh[l] >> (2 * g)) & 1) << 4;
        hi |= ((qh[l] >> (2 * g + 1)) & 1) << 4;
      }
      y[l] = d1 * static_cast<float>(lo) - m1;
      y[32 + l] = d2 * static_cast<float>(hi) - m2;
    }
  }
}

// Two halves of 128 values. In a half, ql holds 64 bytes and qh 32: value l (0..31) takes the
// low nibble of ql[l] and bits 0-1 of qh[l]; l+32: low nibble of ql[l+32], bits 2-3; l+64: high
// nibble of ql[l], bits 4-5; l+96: high nibble of ql[l+32], bits 6-7. Scales go per 16 values.
void q6_k(const std::byte* b, float* y) noexcept {
  const std::uint8_t* ql = bytes_at(b);
  const std::uint8_t* qh = bytes_at(b + 128);
  const auto* sc = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = half_at(b + 208);
  for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
    for (int l = 0; l < 32; ++l) {
      const int s = l / 16;
      const int q1 = ((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[s] * q1);
      y[l + 32] = d * static_cast<float>(sc[s + 2] * q2);
      y[l + 64] = d * static_cast<float>(sc[s + 4] * q3);
      y[l + 96] = d * static_cast<float>(sc[s + 6] * q4);
    }
  }
}

template <void (*Decode)(const std::byte*, float*) noexcept>
void decode_blocks(const std::byte* data, std::int64_t blocks, int in_bytes, int out_values,
                   float* out) noexcept {
  for (std::int64_t i = 0; i < blocks; ++i) Decode(data + i * in_bytes, out + i * out_values);
}

}  // namespace

const BlockFormatInfo& block_format_info(BlockFormat format) noexcept {
  return kFormats[static_cast<std::size_t>(format)];
}

std::span<const BlockFormatInfo> block_formats() noexcept {
  return kFormats;
}

std::optional<BlockFormat> parse_block_format(std::string_view name) noexcept {
  for (const BlockFormatInfo& info : kFormats) {
    if (name.size() != info.name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size(); ++i) {
      same = same && std::tolower(static_cast<unsigned char>(name[i])) == info.name[i];
    }
    if (same) return info.format;
  }
  return std::nullopt;
}

std::int64_t QuantizedView::numel() const noexcept {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

std::int64_t QuantizedView::blocks() const noexcept {
  return numel() / block_format_info(format).block_elements;
}

std::size_t QuantizedView::bytes() const noexcept {
  return static_cast<std::size_t>(blocks()) * static_cast<std::size_t>(block_format_info(format).block_bytes);
}

void dequantize(BlockFormat format, const std::byte* data, std::int64_t blocks, float* out) noexcept {
  const BlockFormatInfo& info = block_format_info(format);
  const int in = info.block_bytes;
  const int n = info.block_elements;
  switch (format) {
    case BlockFormat::q4_0:
      return decode_blocks<legacy_quant<false, false>>(data, blocks, in, n, out);
    case BlockFormat::q4_1:
      return decode_blocks<legacy_quant<true, false>>(data, blocks, in, n, out);
    case BlockFormat::q5_0:
      return decode_blocks<legacy_quant<false, true>>(data, blocks, in, n, out);
    case BlockFormat::q5_1:
      return decode_blocks<legacy_quant<true, true>>(data, blocks, in, n, out);
    case BlockFormat::q8_0:
      return decode_blocks<q8_0>(data, blocks, in, n, out);
    case BlockFormat::q4_k:
      return decode_blocks<k_quant<false>>(data, blocks, in, n, out);
    case BlockFormat::q5_k:
      return decode_blocks<k_quant<true>>(data, blocks, in, n, out);
    case BlockFormat::q6_k:
      return decode_blocks<q6_k>(data, blocks, in, n, out);
  }
}

}  // namespace tfdebug
