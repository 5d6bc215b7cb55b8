// "did you mean ...?" for a mistyped subcommand or option: the known name closest to what was
// typed, when it is close enough to be what was meant.
//
//   closest_name("inspec", {"inspect", "diff", "stats"})  // "inspect"
//   closest_name("xyz", {"inspect", "diff", "stats"})     // nullopt
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tfdebug::cli {

// Edits (insert, delete, substitute, or swap two neighbours) between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name within one edit of `typed` (two for names of six or more characters) that is
// nearest; on a tie the first in `names`. nullopt when none is that close.
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& names);

}  // namespace tfdebug::cli
