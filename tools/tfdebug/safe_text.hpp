// Text from files (tensor names, metadata, node names, paths, error messages that quote them) as
// it is shown on a terminal: Note [Terminal-safe text]. JSON output keeps the real characters
// (json_output.hpp's json_text escapes them the JSON way).
//
//   std::printf("  %s\n", terminal_safe(tensor.name).c_str());
#pragma once

#include <string>
#include <string_view>

namespace tfdebug::cli {

// Note [Terminal-safe text]: a name in a file may hold bytes a terminal acts on (ESC starts a
// sequence that can retitle the window or clear the screen, BEL rings, CR and LF forge lines, C1
// code points U+0080..U+009F are 8-bit controls to some terminals) or that are not UTF-8 at all.
// Each is shown as an escape instead: \n \r \t, \xNN for other C0 bytes, DEL and each byte of an
// invalid UTF-8 sequence, \uNNNN for C1 controls and the code points that reorder or break lines
// (U+2028, U+2029, bidi embeddings/overrides/isolates U+202A..U+202E, U+2066..U+2069). Everything
// else, including valid non-ASCII text and the backslash, is shown as it is.
std::string terminal_safe(std::string_view text);

}  // namespace tfdebug::cli
