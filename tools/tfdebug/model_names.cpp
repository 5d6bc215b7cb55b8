#include "model_names.hpp"

#include <regex>

namespace tfdebug::cli {

std::optional<int> layer_index(const std::string& name) {
  static const std::regex kLayer(R"((?:^|\.)(\d+)\.)");
  std::smatch m;
  if (std::regex_search(name, m, kLayer)) return std::stoi(m[1].str());
  return std::nullopt;
}

}  // namespace tfdebug::cli
