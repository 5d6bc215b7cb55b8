// Shared by the io tests: fixture paths and tensor lookup.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "tfdebug/io/model_file.hpp"

namespace tfdebug::io::test_support {

// A file written by tests/io/make_fixtures.py (CTest runs it first, as a fixture).
inline std::string fixture(const std::string& name) {
  const char* dir = std::getenv("TFDEBUG_IO_FIXTURES");
  return std::string(dir != nullptr ? dir : "build/fixtures") + "/" + name;
}

inline const NamedTensor& find(const ModelFile& m, const std::string& name) {
  for (const auto& t : m.tensors()) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tensor " + name);
}

}  // namespace tfdebug::io::test_support
