#include "tfdebug/io/model_names.hpp"

#include <regex>

namespace tfdebug::io {

std::optional<int> layer_index(const std::string& name) {
  static const std::regex kLayer(R"((?:^|\.)(\d+)\.)");
  std::smatch m;
  if (std::regex_search(name, m, kLayer)) return std::stoi(m[1].str());
  return std::nullopt;
}

bool is_embedding_name(std::string_view name) {
  return name.find("embed") != std::string_view::npos || name.find("wte") != std::string_view::npos ||
         name.find("token_embd") != std::string_view::npos;
}

bool is_norm_name(std::string_view name) {
  return name.find("norm") != std::string_view::npos || name.find("ln_") != std::string_view::npos;
}

}  // namespace tfdebug::io
