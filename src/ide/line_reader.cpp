#include "line_reader.hpp"

// readline's headers use FILE without including stdio.h first.
#include <cstdio>
#include <cstdlib>
#include <cstring>
// clang-format off
#include <readline/readline.h>
#include <readline/history.h>
// clang-format on

namespace tfdebug::ide::detail {

namespace {

// readline's completion is a C callback without a context pointer: the reader reading now.
LineReader::Words* g_words = nullptr;
std::vector<std::string> g_matches;

char* next_match(const char* text, int state) {
  if (state == 0) {
    g_matches.clear();
    if (g_words != nullptr && *g_words) {
      const std::size_t length = std::strlen(text);
      for (std::string& word : (*g_words)()) {
        if (word.compare(0, length, text) == 0) g_matches.push_back(std::move(word));
      }
    }
  }
  if (std::size_t(state) >= g_matches.size()) return nullptr;
  return strdup(g_matches[std::size_t(state)].c_str());  // readline frees it
}

char** complete(const char* text, int /*start*/, int /*end*/) {
  rl_attempted_completion_over = 1;  // no file names
  return rl_completion_matches(text, next_match);
}

}  // namespace

LineReader::LineReader(std::FILE* in, std::FILE* out, bool editing, Words words)
    : in_(in), out_(out), editing_(editing), words_(std::move(words)) {
  if (editing_) {
    rl_instream = in_;
    rl_outstream = out_;
    rl_readline_name = "tfdebug";
    // Module paths hold dots and tensor names brackets: only blanks separate words.
    rl_basic_word_break_characters = const_cast<char*>(" \t\n");
    rl_attempted_completion_function = complete;
  }
}

LineReader::~LineReader() {
  if (g_words == &words_) g_words = nullptr;
}

std::optional<std::string> LineReader::read(const std::string& prompt) {
  if (editing_) {
    g_words = &words_;
    char* line = readline(prompt.c_str());
    g_words = nullptr;
    if (line == nullptr) return std::nullopt;
    std::string text(line);
    std::free(line);
    if (text.find_first_not_of(" \t") != std::string::npos) add_history(text.c_str());
    return text;
  }
  std::fputs(prompt.c_str(), out_);
  std::string text;
  int c = 0;
  while ((c = std::fgetc(in_)) != EOF && c != '\n') text.push_back(char(c));
  if (c == EOF && text.empty()) {
    std::fputc('\n', out_);
    std::fflush(out_);
    return std::nullopt;
  }
  if (!text.empty() && text.back() == '\r') text.pop_back();
  std::fprintf(out_, "%s\n", text.c_str());  // the echo: a transcript shows what was asked
  std::fflush(out_);
  return text;
}

}  // namespace tfdebug::ide::detail
