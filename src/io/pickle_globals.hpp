// Private: the allow-list and the deny-list of pickle globals (docs/scan.md, "What is flagged").
#pragma once

#include <string>
#include <string_view>

#include "tfdebug/io/pickle_scan.hpp"

namespace tfdebug::io::detail {

struct GlobalVerdict {
  GlobalRisk risk = GlobalRisk::imports;
  std::string reason;
};

// The verdict on module.name, by name alone (called or not is the caller's to weigh).
GlobalVerdict classify_global(std::string_view module, std::string_view name);

// Calls that unpickle a byte-string argument: its payload is scanned as a nested pickle.
bool unpickles_argument(std::string_view module, std::string_view name);

}  // namespace tfdebug::io::detail
