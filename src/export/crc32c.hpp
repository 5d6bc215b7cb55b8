// Private: CRC32C (Castagnoli) and TFRecord's masked form.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tfdebug::detail {

// Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF.
// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size) noexcept;

// TFRecord's mask: rotate right by 15, add 0xA282EAD8 (mod 2^32).
constexpr std::uint32_t masked_crc32c(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

}  // namespace tfdebug::detail
