// A small HTTP/1.1 client over a real socket, for the dashboard's tests: raw requests (so that
// the tests can send what a browser never would), chunked bodies decoded, and an event-stream
// reader that parses Server-Sent Events frame by frame.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tfdebug::serve::testing {

class Socket {
 public:
  // Connects to 127.0.0.1:port. `receive_buffer`: SO_RCVBUF before connecting (0: the default).
  explicit Socket(int port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(std::uint16_t(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect");
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  void send_all(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the server closed: what it answered is still readable
      sent += std::size_t(n);
    }
  }
  // Appends what arrives to `buffer`; false at the end of the stream or on the timeout.
  bool receive(std::string& buffer) {
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, std::size_t(n));
    return true;
  }
  void set_timeout(std::chrono::milliseconds timeout) {
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }

 private:
  int fd_ = -1;
};

struct Response {
  int status = 0;                                   // 0: the server closed without answering
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool has(const std::string& name) const { return headers.count(name) != 0; }
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Parses the status line and headers at the start of `raw`; the offset after them, or npos.
inline std::size_t parse_head(const std::string& raw, Response& out) {
  const std::size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return end;
  out.status = std::stoi(raw.substr(raw.find(' ') + 1, 3));
  std::size_t at = raw.find("\r\n") + 2;
  while (at < end) {
    const std::size_t eol = raw.find("\r\n", at);
    const std::string line = raw.substr(at, eol - at);
    const std::size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    std::size_t v = colon + 1;
    while (v < line.size() && line[v] == ' ') ++v;
    out.headers.emplace(name, line.substr(v));
    at = eol + 2;
  }
  return end + 4;
}

// Decodes a chunked body as far as it is complete; `done` when the last chunk was read.
inline std::string dechunk(const std::string& raw, std::size_t from, bool& done) {
  std::string body;
  done = false;
  while (true) {
    const std::size_t eol = raw.find("\r\n", from);
    if (eol == std::string::npos) return body;
    const std::size_t size = std::stoul(raw.substr(from, eol - from), nullptr, 16);
    if (size == 0) {
      done = true;
      return body;
    }
    if (raw.size() < eol + 2 + size + 2) return body;
    body.append(raw, eol + 2, size);
    from = eol + 2 + size + 2;
  }
}

// Sends `raw` (a whole request) and reads the answer until the server closes or is done.
inline Response request(int port, const std::string& raw) {
  Socket socket(port);
  socket.send_all(raw);
  std::string data;
  Response out;
  while (socket.receive(data)) {
    Response head;
    const std::size_t body = parse_head(data, head);
    if (body == std::string::npos) continue;
    if (head.header("transfer-encoding") == "chunked") {
      bool done = false;
      head.body = dechunk(data, body, done);
      if (done) return head;
    } else if (head.has("content-length")) {
      const std::size_t length = std::stoul(head.header("content-length"));
      if (data.size() >= body + length) {
        head.body = data.substr(body, length);
        return head;
      }
    }
  }
  const std::size_t body = parse_head(data, out);
  if (body != std::string::npos) out.body = data.substr(body);
  return out;
}

inline Response get(int port, const std::string& target, const std::string& extra_headers = "") {
  return request(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n" +
                           extra_headers + "Connection: close\r\n\r\n");
}

struct Event {
  std::uint64_t id = 0;
  std::string data;
};

// An open GET /events: next() returns each event as it comes (comments such as heartbeats are
// counted, not returned).
class EventReader {
 public:
  EventReader(int port, const std::string& extra_headers = "", const std::string& target = "/events")
      : socket_(port) {
    socket_.send_all("GET " + target + " HTTP/1.1\r\nHost: localhost:" + std::to_string(port) + "\r\n" +
                     extra_headers + "Accept: text/event-stream\r\n\r\n");
  }
  int status() {
    fill_head();
    return head_.status;
  }
  const Response& head() {
    fill_head();
    return head_;
  }
  // nullopt when the stream ended, nothing came for the socket's timeout, or `deadline` passed.
  std::optional<Event> next(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    fill_head();
    decode();
    while (true) {
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      const std::size_t end = text_.find("\n\n", parsed_);
      if (end != std::string::npos) {
        const std::string frame = text_.substr(parsed_, end - parsed_);
        parsed_ = end + 2;
        if (frame.rfind(":", 0) == 0) {
          ++comments_;
          continue;
        }
        Event event;
        std::size_t at = 0;
        while (at < frame.size()) {
          std::size_t eol = frame.find('\n', at);
          if (eol == std::string::npos) eol = frame.size();
          const std::string line = frame.substr(at, eol - at);
          if (line.rfind("id: ", 0) == 0) event.id = std::stoull(line.substr(4));
          if (line.rfind("data: ", 0) == 0) event.data += line.substr(6);
          at = eol + 1;
        }
        return event;
      }
      if (!read_more()) return std::nullopt;
    }
  }
  int comments() const noexcept { return comments_; }
  Socket& socket() noexcept { return socket_; }

 private:
  void fill_head() {
    while (body_ == std::string::npos) {
      if (!socket_.receive(raw_)) return;
      body_ = parse_head(raw_, head_);
      chunk_at_ = body_;
    }
  }
  // Appends the chunks that are complete in raw_ to text_.
  void decode() {
    if (body_ == std::string::npos) return;
    while (true) {
      const std::size_t eol = raw_.find("\r\n", chunk_at_);
      if (eol == std::string::npos) return;
      const std::size_t size = std::stoul(raw_.substr(chunk_at_, eol - chunk_at_), nullptr, 16);
      if (size == 0 || raw_.size() < eol + 2 + size + 2) return;
      text_.append(raw_, eol + 2, size);
      chunk_at_ = eol + 2 + size + 2;
    }
  }
  bool read_more() {
    if (body_ == std::string::npos) return false;
    if (!socket_.receive(raw_)) return false;
    decode();
    return true;
  }

  Socket socket_;
  std::string raw_;
  Response head_;
  std::size_t body_ = std::string::npos;
  std::size_t chunk_at_ = 0;
  std::string text_;
  std::size_t parsed_ = 0;
  int comments_ = 0;
};

}  // namespace tfdebug::serve::testing
