// profile.json: an OpProfile (tfdebug/profile/op_profile.hpp) as JSON, written by
// `tfdebug demo --profile` and read by `tfdebug regress` (docs/profiling.md has the schema).
#pragma once

#include <nlohmann/json.hpp>

#include "tfdebug/profile/op_profile.hpp"

namespace tfdebug::cli {

inline constexpr const char* kProfileFormat = "tfdebug-profile";

nlohmann::json profile_to_json(const profile::OpProfile& profile, std::size_t top_k);

// Whether `doc` is a profile.json ("format": "tfdebug-profile").
bool is_profile_json(const nlohmann::json& doc);

}  // namespace tfdebug::cli
