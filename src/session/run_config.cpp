#include "tfdebug/session/run_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "tfdebug/core/error.hpp"

namespace tfdebug {

namespace {

using Json = nlohmann::json;

// Note [One config path]: TOML is converted to the same JSON tree, so both formats go through
// one reader with one set of key names and checks.
Json toml_to_json(const toml::node& node) {
  if (const toml::table* table = node.as_table()) {
    Json out = Json::object();
    for (const auto& [key, value] : *table) out[std::string(key.str())] = toml_to_json(value);
    return out;
  }
  if (const toml::array* array = node.as_array()) {
    Json out = Json::array();
    for (const toml::node& value : *array) out.push_back(toml_to_json(value));
    return out;
  }
  if (const auto* v = node.as_string()) return v->get();
  if (const auto* v = node.as_integer()) return v->get();
  if (const auto* v = node.as_floating_point()) return v->get();
  if (const auto* v = node.as_boolean()) return v->get();
  return Json(nullptr);  // dates and times: no key takes one, so the type check rejects them
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(file_ + ": " + key + ": " + what);
  }

  void read_bool(const Json& j, const std::string& key, bool& out) const {
    if (!j.is_boolean()) fail(key, "expected true or false, got " + j.dump());
    out = j.get<bool>();
  }
  void read_int(const Json& j, const std::string& key, int& out) const {
    if (!j.is_number_integer()) fail(key, "expected an integer, got " + j.dump());
    const auto v = j.get<std::int64_t>();
    if (v < 0 || v > 1'000'000'000) fail(key, "expected an integer in [0, 1e9], got " + j.dump());
    out = static_cast<int>(v);
  }
  void read_int64(const Json& j, const std::string& key, std::int64_t& out) const {
    if (!j.is_number_integer() || j.get<std::int64_t>() < 0)
      fail(key, "expected a non-negative integer, got " + j.dump());
    out = j.get<std::int64_t>();
  }
  void read_double(const Json& j, const std::string& key, double& out) const {
    if (!j.is_number()) fail(key, "expected a number, got " + j.dump());
    out = j.get<double>();
  }

  // Reads a table whose keys must all be known: `fields` maps each key to its reader.
  void read_table(
      const Json& j, const std::string& prefix,
      const std::map<std::string, std::function<void(const Json&, const std::string&)>>& fields) const {
    if (!j.is_object()) fail(prefix.empty() ? "(top level)" : prefix, "expected a table, got " + j.dump());
    for (const auto& [key, value] : j.items()) {
      const std::string full = prefix.empty() ? key : prefix + "." + key;
      const auto it = fields.find(key);
      if (it == fields.end()) {
        std::string known;
        for (const auto& field : fields) known += (known.empty() ? "" : ", ") + field.first;
        fail(full, "unknown key (expected one of: " + known + ")");
      }
      it->second(value, full);
    }
  }

 private:
  std::string file_;
};

using Fields = std::map<std::string, std::function<void(const Json&, const std::string&)>>;

void apply(const Json& root, RunConfig& c, const Reader& r, const std::filesystem::path& base) {
  auto flag = [&r](bool& out) {
    return [&r, &out](const Json& j, const std::string& k) { r.read_bool(j, k, out); };
  };
  auto integer = [&r](int& out) {
    return [&r, &out](const Json& j, const std::string& k) { r.read_int(j, k, out); };
  };
  auto integer64 = [&r](std::int64_t& out) {
    return [&r, &out](const Json& j, const std::string& k) { r.read_int64(j, k, out); };
  };
  auto real = [&r](double& out) {
    return [&r, &out](const Json& j, const std::string& k) { r.read_double(j, k, out); };
  };
  auto table = [&r](Fields fields) {
    return
        [&r, fields = std::move(fields)](const Json& j, const std::string& k) { r.read_table(j, k, fields); };
  };
  Rules& rules = c.rules;
  const Fields rule_fields = {
      {"nonfinite", table({{"enabled", flag(rules.nonfinite.enabled)}})},
      {"headroom", table({{"enabled", flag(rules.headroom.enabled)},
                          {"overflow_headroom", real(rules.headroom.overflow_headroom)},
                          {"underflow_fraction", real(rules.headroom.underflow_fraction)}})},
      {"gradients", table({{"enabled", flag(rules.gradients.enabled)},
                           {"min_history", integer(rules.gradients.min_history)},
                           {"explode_ratio", real(rules.gradients.explode_ratio)},
                           {"vanish_ratio", real(rules.gradients.vanish_ratio)},
                           {"min_layers", integer(rules.gradients.min_layers)},
                           {"explode_vs_layers", real(rules.gradients.explode_vs_layers)},
                           {"vanish_vs_layers", real(rules.gradients.vanish_vs_layers)}})},
      {"dead_units", table({{"enabled", flag(rules.dead_units.enabled)},
                            {"window", integer(rules.dead_units.window)},
                            {"min_fraction", real(rules.dead_units.min_fraction)},
                            {"max_units", integer64(rules.dead_units.max_units)}})},
      {"saturation", table({{"enabled", flag(rules.saturation.enabled)},
                            {"margin", real(rules.saturation.margin)},
                            {"gelu_cutoff", real(rules.saturation.gelu_cutoff)},
                            {"max_fraction", real(rules.saturation.max_fraction)}})},
      {"loss", table({{"enabled", flag(rules.loss.enabled)},
                      {"spike_factor", real(rules.loss.spike_factor)},
                      {"window", integer(rules.loss.window)},
                      {"min_window", integer(rules.loss.min_window)},
                      {"max_z", real(rules.loss.max_z)},
                      {"divergence_window", integer(rules.loss.divergence_window)},
                      {"divergence_factor", real(rules.loss.divergence_factor)}})},
      {"update_ratio", table({{"enabled", flag(rules.update_ratio.enabled)},
                              {"min_ratio", real(rules.update_ratio.min_ratio)},
                              {"max_ratio", real(rules.update_ratio.max_ratio)}})},
      {"weight_scale", table({{"enabled", flag(rules.weight_scale.enabled)},
                              {"min_init", real(rules.weight_scale.min_init)},
                              {"max_init", real(rules.weight_scale.max_init)},
                              {"max_drift", real(rules.weight_scale.max_drift)}})},
      {"spectral", table({{"enabled", flag(rules.spectral.enabled)},
                          {"every", integer(rules.spectral.every)},
                          {"max_iterations", integer(rules.spectral.max_iterations)},
                          {"tolerance", real(rules.spectral.tolerance)},
                          {"min_stable_rank", real(rules.spectral.min_stable_rank)},
                          {"max_growth", real(rules.spectral.max_growth)},
                          {"max_elements", integer64(rules.spectral.max_elements)}})},
  };
  const Fields top = {
      {"run_dir",
       [&](const Json& j, const std::string& k) {
         if (!j.is_string()) r.fail(k, "expected a path string, got " + j.dump());
         const std::filesystem::path p = j.get<std::string>();
         c.run_dir = p.is_relative() && !p.empty() ? base / p : p;
       }},
      {"tier",
       [&](const Json& j, const std::string& k) {
         const std::string v = j.is_string() ? j.get<std::string>() : "";
         if (v == "watch") {
           c.tier = Tier::watch;
         } else if (v == "diagnose") {
           c.tier = Tier::diagnose;
         } else {
           r.fail(k, "expected \"watch\" or \"diagnose\", got " + j.dump());
         }
       }},
      {"stop_on_error", flag(c.stop_on_error)},
      {"console", flag(c.console)},
      {"diagnose_steps", integer(c.diagnose_steps)},
      {"history_length", integer(c.history_length)},
      {"target_dtype",
       [&](const Json& j, const std::string& k) {
         const std::string v = j.is_string() ? j.get<std::string>() : "";
         for (const DType d : {DType::f16, DType::bf16, DType::f8_e4m3fn, DType::f8_e5m2, DType::f32}) {
           if (v == dtype_name(d)) {
             c.target_dtype = d;
             return;
           }
         }
         if (j.is_null() || v == "none") {
           c.target_dtype.reset();
           return;
         }
         r.fail(k, "expected one of \"f16\", \"bf16\", \"f8_e4m3fn\", \"f8_e5m2\", \"f32\", \"none\"; got " +
                       j.dump());
       }},
      {"flight_recorder", table({{"steps", integer(c.flight_recorder_steps)},
                                 {"after", integer(c.flight_recorder_after)},
                                 {"max_ops", integer(c.flight_recorder_max_ops)},
                                 {"moments_every", integer(c.flight_recorder_moments_every)}})},
      {"max_tracked", integer(c.max_tracked)},
      {"max_findings", integer(c.max_findings)},
      {"rules", table(rule_fields)},
      {"metrics", table({{"histogram_every", integer(c.metrics.histogram_every)},
                         {"max_histograms", integer(c.metrics.max_histograms)}})},
  };
  r.read_table(root, "", top);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open the run configuration");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shortest decimal that reads back as the same double.
std::string shortest(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return {buffer, result.ptr};
}

}  // namespace

std::vector<std::pair<std::string, std::string>> RunConfig::entries() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto text = [&out](std::string key, std::string value) {
    out.emplace_back(std::move(key), std::move(value));
  };
  auto flag = [&text](std::string key, bool value) { text(std::move(key), value ? "true" : "false"); };
  auto number = [&text](std::string key, double value) { text(std::move(key), shortest(value)); };
  auto integer = [&text](std::string key, std::int64_t value) {
    text(std::move(key), std::to_string(value));
  };
  text("run_dir", run_dir.string());
  text("tier", tier == Tier::watch ? "watch" : "diagnose");
  flag("stop_on_error", stop_on_error);
  flag("console", console);
  integer("diagnose_steps", diagnose_steps);
  integer("history_length", history_length);
  text("target_dtype", target_dtype ? std::string(dtype_name(*target_dtype)) : "none");
  integer("flight_recorder.steps", flight_recorder_steps);
  integer("flight_recorder.after", flight_recorder_after);
  integer("flight_recorder.max_ops", flight_recorder_max_ops);
  integer("flight_recorder.moments_every", flight_recorder_moments_every);
  integer("max_tracked", max_tracked);
  integer("max_findings", max_findings);
  integer("metrics.histogram_every", metrics.histogram_every);
  integer("metrics.max_histograms", metrics.max_histograms);
  flag("rules.nonfinite.enabled", rules.nonfinite.enabled);
  flag("rules.headroom.enabled", rules.headroom.enabled);
  number("rules.headroom.overflow_headroom", rules.headroom.overflow_headroom);
  number("rules.headroom.underflow_fraction", rules.headroom.underflow_fraction);
  flag("rules.gradients.enabled", rules.gradients.enabled);
  integer("rules.gradients.min_history", rules.gradients.min_history);
  number("rules.gradients.explode_ratio", rules.gradients.explode_ratio);
  number("rules.gradients.vanish_ratio", rules.gradients.vanish_ratio);
  integer("rules.gradients.min_layers", rules.gradients.min_layers);
  number("rules.gradients.explode_vs_layers", rules.gradients.explode_vs_layers);
  number("rules.gradients.vanish_vs_layers", rules.gradients.vanish_vs_layers);
  flag("rules.dead_units.enabled", rules.dead_units.enabled);
  integer("rules.dead_units.window", rules.dead_units.window);
  number("rules.dead_units.min_fraction", rules.dead_units.min_fraction);
  integer("rules.dead_units.max_units", rules.dead_units.max_units);
  flag("rules.saturation.enabled", rules.saturation.enabled);
  number("rules.saturation.margin", rules.saturation.margin);
  number("rules.saturation.gelu_cutoff", rules.saturation.gelu_cutoff);
  number("rules.saturation.max_fraction", rules.saturation.max_fraction);
  flag("rules.loss.enabled", rules.loss.enabled);
  number("rules.loss.spike_factor", rules.loss.spike_factor);
  integer("rules.loss.window", rules.loss.window);
  integer("rules.loss.min_window", rules.loss.min_window);
  number("rules.loss.max_z", rules.loss.max_z);
  integer("rules.loss.divergence_window", rules.loss.divergence_window);
  number("rules.loss.divergence_factor", rules.loss.divergence_factor);
  flag("rules.update_ratio.enabled", rules.update_ratio.enabled);
  number("rules.update_ratio.min_ratio", rules.update_ratio.min_ratio);
  number("rules.update_ratio.max_ratio", rules.update_ratio.max_ratio);
  flag("rules.weight_scale.enabled", rules.weight_scale.enabled);
  number("rules.weight_scale.min_init", rules.weight_scale.min_init);
  number("rules.weight_scale.max_init", rules.weight_scale.max_init);
  number("rules.weight_scale.max_drift", rules.weight_scale.max_drift);
  flag("rules.spectral.enabled", rules.spectral.enabled);
  integer("rules.spectral.every", rules.spectral.every);
  integer("rules.spectral.max_iterations", rules.spectral.max_iterations);
  number("rules.spectral.tolerance", rules.spectral.tolerance);
  number("rules.spectral.min_stable_rank", rules.spectral.min_stable_rank);
  number("rules.spectral.max_growth", rules.spectral.max_growth);
  integer("rules.spectral.max_elements", rules.spectral.max_elements);
  std::sort(out.begin(), out.end());
  return out;
}

RunConfig RunConfig::from_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string extension = path.extension().string();
  const std::string text = read_file(path);
  Json root;
  if (extension == ".json") {
    try {
      root = Json::parse(text);
    } catch (const Json::parse_error& e) {
      throw Error(name + ": not valid JSON: " + e.what());
    }
  } else if (extension == ".toml") {
    try {
      root = toml_to_json(toml::parse(text, name));
    } catch (const toml::parse_error& e) {
      const auto& where = e.source().begin;
      throw Error(name + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                  ": not valid TOML: " + std::string(e.description()));
    }
  } else {
    throw Error(name + ": unknown run configuration format '" + extension + "' (expected .json or .toml)");
  }
  RunConfig config;
  apply(root, config, Reader(name), path.parent_path());
  try {
    config.validate();
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return config;
}

void RunConfig::validate() const {
  auto positive = [](const char* key, double value) {
    if (!(value > 0)) throw Error(std::string(key) + ": must be > 0, got " + std::to_string(value));
  };
  auto fraction = [](const char* key, double value) {
    if (!(value >= 0 && value <= 1))
      throw Error(std::string(key) + ": must be in [0, 1], got " + std::to_string(value));
  };
  positive("history_length", history_length);
  positive("flight_recorder.steps", flight_recorder_steps);
  positive("flight_recorder.moments_every", flight_recorder_moments_every);
  positive("max_tracked", max_tracked);
  if (diagnose_steps < 0) throw Error("diagnose_steps: must be >= 0");
  if (metrics.histogram_every < 0) throw Error("metrics.histogram_every: must be >= 0 (0: never)");
  if (metrics.max_histograms < 0) throw Error("metrics.max_histograms: must be >= 0");
  if (flight_recorder_after < 0 || flight_recorder_after >= flight_recorder_steps)
    throw Error("flight_recorder.after: must be in [0, flight_recorder.steps), got " +
                std::to_string(flight_recorder_after));
  positive("rules.headroom.overflow_headroom", rules.headroom.overflow_headroom);
  fraction("rules.headroom.underflow_fraction", rules.headroom.underflow_fraction);
  positive("rules.gradients.explode_ratio", rules.gradients.explode_ratio);
  positive("rules.gradients.vanish_ratio", rules.gradients.vanish_ratio);
  if (rules.gradients.vanish_ratio >= rules.gradients.explode_ratio)
    throw Error("rules.gradients.vanish_ratio: must be below rules.gradients.explode_ratio");
  positive("rules.gradients.min_history", rules.gradients.min_history);
  positive("rules.gradients.min_layers", rules.gradients.min_layers);
  positive("rules.dead_units.window", rules.dead_units.window);
  fraction("rules.dead_units.min_fraction", rules.dead_units.min_fraction);
  positive("rules.saturation.margin", rules.saturation.margin);
  positive("rules.saturation.gelu_cutoff", rules.saturation.gelu_cutoff);
  if (rules.saturation.margin >= 0.5) throw Error("rules.saturation.margin: must be below 0.5");
  fraction("rules.saturation.max_fraction", rules.saturation.max_fraction);
  positive("rules.loss.spike_factor", rules.loss.spike_factor);
  positive("rules.loss.window", rules.loss.window);
  positive("rules.loss.min_window", rules.loss.min_window);
  positive("rules.loss.max_z", rules.loss.max_z);
  positive("rules.loss.divergence_window", rules.loss.divergence_window);
  positive("rules.loss.divergence_factor", rules.loss.divergence_factor);
  if (rules.update_ratio.min_ratio < 0 || rules.update_ratio.min_ratio >= rules.update_ratio.max_ratio)
    throw Error("rules.update_ratio: need 0 <= min_ratio < max_ratio");
  if (rules.weight_scale.min_init < 0 || rules.weight_scale.min_init >= rules.weight_scale.max_init)
    throw Error("rules.weight_scale: need 0 <= min_init < max_init");
  if (!(rules.weight_scale.max_drift > 1)) throw Error("rules.weight_scale.max_drift: must be > 1");
  positive("rules.spectral.every", rules.spectral.every);
  positive("rules.spectral.max_iterations", rules.spectral.max_iterations);
  positive("rules.spectral.tolerance", rules.spectral.tolerance);
  if (target_dtype && !is_floating(*target_dtype))
    throw Error("target_dtype: must be a floating-point dtype, got " +
                std::string(dtype_name(*target_dtype)));
}

}  // namespace tfdebug
