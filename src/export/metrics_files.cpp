#include "tfdebug/export/metrics_files.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "step_scalars.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {

namespace {

// NaN and Inf are not JSON: null.
nlohmann::ordered_json number(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

// Which non-finite value it is: JSON's null does not say ("nan", "inf", "-inf").
const char* nonfinite_name(double value) {
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

// `key`: the value, or null and `key`_nonfinite naming which (docs/exports.md, "metrics.jsonl").
void put(nlohmann::ordered_json& object, const std::string& key, double value) {
  object[key] = number(value);
  if (!std::isfinite(value)) object[key + "_nonfinite"] = nonfinite_name(value);
}

// The shortest decimal that reads back as the same double; "nan", "inf", "-inf" as Python's
// float() and pandas read them.
std::string csv_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return {buffer, result.ptr};
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

}  // namespace

MetricsFileSink::MetricsFileSink(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) throw Error(path_.string() + ": cannot create: " + std::strerror(errno));
}

MetricsFileSink::~MetricsFileSink() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsFileSink::write(const std::string& text) {
  if (file_ == nullptr) throw Error(path_.string() + ": already closed (the run has ended)");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    throw Error(path_.string() + ": cannot write: " + std::strerror(errno));
}

void MetricsFileSink::on_run_end(const RunSummary& summary) {
  (void)summary;
  if (file_ == nullptr) return;
  const int status = std::fclose(file_);
  file_ = nullptr;
  if (status != 0) throw Error(path_.string() + ": cannot close: " + std::strerror(errno));
}

void JsonlMetricsSink::on_step(const StepMetrics& m) {
  nlohmann::ordered_json modules = nlohmann::ordered_json::object();
  for (const ModuleMetrics& module : m.modules) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    if (module.grad_norm) put(entry, "grad_norm", *module.grad_norm);
    if (module.update_ratio) put(entry, "update_ratio", *module.update_ratio);
    if (const auto& a = module.activations) {
      entry["activations"] = {{"outputs", a->outputs},
                              {"values", a->values},
                              {"nonfinite", a->nonfinite},
                              {"zero_fraction", number(a->zero_fraction())},
                              {"abs_max", number(a->abs_max)},
                              {"dead_fraction", a->dead_fraction ? number(*a->dead_fraction) : nullptr}};
    }
    modules[detail::module_label(module.module)] = std::move(entry);
  }
  nlohmann::ordered_json line = {{"step", m.step}, {"loss", nullptr}};
  if (m.loss) put(line, "loss", *m.loss);
  line["modules"] = std::move(modules);
  write(line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

CsvMetricsSink::CsvMetricsSink(std::filesystem::path path) : MetricsFileSink(std::move(path)) {
  write("step,metric,module,value\n");
}

void CsvMetricsSink::on_step(const StepMetrics& m) {
  std::string text;
  detail::for_each_scalar(m, [&](std::string_view metric, const std::string& module, double value) {
    text.append(std::to_string(m.step)).append(",").append(metric).append(",").append(csv_field(module));
    text.append(",").append(csv_number(value)).append("\n");
  });
  write(text);
}

}  // namespace tfdebug
