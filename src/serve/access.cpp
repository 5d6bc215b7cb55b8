// The dashboard's access rules (access.hpp).
#include "access.hpp"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <random>

namespace tfdebug::serve::detail {

// Note [Dashboard access]: the dashboard shows a training run's module names, losses and config,
// and its stream holds a thread per client: it is no public service. By default it binds
// 127.0.0.1, where only this machine's users reach it; a page on another site can still make a
// browser send requests to 127.0.0.1 (DNS rebinding, or plain cross-origin GETs), so a loopback
// server answers only requests whose Host names a loopback address, and sends no CORS header (a
// cross-origin script cannot read the answer). Bound anywhere else, every request must carry the
// access token (?token=... or "Authorization: Bearer ..."), printed once by the command that
// started the server; a wrong one is answered 401 without saying why. The server serves three
// fixed routes and no files, so no path, however encoded, reaches the file system.
bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  const std::string text(host);
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

std::string random_token() {
  std::random_device random;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t word = random();
    for (int j = 0; j < 8; ++j, word >>= 4) token += kHex[word & 15];
  }
  return token;
}

bool valid_token(std::string_view token) {
  if (token.size() < 16 || token.size() > 128) return false;
  for (const char c : token) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '~' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool same_token(std::string_view given, std::string_view expected) {
  if (expected.empty()) return false;
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

bool loopback_host_header(std::string_view host_header, int port) {
  std::string with_port(1, ':');
  with_port += std::to_string(port);
  for (const std::string_view name : {"localhost", "127.0.0.1", "[::1]"}) {
    if (host_header == name) return true;
    if (host_header.size() == name.size() + with_port.size() && host_header.substr(0, name.size()) == name &&
        host_header.substr(name.size()) == with_port)
      return true;
  }
  return false;
}

}  // namespace tfdebug::serve::detail
