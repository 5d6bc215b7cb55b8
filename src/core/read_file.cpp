#include "tfdebug/core/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (file.fd < 0) throw Error(path + ": cannot open " + std::string(what) + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    throw Error(path + ": " + std::string(what) + " is not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes) {
    throw Error(path + ": " + std::string(what) + " is " + std::to_string(size) +
                " bytes; tfdebug reads at most " + std::to_string(max_bytes));
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path + ": cannot read " + std::string(what) + ": " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while read
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace tfdebug
