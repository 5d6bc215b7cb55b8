// NumPy .npz: a ZIP archive (stored or deflated, ZIP64 as numpy writes it) of <name>.npy entries.
// Each entry is decompressed into memory the ModelFile owns and read by read_npy. Sizes claimed
// by the archive are checked against what deflate can produce, so a lying header cannot make
// tfdebug allocate more than ~1032x the compressed bytes; CRCs are verified.
#include <zip.h>

#include <memory>
#include <string_view>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::io::detail {
namespace {

struct ArchiveCloser {
  void operator()(zip_t* archive) const noexcept { zip_discard(archive); }
};
struct EntryCloser {
  void operator()(zip_file_t* file) const noexcept { zip_fclose(file); }
};

// Deflate cannot expand data by more than 1032:1.
constexpr zip_uint64_t kMaxDeflateRatio = 1032;

}  // namespace

void read_npz(const std::string& origin, std::span<const std::byte> bytes, std::vector<NamedTensor>& out,
              OwnedBuffers& owned) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) fail(origin, std::string("cannot read as ZIP: ") + zip_error_strerror(&error));
  std::unique_ptr<zip_t, ArchiveCloser> archive(
      zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    zip_source_free(source);
    const std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail(origin, "not a valid ZIP archive: " + reason);
  }
  zip_error_fini(&error);
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  std::size_t arrays = 0;
  bool pickle = false;
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 || st.name == nullptr) {
      fail(origin, "ZIP entry " + std::to_string(i) + " cannot be read: " + zip_strerror(archive.get()));
    }
    const std::string_view name(st.name);
    if (name.ends_with("data.pkl")) pickle = true;
    if (!name.ends_with(".npy")) continue;
    const std::string entry = origin + ":" + std::string(name);
    if ((st.valid & ZIP_STAT_SIZE) == 0 || (st.valid & ZIP_STAT_COMP_SIZE) == 0)
      fail(entry, "entry has no size");
    if (st.comp_size > bytes.size() || st.size > st.comp_size * kMaxDeflateRatio + 65536) {
      fail(entry, "claims " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
                      " compressed bytes, more than deflate can produce");
    }
    std::unique_ptr<zip_file_t, EntryCloser> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0));
    if (!file) fail(entry, std::string("cannot open: ") + zip_strerror(archive.get()));
    std::vector<std::byte>& buffer = owned.emplace_back(static_cast<std::size_t>(st.size));
    zip_uint64_t done = 0;
    while (done < st.size) {
      const zip_int64_t got = zip_fread(file.get(), buffer.data() + done, st.size - done);
      if (got <= 0) fail(entry, std::string("corrupt entry: ") + zip_file_strerror(file.get()));
      done += static_cast<zip_uint64_t>(got);
    }
    char extra;
    if (zip_fread(file.get(), &extra, 1) != 0)
      fail(entry, "entry is longer than its stated size or fails its CRC");
    const std::span<const std::byte> npy(buffer.data(), buffer.size());
    const std::string stem(name.substr(0, name.size() - 4));
    read_npy(entry, stem, npy, out, owned);
    ++arrays;
  }
  if (arrays == 0) {
    fail(origin, pickle ? "a PyTorch zip checkpoint (data.pkl); tfdebug reads safetensors, .npy and .npz"
                        : "a ZIP archive with no .npy entry");
  }
}

}  // namespace tfdebug::io::detail
