// libFuzzer: the PyTorch reader (ZIP locator + restricted unpickler + tensor views) on arbitrary
// bytes. It must throw tfdebug::Error or return views inside the input, proven by a stats pass
// under ASan.
//
// Most mutations of data.pkl or of a storage would only fail the entry's CRC, so the input is
// read twice: as it is, and, when its ZIP structure parses, with every entry's CRC (central and
// local) rewritten to match its bytes. The second read takes mutations deep into the unpickler
// and the view checks.
#include <zlib.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "zip_archive.hpp"

namespace {

void read(std::span<const std::byte> bytes) {
  std::vector<tfdebug::io::NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  tfdebug::io::detail::OwnedBuffers owned;
  (void)tfdebug::io::detail::is_pytorch_zip(bytes);
  try {
    tfdebug::io::detail::read_pytorch("fuzz.pt", bytes, tensors, metadata, owned);
  } catch (const tfdebug::Error&) {
    return;
  }
  for (const auto& t : tensors) (void)tfdebug::compute_stats(t.view);
}

void put_u32(std::vector<std::byte>& bytes, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) bytes[at + i] = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}

// A copy of `bytes` whose CRCs match the entries' bytes, or an empty vector.
std::vector<std::byte> with_fixed_crcs(std::span<const std::byte> bytes) {
  std::vector<std::byte> fixed(bytes.begin(), bytes.end());
  try {
    const tfdebug::io::detail::ZipArchive zip("fuzz.pt", bytes);
    for (const auto& e : zip.entries()) {
      if (e.method != 0) continue;
      const auto data = zip.stored(e);
      const auto crc = static_cast<std::uint32_t>(crc32(
          crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
      put_u32(fixed, static_cast<std::size_t>(e.local_header_offset) + 14, crc);
      put_u32(fixed, static_cast<std::size_t>(e.central_header_offset) + 16, crc);
    }
  } catch (const tfdebug::Error&) {
    return {};
  }
  return fixed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);
  read(bytes);
  const std::vector<std::byte> fixed = with_fixed_crcs(bytes);
  if (!fixed.empty()) read(fixed);
  return 0;
}
