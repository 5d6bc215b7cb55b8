// Lines of the console: through GNU readline (editing, history, completion) when the input is a
// terminal, else plain lines from the stream (scripts, pipes, tests), echoed after the prompt
// so that a transcript reads like a session.
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tfdebug::ide::detail {

class LineReader {
 public:
  // `words`: the completion candidates for the word being typed (commands, module paths, tensor
  // names), asked at each TAB.
  using Words = std::function<std::vector<std::string>()>;
  LineReader(std::FILE* in, std::FILE* out, bool editing, Words words);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // nullopt at the end of the input.
  std::optional<std::string> read(const std::string& prompt);
  bool editing() const noexcept { return editing_; }

 private:
  std::FILE* in_;
  std::FILE* out_;
  bool editing_;
  Words words_;
};

}  // namespace tfdebug::ide::detail
