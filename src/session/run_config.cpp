#include "tfdebug/session/run_config.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/read_file.hpp"
#include "tfdebug/session/rule_registry.hpp"

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

std::string range_text(const SettingKey& spec) {
  const auto bound = [](std::int64_t v) {
    return v == INT64_MAX       ? std::string("2^63-1")
           : v == 1'000'000'000 ? std::string("1e9")
                                : std::to_string(v);
  };
  std::string text = "[";
  text.append(bound(spec.min));
  text.append(", ");
  text.append(bound(spec.max));
  text.push_back(']');
  return text;
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
  void read_double(const Json& j, const std::string& key, double& out) const {
    if (!j.is_number()) fail(key, "expected a number, got " + j.dump());
    out = j.get<double>();
  }

  SettingValue read_value(const Json& j, const std::string& key, const SettingKey& spec) const {
    switch (spec.kind) {
      case SettingKey::Kind::flag:
        if (!j.is_boolean()) fail(key, "expected true or false, got " + j.dump());
        return j.get<bool>();
      case SettingKey::Kind::integer: {
        if (!j.is_number_integer()) fail(key, "expected an integer, got " + j.dump());
        // A value beyond int64 reads as unsigned: out of range too.
        if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
          fail(key, "expected an integer in " + range_text(spec) + ", got " + j.dump());
        const auto v = j.get<std::int64_t>();
        if (v < spec.min || v > spec.max)
          fail(key, "expected an integer in " + range_text(spec) + ", got " + j.dump());
        return v;
      }
      case SettingKey::Kind::real: {
        double v = 0;
        read_double(j, key, v);
        return v;
      }
    }
    fail(key, "unknown kind of key");
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
  auto real = [&r](double& out) {
    return [&r, &out](const Json& j, const std::string& k) { r.read_double(j, k, out); };
  };
  auto table = [&r](Fields fields) {
    return
        [&r, fields = std::move(fields)](const Json& j, const std::string& k) { r.read_table(j, k, fields); };
  };
  // Note [Rule keys]: each rule declares its keys (RuleKeys), so [rules.<section>] is read from
  // the registered rules, with no list of them here.
  Fields rule_fields;
  for (const auto& info : RuleRegistry::instance().rules()) {
    rule_fields[info->section] = [&r, &c, info](const Json& j, const std::string& k) {
      void* settings = c.rules.slot(info->section, info->settings_type, info->make_settings).data();
      Fields fields;
      for (const SettingKey& key : info->keys) {
        const auto read = [&r, &key, settings](const Json& value, const std::string& full) {
          key.set(settings, r.read_value(value, full, key));
        };
        fields[key.name] = read;
        for (const std::string& old_name : key.aliases) fields[old_name] = read;
      }
      r.read_table(j, k, fields);
    };
  }
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
      {"sinks",
       table({{"queue", integer(c.sink_queue)}, {"finish_timeout_s", real(c.sink_finish_timeout_s)}})},
      {"rules", table(rule_fields)},
      {"metrics", table({{"histogram_every", integer(c.metrics.histogram_every)},
                         {"max_histograms", integer(c.metrics.max_histograms)}})},
  };
  r.read_table(root, "", top);
}

std::string read_file(const std::filesystem::path& path) {
  return read_regular_file(path.string(), 16 << 20, "the run configuration");
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
  integer("sinks.queue", sink_queue);
  number("sinks.finish_timeout_s", sink_finish_timeout_s);
  integer("metrics.histogram_every", metrics.histogram_every);
  integer("metrics.max_histograms", metrics.max_histograms);
  for (const auto& info : RuleRegistry::instance().rules()) {
    const detail::SettingsBase* held = rules.find(info->section);
    const auto defaults = held != nullptr ? nullptr : info->make_settings();
    const void* settings = held != nullptr ? held->data() : defaults->data();
    for (const SettingKey& key : info->keys) {
      const std::string name = "rules." + info->section + "." + key.name;
      const SettingValue value = key.get(settings);
      if (const bool* b = std::get_if<bool>(&value))
        flag(name, *b);
      else if (const std::int64_t* i = std::get_if<std::int64_t>(&value))
        integer(name, *i);
      else
        number(name, std::get<double>(value));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

RunConfig RunConfig::from_file(const std::filesystem::path& path) {
  return from_text(read_file(path), path);
}

RunConfig RunConfig::from_text(std::string_view text, const std::filesystem::path& path) {
  const std::string name = path.string();
  const std::string extension = path.extension().string();
  Json root;
  if (extension == ".json") {
    try {
      root = Json::parse(text);
    } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
      throw Error(name + ": not valid JSON: " + e.what());
    }
  } else if (extension == ".toml") {
    try {
      root = toml_to_json(toml::parse(text, std::string_view(name)));
    } catch (const toml::parse_error& e) {
      const auto& where = e.source().begin;
      throw Error(name + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                  ": not valid TOML: " + std::string(e.description()));
    }
  } else {
    throw Error(name + ": unknown run configuration format '" + extension + "' (expected .json or .toml)");
  }
  RunConfig config;
  try {
    apply(root, config, Reader(name), path.parent_path());
  } catch (const Json::exception& e) {  // a value the type checks let through: never the caller's crash
    throw Error(name + ": " + e.what());
  }
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
  positive("sinks.queue", sink_queue);
  positive("sinks.finish_timeout_s", sink_finish_timeout_s);
  if (diagnose_steps < 0) throw Error("diagnose_steps: must be >= 0");
  if (metrics.histogram_every < 0) throw Error("metrics.histogram_every: must be >= 0 (0: never)");
  if (metrics.max_histograms < 0) throw Error("metrics.max_histograms: must be >= 0");
  if (flight_recorder_after < 0 || flight_recorder_after >= flight_recorder_steps)
    throw Error("flight_recorder.after: must be in [0, flight_recorder.steps), got " +
                std::to_string(flight_recorder_after));
  for (const auto& info : RuleRegistry::instance().rules()) {
    const detail::SettingsBase* held = rules.find(info->section);
    if (held != nullptr && held->type() != info->settings_type)
      throw Error("rules." + info->section + ": held by another settings type than the rule registered");
    const auto defaults = held != nullptr ? nullptr : info->make_settings();
    const void* settings = held != nullptr ? held->data() : defaults->data();
    for (const SettingKey& key : info->keys) {
      if (key.range == Range::any) continue;
      const SettingValue value = key.get(settings);
      const double x = std::holds_alternative<double>(value) ? std::get<double>(value)
                                                             : double(std::get<std::int64_t>(value));
      const std::string name = "rules." + info->section + "." + key.name;
      if (key.range == Range::positive) positive(name.c_str(), x);
      if (key.range == Range::fraction) fraction(name.c_str(), x);
      if (key.range == Range::above_one && !(x > 1))
        throw Error(name + ": must be > 1, got " + std::to_string(x));
    }
    for (const auto& check : info->checks) check(settings);
  }
  if (target_dtype && !is_floating(*target_dtype))
    throw Error("target_dtype: must be a floating-point dtype, got " +
                std::string(dtype_name(*target_dtype)));
}

}  // namespace tfdebug
