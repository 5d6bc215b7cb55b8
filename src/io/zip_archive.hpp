// Private: a minimal ZIP reader for the archives model files come in (.npz, torch.save). It
// parses the end-of-central-directory record (searching back over the comment), the ZIP64
// locator and record, every central directory entry (with its ZIP64 extra field) and every local
// header, and checks each offset and size against the file. Stored entries are spans of the
// mapped file (zero-copy); deflated entries are inflated with zlib into memory the caller owns.
//
//   ZipArchive zip(origin, bytes);                  // throws tfdebug::Error naming `origin`
//   if (const ZipEntry* e = zip.find("archive/data.pkl"))
//     std::span<const std::byte> pickle = zip.read(*e, owned);
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "readers.hpp"

namespace tfdebug::io::detail {

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint64_t data_offset = 0;  // of the entry's (compressed) bytes in the file
  std::uint32_t crc32 = 0;
  std::uint64_t local_header_offset = 0;    // where its local header starts
  std::uint64_t central_header_offset = 0;  // where its central directory entry starts
};

class ZipArchive {
 public:
  ZipArchive(std::string origin, std::span<const std::byte> bytes);

  const std::vector<ZipEntry>& entries() const noexcept { return entries_; }
  // The entry with exactly this name, or nullptr.
  const ZipEntry* find(std::string_view name) const noexcept;
  // The entry's uncompressed bytes, CRC checked: a span of the file for a stored entry, memory
  // appended to `owned` for a deflated one. Throws tfdebug::Error naming origin:entry.
  std::span<const std::byte> read(const ZipEntry& entry, OwnedBuffers& owned) const;
  // A stored entry's bytes without reading them (no CRC check); throws for a compressed entry.
  std::span<const std::byte> stored(const ZipEntry& entry) const;

 private:
  std::string origin_;
  std::span<const std::byte> bytes_;
  std::vector<ZipEntry> entries_;
};

// True when `bytes` start like a ZIP archive (a local header or an empty archive's EOCD).
bool looks_like_zip(std::span<const std::byte> bytes) noexcept;

}  // namespace tfdebug::io::detail
