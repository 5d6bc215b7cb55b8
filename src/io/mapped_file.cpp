#include "tfdebug/io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tfdebug/core/error.hpp"

namespace tfdebug::io {

// Note [Only regular files]: opening a FIFO for reading blocks until a writer opens it, and a
// character device (/dev/zero, a tty) has no end. O_NONBLOCK makes open() return at once for
// those; fstat then refuses whatever is not a regular file before a byte is read. (For a
// regular file O_NONBLOCK changes nothing.)
MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const char* kind = S_ISFIFO(info.st_mode)   ? "a FIFO"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                       : S_ISDIR(info.st_mode)  ? "a folder"
                                                : "not a regular file";
    ::close(fd);
    throw Error(path + ": " + kind +
                ", not a regular file; tfdebug reads model files only from regular files");
  }
  size_ = static_cast<std::size_t>(info.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot map into memory: " + std::strerror(err));
    }
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);
}

void MappedFile::drop_pages(const void* data, std::size_t size) const noexcept {
  const auto* begin = static_cast<const std::byte*>(data);
  if (data_ == nullptr || begin < data_ || begin >= data_ + size_) return;
  const std::byte* end = begin + std::min(size, static_cast<std::size_t>(data_ + size_ - begin));
  static const auto kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  // Whole pages only, counted from the mapping's start (page-aligned): the first page that
  // starts at or after `begin`, up to the last that ends at or before `end`.
  const auto first = (static_cast<std::size_t>(begin - data_) + kPage - 1) / kPage * kPage;
  const auto last = static_cast<std::size_t>(end - data_) / kPage * kPage;
  // A private, read-only file mapping: MADV_DONTNEED drops the page table entries; the next
  // read faults the same file bytes back in from the page cache.
  if (last > first) ::madvise(const_cast<std::byte*>(data_ + first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace tfdebug::io
