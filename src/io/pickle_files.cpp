// Which pickles a file holds, and the walk of folders for `tfdebug scan` (pickle_scan.hpp).
//
// Note [Pickle-bearing files]
// By their bytes, not their names: a ZIP (torch.save, .npz, any archive) holds pickles in its
// *.pkl / *.pickle entries and object arrays in its *.npy entries; only those entries are read,
// so a checkpoint's storages are never touched. An .npy whose dtype holds Python objects (descr
// '|O', alone or in a structured dtype) is a pickle after its header. torch.save before 1.6 is
// five pickles in a row (magic number, protocol version, system info, the object, the storage
// keys) followed by raw storage bytes, which are not scanned. Anything else starting with a
// PROTO opcode is a plain pickle, followed perhaps by more (joblib writes several). A file named
// like a pickle (.pkl, .pickle, .pt, ...) is scanned as one even without PROTO: protocols 0 and 1
// have no header.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "pickle_globals.hpp"
#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/io/mapped_file.hpp"
#include "tfdebug/io/pickle_scan.hpp"
#include "zip_archive.hpp"

namespace tfdebug::io {
namespace {

namespace fs = std::filesystem;

constexpr unsigned char kLegacyTorch[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c,
                                          0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr int kLegacyPickles = 5;  // magic number, protocol, system info, the object, storage keys
constexpr const char* kPickleSuffixes[] = {".pt",     ".pth",    ".bin", ".ckpt", ".pkl",
                                           ".pickle", ".joblib", ".npy", ".npz",  ".zip"};

bool named_like_pickle(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  for (const char* s : kPickleSuffixes) {
    if (ext == s) return true;
  }
  return false;
}

bool starts_with(std::span<const std::byte> bytes, const void* prefix, std::size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), prefix, n) == 0;
}

bool starts_with_proto(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && static_cast<std::uint8_t>(bytes[0]) == 0x80 &&
         static_cast<std::uint8_t>(bytes[1]) <= 5;
}

// The pickle of an object-array .npy, or an empty span when its dtype holds no objects.
// Throws tfdebug::Error when the header is cut short.
std::span<const std::byte> npy_pickle(const std::string& origin, std::span<const std::byte> bytes) {
  if (bytes.size() < 10) throw Error(origin + ": truncated .npy header");
  const auto major = static_cast<std::uint8_t>(bytes[6]);
  const std::size_t width = major == 1 ? 2 : 4;
  const std::size_t prefix = 8 + width;
  if (bytes.size() < prefix) throw Error(origin + ": truncated .npy header");
  std::size_t header_len = 0;
  for (std::size_t i = width; i-- > 0;)
    header_len = (header_len << 8) | static_cast<std::uint8_t>(bytes[8 + i]);
  if (header_len > bytes.size() - prefix) {
    throw Error(origin + ": .npy header length " + std::to_string(header_len) +
                " runs past the end of the file");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  // numpy writes an object dtype as '|O' ('|O8' before numpy 1.?); structured dtypes list theirs.
  bool objects = false;
  for (std::size_t at = header.find("'|O"); at != std::string_view::npos; at = header.find("'|O", at + 1)) {
    const char next = at + 3 < header.size() ? header[at + 3] : '\0';
    if (next == '\'' || (next >= '0' && next <= '9')) objects = true;
  }
  if (header.find("'O'") != std::string_view::npos) objects = true;
  return objects ? bytes.subspan(prefix + header_len) : std::span<const std::byte>();
}

// Consecutive pickles from `bytes`: at most `limit`, the ones after the first only while they
// start with PROTO.
void scan_sequence(const std::string& origin, std::span<const std::byte> bytes, int limit, FileScan& out) {
  std::size_t at = 0;
  for (int i = 0; i < limit && at < bytes.size(); ++i) {
    if (i > 0 && !starts_with_proto(bytes.subspan(at))) break;
    // A legacy torch.save's pickles are numbered; a plain pickle is the file, and those after it
    // (joblib) are numbered from 2.
    const bool numbered = limit == kLegacyPickles || i > 0;
    PickleScan scan =
        scan_pickle(numbered ? origin + ":pickle " + std::to_string(i + 1) : origin, bytes.subspan(at));
    at += scan.end;
    const bool stop = !scan.problem.empty();
    out.pickles.push_back(std::move(scan));
    if (stop) break;
  }
}

void scan_zip(const std::string& path, std::span<const std::byte> bytes, FileScan& out) {
  const detail::ZipArchive zip(path, bytes);
  detail::OwnedBuffers owned;
  bool torch = false;
  bool npy = false;
  for (const detail::ZipEntry& e : zip.entries()) {
    const bool pickle = e.name.ends_with(".pkl") || e.name.ends_with(".pickle");
    if (e.name == "data.pkl" || e.name.ends_with("/data.pkl")) torch = true;
    if (e.name.ends_with(".npy")) npy = true;
    if (!pickle && !e.name.ends_with(".npy")) continue;
    const std::string origin = path + ":" + printable(e.name);
    // An .npy member's header is all that is needed when it holds no objects, but a deflated
    // entry must be inflated to see it; stored ones are read in place.
    const std::span<const std::byte> data = zip.read(e, owned);
    if (pickle) {
      out.pickles.push_back(scan_pickle(origin, data));
    } else if (starts_with(data, "\x93NUMPY", 6)) {
      const std::span<const std::byte> p = npy_pickle(origin, data);
      if (!p.empty()) out.pickles.push_back(scan_pickle(origin, p));
    }
    owned.clear();
  }
  out.container = torch ? "torch zip" : npy ? "npz" : "zip";
}

void scan_bytes(const std::string& path, std::span<const std::byte> bytes, FileScan& out) {
  if (starts_with(bytes, "PK\x03\x04", 4) || starts_with(bytes, "PK\x05\x06", 4)) {
    scan_zip(path, bytes, out);
  } else if (starts_with(bytes, "\x93NUMPY", 6)) {
    const std::span<const std::byte> p = npy_pickle(path, bytes);
    out.container = p.empty() ? "none" : "npy";
    if (!p.empty()) out.pickles.push_back(scan_pickle(path, p));
  } else if (starts_with(bytes, kLegacyTorch, sizeof kLegacyTorch)) {
    out.container = "legacy torch";
    scan_sequence(path, bytes, kLegacyPickles, out);
  } else if (starts_with_proto(bytes) || named_like_pickle(path)) {
    out.container = "pickle";
    scan_sequence(path, bytes, 1 << 20, out);
    // Without PROTO and with a first opcode that is no pickle's, it is not a pickle at all.
    if (!starts_with_proto(bytes) && out.pickles.size() == 1 && out.pickles[0].end <= 1 &&
        out.pickles[0].globals.empty()) {
      out.pickles.clear();
      out.error = path + ": not a pickle, a ZIP archive or an .npy file";
    }
  } else {
    out.container = "none";
  }
}

class Walker {
 public:
  explicit Walker(std::vector<FileScan>& out) : out_(out) {}

  void path(const std::string& p) {
    std::error_code ec;
    const fs::file_status link = fs::symlink_status(p, ec);
    if (ec || !fs::exists(link)) {
      failed(p, "no such file or folder");
      return;
    }
    const fs::path canonical = fs::canonical(p, ec);
    if (ec) {
      failed(p, ec.value() == ELOOP ? "a symbolic link loop" : "cannot resolve the path: " + ec.message());
      return;
    }
    if (fs::is_directory(canonical, ec)) {
      folder(p, canonical);
    } else {
      out_.push_back(scan_file(p));
    }
  }

 private:
  void failed(const std::string& p, const std::string& why) {
    FileScan f;
    f.path = p;
    f.container = "none";
    f.error = p + ": " + why;
    out_.push_back(std::move(f));
  }

  void skipped(const std::string& p, const std::string& why) {
    FileScan f;
    f.path = p;
    f.container = "none";
    f.note = why;
    out_.push_back(std::move(f));
  }

  // Note [Folder walk]: depth first, entries sorted; a symbolic link is followed only when its
  // target lies inside the folder given and is not a folder above the link (which would loop).
  void folder(const std::string& shown, const fs::path& root) {
    std::vector<fs::path> stack{shown};
    std::set<fs::path> seen{root};
    while (!stack.empty()) {
      const fs::path dir = stack.back();
      stack.pop_back();
      std::error_code ec;
      std::vector<fs::directory_entry> entries;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        entries.push_back(*it);
      if (ec) {
        failed(dir.string(), "cannot list the folder: " + ec.message());
        continue;
      }
      std::sort(entries.begin(), entries.end());
      std::vector<fs::path> subfolders;
      for (const fs::directory_entry& e : entries) {
        const std::string p = e.path().string();
        const bool is_link = e.is_symlink(ec);
        fs::path target = e.path();
        if (is_link) {
          target = fs::canonical(e.path(), ec);
          if (ec) {
            if (ec.value() == ELOOP)
              skipped(p, "a symbolic link loop, not followed");
            else if (ec.value() != ENOENT || named_like_pickle(p))
              skipped(p, "a dangling symbolic link");
            continue;
          }
          const auto [r, t] = std::mismatch(root.begin(), root.end(), target.begin(), target.end());
          if (r != root.end()) {
            if (named_like_pickle(p) || fs::is_directory(target, ec)) {
              skipped(p, "a symbolic link out of the folder (to " + target.string() + "), not followed");
            }
            continue;
          }
        }
        if (fs::is_directory(target, ec)) {
          const fs::path parent = fs::canonical(dir, ec);
          const auto [a, b] = std::mismatch(target.begin(), target.end(), parent.begin(), parent.end());
          if (is_link && a == target.end()) {
            skipped(p, "a symbolic link loop (to " + target.string() + ", a folder above it), not followed");
            continue;
          }
          if (!seen.insert(target).second) {
            skipped(p, "a symbolic link to " + target.string() + ", a folder walked already");
            continue;
          }
          subfolders.push_back(e.path());
        } else if (fs::is_regular_file(target, ec) && named_like_pickle(p)) {
          out_.push_back(scan_file(p));
        }
      }
      for (auto it = subfolders.rbegin(); it != subfolders.rend(); ++it) stack.push_back(*it);
    }
  }

  std::vector<FileScan>& out_;
};

}  // namespace

FileScan scan_file(const std::string& path) {
  FileScan out;
  out.path = path;
  out.container = "none";
  try {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw Error(path + ": a folder, not a file");
    const MappedFile map(path);
    scan_bytes(path, map.bytes(), out);
  } catch (const Error& e) {
    out.error = e.what();
  } catch (const std::bad_alloc&) {
    out.error = path + ": out of memory while reading it";
  }
  return out;
}

std::vector<FileScan> scan_paths(const std::vector<std::string>& paths) {
  std::vector<FileScan> out;
  Walker walker(out);
  for (const std::string& p : paths) walker.path(p);
  return out;
}

}  // namespace tfdebug::io
