// Reading a whole small file (a configuration, a benchmark JSON, a trace) without blocking and
// without reading more than a stated bound.
//
//   const std::string text = tfdebug::read_regular_file("run.toml", 16 << 20, "the run configuration");
//
// Only regular files are read: a FIFO, a device or a folder is refused before a byte is read
// (Note [Only regular files] in src/io/mapped_file.cpp says why), and a file larger than
// `max_bytes` is refused with the bound in the message. Throws tfdebug::Error("<path>: ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tfdebug {

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);

}  // namespace tfdebug
