// ZIP structures (PKWARE APPNOTE 6.3): end of central directory (EOCD), ZIP64 EOCD locator and
// record, central directory entries, local headers. Every number read from the file is checked
// against the file before it is used as an offset or a size.
#include "zip_archive.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kEocd = 0x06054b50;
constexpr std::uint32_t kZip64Eocd = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::size_t kEocdSize = 22;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kLocalSize = 30;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr std::size_t kZip64EocdSize = 56;
// Deflate cannot expand data by more than 1032:1 (plus a little for tiny inputs).
constexpr std::uint64_t kMaxDeflateRatio = 1032;
constexpr std::uint64_t kDeflateSlack = 65536;

// Little-endian fields at a position the caller has checked.
std::uint64_t le(std::span<const std::byte> bytes, std::size_t at, int width) {
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(bytes[at + std::size_t(i)]);
  return v;
}

}  // namespace

bool looks_like_zip(std::span<const std::byte> bytes) noexcept {
  return bytes.size() >= 4 &&
         (std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0 || std::memcmp(bytes.data(), "PK\x05\x06", 4) == 0);
}

ZipArchive::ZipArchive(std::string origin, std::span<const std::byte> bytes)
    : origin_(std::move(origin)), bytes_(bytes) {
  const std::size_t size = bytes.size();
  if (size < kEocdSize) fail(origin_, "not a ZIP archive: " + std::to_string(size) + " bytes is too short");
  // The EOCD is the last record; a comment of up to 65535 bytes may follow it.
  std::size_t eocd = size - kEocdSize;
  const std::size_t lowest = size - kEocdSize > 65535 ? size - kEocdSize - 65535 : 0;
  bool found = false;
  for (;; --eocd) {
    if (le(bytes, eocd, 4) == kEocd && eocd + kEocdSize + le(bytes, eocd + 20, 2) <= size) {
      found = true;
      break;
    }
    if (eocd == lowest) break;
  }
  if (!found) fail(origin_, "not a ZIP archive: no end-of-central-directory record");
  if (le(bytes, eocd + 4, 2) != 0 || le(bytes, eocd + 6, 2) != 0) {
    fail(origin_, "a multi-disk (split) ZIP archive, which tfdebug does not read");
  }
  std::uint64_t count = le(bytes, eocd + 10, 2);
  std::uint64_t cd_size = le(bytes, eocd + 12, 4);
  std::uint64_t cd_offset = le(bytes, eocd + 16, 4);
  std::uint64_t cd_end_limit = eocd;  // the central directory lies before the EOCD (or ZIP64 records)
  if (eocd >= kZip64LocatorSize && le(bytes, eocd - kZip64LocatorSize, 4) == kZip64Locator) {
    const std::size_t locator = eocd - kZip64LocatorSize;
    const std::uint64_t record = le(bytes, locator + 8, 8);
    if (record > locator || locator - record < kZip64EocdSize) {
      fail(origin_,
           "ZIP64 end-of-central-directory offset " + std::to_string(record) + " is outside the file");
    }
    if (le(bytes, std::size_t(record), 4) != kZip64Eocd) {
      fail(origin_, "no ZIP64 end-of-central-directory record at offset " + std::to_string(record));
    }
    count = le(bytes, std::size_t(record) + 32, 8);
    cd_size = le(bytes, std::size_t(record) + 40, 8);
    cd_offset = le(bytes, std::size_t(record) + 48, 8);
    cd_end_limit = record;
  }
  if (cd_offset > cd_end_limit || cd_size > cd_end_limit - cd_offset) {
    fail(origin_, "central directory (offset " + std::to_string(cd_offset) + ", " + std::to_string(cd_size) +
                      " bytes) runs past its end-of-central-directory record");
  }
  if (count > cd_size / kCentralSize) {
    fail(origin_, "claims " + std::to_string(count) + " entries, more than its " + std::to_string(cd_size) +
                      "-byte central directory can hold");
  }
  entries_.reserve(static_cast<std::size_t>(count));
  std::set<std::string_view> names;
  std::size_t at = static_cast<std::size_t>(cd_offset);
  const std::size_t cd_end = static_cast<std::size_t>(cd_offset + cd_size);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string which = "ZIP entry " + std::to_string(i);
    if (cd_end - at < kCentralSize || le(bytes, at, 4) != kCentralHeader) {
      fail(origin_, which + ": no central directory header at offset " + std::to_string(at));
    }
    const std::uint64_t flags = le(bytes, at + 8, 2);
    ZipEntry e;
    e.central_header_offset = at;
    e.method = static_cast<std::uint16_t>(le(bytes, at + 10, 2));
    e.crc32 = static_cast<std::uint32_t>(le(bytes, at + 16, 4));
    e.compressed_size = le(bytes, at + 20, 4);
    e.uncompressed_size = le(bytes, at + 24, 4);
    const std::size_t name_len = le(bytes, at + 28, 2);
    const std::size_t extra_len = le(bytes, at + 30, 2);
    const std::size_t comment_len = le(bytes, at + 32, 2);
    std::uint64_t local = le(bytes, at + 42, 4);
    if (cd_end - at - kCentralSize < name_len + extra_len + comment_len) {
      fail(origin_, which + ": name, extra field and comment run past the central directory");
    }
    e.name.assign(reinterpret_cast<const char*>(bytes.data() + at + kCentralSize), name_len);
    // ZIP64 extra field (id 1): the 64-bit values of exactly the fields that are all ones.
    std::size_t x = at + kCentralSize + name_len;
    const std::size_t x_end = x + extra_len;
    while (x_end - x >= 4) {
      const std::uint64_t id = le(bytes, x, 2);
      const std::size_t len = le(bytes, x + 2, 2);
      if (x_end - x - 4 < len) fail(origin_, which + " ('" + e.name + "'): extra field runs past its end");
      if (id == 1) {
        std::size_t p = x + 4;
        const std::size_t p_end = p + len;
        for (std::uint64_t* field : {&e.uncompressed_size, &e.compressed_size, &local}) {
          if (*field != 0xFFFFFFFF) continue;
          if (p_end - p < 8) fail(origin_, which + " ('" + e.name + "'): ZIP64 extra field is too short");
          *field = le(bytes, p, 8);
          p += 8;
        }
      }
      x += 4 + len;
    }
    at += kCentralSize + name_len + extra_len + comment_len;
    const std::string entry = origin_ + ":" + e.name;
    if ((flags & 1U) != 0) fail(entry, "entry is encrypted");
    if (e.method != 0 && e.method != 8) {
      fail(entry, "compression method " + std::to_string(e.method) + " is not stored (0) or deflate (8)");
    }
    if (e.method == 0 && e.compressed_size != e.uncompressed_size) {
      fail(entry, "a stored entry with compressed size " + std::to_string(e.compressed_size) +
                      " and uncompressed size " + std::to_string(e.uncompressed_size));
    }
    if (e.method == 8 && e.uncompressed_size > e.compressed_size * kMaxDeflateRatio + kDeflateSlack) {
      fail(entry, "claims " + std::to_string(e.uncompressed_size) + " bytes from " +
                      std::to_string(e.compressed_size) + " compressed bytes, more than deflate can produce");
    }
    if (local > cd_offset || cd_offset - local < kLocalSize ||
        le(bytes, std::size_t(local), 4) != kLocalHeader) {
      fail(entry, "no local header at offset " + std::to_string(local));
    }
    const std::size_t lh = static_cast<std::size_t>(local);
    e.local_header_offset = local;
    const std::size_t local_name = le(bytes, lh + 26, 2);
    const std::size_t local_extra = le(bytes, lh + 28, 2);
    if (le(bytes, lh + 8, 2) != e.method)
      fail(entry, "local header and central directory disagree on the method");
    e.data_offset = local + kLocalSize + local_name + local_extra;
    if (e.data_offset > cd_offset || e.compressed_size > cd_offset - e.data_offset) {
      fail(entry, "data (offset " + std::to_string(e.data_offset) + ", " + std::to_string(e.compressed_size) +
                      " bytes) runs into the central directory or past the end of the file");
    }
    if (local_name != name_len || std::memcmp(bytes.data() + lh + kLocalSize, e.name.data(), name_len) != 0) {
      fail(entry, "local header names a different entry");
    }
    entries_.push_back(std::move(e));
  }
  for (const ZipEntry& e : entries_) {
    if (!names.insert(e.name).second) fail(origin_, "two ZIP entries are named '" + e.name + "'");
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const noexcept {
  for (const ZipEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::span<const std::byte> ZipArchive::stored(const ZipEntry& entry) const {
  if (entry.method != 0) fail(origin_ + ":" + entry.name, "entry is compressed; expected it stored");
  return bytes_.subspan(static_cast<std::size_t>(entry.data_offset),
                        static_cast<std::size_t>(entry.compressed_size));
}

std::span<const std::byte> ZipArchive::read(const ZipEntry& entry, OwnedBuffers& owned) const {
  const std::string where = origin_ + ":" + entry.name;
  const std::span<const std::byte> raw = bytes_.subspan(static_cast<std::size_t>(entry.data_offset),
                                                        static_cast<std::size_t>(entry.compressed_size));
  std::span<const std::byte> data = raw;
  if (entry.method == 8) {
    std::vector<std::byte>& out = owned.allocate(entry.uncompressed_size, where);
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) fail(where, "cannot start inflate");
    std::size_t in_done = 0;
    std::size_t out_done = 0;
    int rc = Z_OK;
    // zlib counts in uInt: feed and drain in chunks so that any size works.
    constexpr std::size_t kChunk = std::numeric_limits<uInt>::max() / 2;
    while (rc == Z_OK) {
      const std::size_t in_now = std::min(kChunk, raw.size() - in_done);
      const std::size_t out_now = std::min(kChunk, out.size() - out_done);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(raw.data() + in_done));
      z.avail_in = static_cast<uInt>(in_now);
      // One spare byte past the stated size shows an entry that inflates to more than it claims.
      std::byte spare{};
      const bool to_spare = out_now == 0;
      z.next_out = reinterpret_cast<Bytef*>(to_spare ? &spare : out.data() + out_done);
      z.avail_out = to_spare ? 1U : static_cast<uInt>(out_now);
      rc = inflate(&z, Z_NO_FLUSH);
      const std::size_t produced = (to_spare ? 1U : out_now) - z.avail_out;
      if (to_spare && produced != 0) {
        inflateEnd(&z);
        fail(where,
             "entry inflates to more than its stated " + std::to_string(entry.uncompressed_size) + " bytes");
      }
      in_done += in_now - z.avail_in;
      out_done += produced;
      if (rc == Z_OK && in_now == 0 && produced == 0) rc = Z_BUF_ERROR;  // no progress: truncated
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) fail(where, "corrupt deflate stream");
    if (out_done != out.size()) {
      fail(where, "entry inflates to " + std::to_string(out_done) + " bytes, not its stated " +
                      std::to_string(entry.uncompressed_size));
    }
    data = {out.data(), out.size()};
  }
  std::uint64_t crc = crc32(0L, Z_NULL, 0);
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min<std::size_t>(data.size() - done, 1U << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data.data() + done), static_cast<uInt>(n));
    done += n;
  }
  if (crc != entry.crc32) fail(where, "CRC-32 mismatch: the entry is corrupt");
  return data;
}

}  // namespace tfdebug::io::detail
