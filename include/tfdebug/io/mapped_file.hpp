// A read-only memory map of a whole file (RAII). Empty files map to an empty span.
//
//   tfdebug::io::MappedFile file("model.safetensors");
//   std::span<const std::byte> bytes = file.bytes();   // valid while `file` lives
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace tfdebug::io {

class MappedFile {
 public:
  // Throws tfdebug::Error naming the path when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  // Lets the OS unmap the whole pages inside [data, data + size) from this process: they stay
  // in the page cache, and reading them again maps them again. Keeps a one-pass scan's resident
  // memory small. Bytes outside this mapping are left alone.
  void drop_pages(const void* data, std::size_t size) const noexcept;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tfdebug::io
