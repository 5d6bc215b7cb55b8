// NumPy .npz: a ZIP archive (stored or deflated, ZIP64 as numpy writes it) of <name>.npy entries,
// read through ZipArchive. Stored entries (numpy.savez) are read in place, so their arrays are
// views into the mapped file; deflated entries (numpy.savez_compressed) are inflated into memory
// the ModelFile owns. CRCs are verified, and an entry may not claim more bytes than deflate can
// produce from its compressed size.
#include <string_view>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "zip_archive.hpp"

namespace tfdebug::io::detail {

void read_npz(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
              OwnedBuffers& owned) {
  const ZipArchive zip(origin, bytes);
  std::size_t arrays = 0;
  for (const ZipEntry& e : zip.entries()) {
    const std::string_view name(e.name);
    if (!name.ends_with(".npy")) continue;
    const std::string entry = origin + ":" + e.name;
    const std::span<const std::byte> npy = zip.read(e, owned);
    read_npy(entry, std::string(name.substr(0, name.size() - 4)), npy, out, owned);
    ++arrays;
  }
  if (arrays == 0) fail(origin, "a ZIP archive with no .npy entry");
}

}  // namespace tfdebug::io::detail
