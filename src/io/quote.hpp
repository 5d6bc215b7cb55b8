// Private: names and values from a file, made fit for a one-line error message.
//
//   fail(origin, "tensor " + quote(name) + " has dtype " + quote(dtype));   // 'w\x1b[2J' ...
//
// Note [Quoted input]: an error echoes what the file holds, and the file may be hostile: a name
// of 100,000 characters, a newline that forges a second line, an escape sequence that retitles
// the terminal. quote() puts the text in single quotes, keeps printable ASCII and valid UTF-8
// (outside C1 controls), writes every other byte as \xNN (and \n, \t, \\, \' as such), and cuts
// it after `max` characters with "..." and the full length, so an error stays short and
// one line whatever the file says.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tfdebug::io::detail {

std::string quote(std::string_view text, std::size_t max = 96);

// quote() without the quotes.
std::string escape_text(std::string_view text, std::size_t max = 96);

}  // namespace tfdebug::io::detail
