// metrics.jsonl read back: the inverse of JsonlMetricsSink::on_step (metrics_files.cpp).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/json_shape.hpp"
#include "tfdebug/export/metrics_files.hpp"

namespace tfdebug {

namespace {

// Not ordered_json: it checks each new key against the ones before, a cost that grows with the
// square of a model's modules. The modules are put back in the writer's order (by path) below.
using Json = nlohmann::json;

// A step's line is at most this long; a longer one is not one of ours (and would cost memory).
constexpr std::size_t kMaxLine = std::size_t(16) << 20;
// step → modules → module → activations → value.
constexpr std::size_t kMaxDepth = 4;

// A field's name comes from the file: control characters (an escape sequence, a line break)
// become '?', so that the error stays one plain line.
std::string printable(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

class LineFields {
 public:
  LineFields(const std::filesystem::path& path, std::int64_t line)
      : where_(path.string() + ": line " + std::to_string(line)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw Error(where_ + ": field '" + printable(field) + "': expected " + expected);
  }
  const std::string& where() const noexcept { return where_; }

  std::int64_t count(const Json& object, const std::string& prefix, const char* key) const {
    const auto it = object.find(key);
    const bool valid = it != object.end() && it->is_number_integer() &&
                       (it->is_number_unsigned() ? it->get<std::uint64_t>() <= std::uint64_t(INT64_MAX)
                                                 : it->get<std::int64_t>() >= 0);
    if (!valid) fail(prefix + key, "a count (an integer >= 0)");
    return it->get<std::int64_t>();
  }
  // A number, or null: NaN, or which non-finite value `key`_nonfinite names.
  double number(const Json& object, const std::string& prefix, const std::string& key) const {
    const Json& value = object.at(key);
    if (value.is_number()) return value.get<double>();
    if (!value.is_null()) fail(prefix + key, "a number or null");
    const auto named = object.find(key + "_nonfinite");
    if (named == object.end()) return std::numeric_limits<double>::quiet_NaN();
    if (named->is_string()) {
      const auto& text = named->get_ref<const std::string&>();
      if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (text == "inf") return std::numeric_limits<double>::infinity();
      if (text == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(prefix + key + "_nonfinite", "\"nan\", \"inf\" or \"-inf\"");
  }
  std::optional<double> optional_number(const Json& object, const std::string& prefix,
                                        const char* key) const {
    if (!object.contains(key)) return std::nullopt;
    return number(object, prefix, key);
  }

 private:
  std::string where_;
};

ActivationSummary read_activations(const LineFields& f, const Json& a, const std::string& prefix) {
  if (!a.is_object()) f.fail(prefix.substr(0, prefix.size() - 1), "an object");
  ActivationSummary out;
  out.outputs = f.count(a, prefix, "outputs");
  out.values = f.count(a, prefix, "values");
  out.nonfinite = f.count(a, prefix, "nonfinite");
  if (!a.contains("zero_fraction")) f.fail(prefix + "zero_fraction", "a number");
  const double zero_fraction = f.number(a, prefix, "zero_fraction");
  if (!(zero_fraction >= 0 && zero_fraction <= 1)) f.fail(prefix + "zero_fraction", "a fraction in [0, 1]");
  // zeros / values read back as the same fraction: the count is that fraction of the values.
  out.zeros = std::llround(zero_fraction * double(out.values));
  if (!a.contains("abs_max")) f.fail(prefix + "abs_max", "a number");
  out.abs_max = f.number(a, prefix, "abs_max");
  if (a.contains("dead_fraction") && !a.at("dead_fraction").is_null())
    out.dead_fraction = f.number(a, prefix, "dead_fraction");
  return out;
}

StepMetrics read_line(const std::filesystem::path& path, std::int64_t number, const std::string& line) {
  const LineFields f(path, number);
  if (json_shape(line).depth > kMaxDepth)
    throw Error(f.where() + ": nested deeper than " + std::to_string(kMaxDepth) +
                " levels: not a line of metrics.jsonl");
  Json doc;
  try {
    doc = Json::parse(line);
  } catch (const Json::parse_error& e) {
    // Not e.what(): it quotes the bytes it read, which may be anything.
    throw Error(f.where() + ": not JSON (a syntax error at byte " + std::to_string(e.byte) +
                "): expected one step's metrics");
  } catch (const Json::out_of_range&) {  // 1e400: the parser's number overflow
    throw Error(f.where() + ": a number beyond the range of a double: expected one step's metrics");
  }
  if (!doc.is_object()) f.fail("(the line)", "an object (one step's metrics)");
  StepMetrics m;
  const auto step = doc.find("step");
  if (step == doc.end() || !step->is_number_integer() ||
      (step->is_number_unsigned() && step->get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
    f.fail("step", "an integer");
  m.step = step->get<std::int64_t>();
  if (!doc.contains("loss")) f.fail("loss", "a number or null");
  if (!doc.at("loss").is_null() || doc.contains("loss_nonfinite")) m.loss = f.number(doc, "", "loss");
  const auto modules = doc.find("modules");
  if (modules == doc.end() || !modules->is_object()) f.fail("modules", "an object");
  for (const auto& [label, entry] : modules->items()) {
    const std::string prefix = "modules." + label + ".";
    if (!entry.is_object()) f.fail("modules." + label, "an object");
    ModuleMetrics module;
    module.module = label == "(top level)" ? std::string() : label;
    module.grad_norm = f.optional_number(entry, prefix, "grad_norm");
    module.update_ratio = f.optional_number(entry, prefix, "update_ratio");
    if (const auto a = entry.find("activations"); a != entry.end())
      module.activations = read_activations(f, *a, prefix + "activations.");
    m.modules.push_back(std::move(module));
  }
  // StepMetrics::modules are sorted by path, "" (the top level) first; the file's keys are labels.
  std::sort(m.modules.begin(), m.modules.end(),
            [](const ModuleMetrics& a, const ModuleMetrics& b) { return a.module < b.module; });
  return m;
}

struct FileCloser {
  void operator()(std::FILE* file) const noexcept { std::fclose(file); }
};

}  // namespace

MetricsFileRead read_metrics_jsonl(const std::filesystem::path& path,
                                   const std::function<void(const StepMetrics&)>& step, std::uint64_t from) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path.string() + ": not found: expected the per-step metrics a JsonlMetricsSink writes");
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  MetricsFileRead read;
  read.end_offset = from;
  if (from > 0 && ::fseeko(file.get(), static_cast<off_t>(from), SEEK_SET) != 0)
    throw Error(path.string() + ": cannot seek to byte " + std::to_string(from) + ": " +
                std::strerror(errno));
  std::string line;
  std::int64_t number = 0;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    for (std::size_t begin = 0; begin < n;) {
      const void* newline = std::memchr(buffer + begin, '\n', n - begin);
      const std::size_t end = newline ? std::size_t(static_cast<const char*>(newline) - buffer) : n;
      line.append(buffer + begin, end - begin);
      if (line.size() > kMaxLine)
        throw Error(path.string() + ": line " + std::to_string(number + 1) + ": longer than " +
                    std::to_string(kMaxLine >> 20) + " MiB: not a line of metrics.jsonl");
      begin = end;
      if (newline == nullptr) break;
      ++begin;
      ++number;
      read.end_offset += line.size() + 1;
      const StepMetrics m = read_line(path, number, line);
      line.clear();
      if (read.steps == 0) read.first_step = m.step;
      read.last_step = m.step;
      ++read.steps;
      step(m);
    }
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get())) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
  read.cut_off = !line.empty();
  return read;
}

}  // namespace tfdebug
