#include "tfdebug/session/run_report.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/json_shape.hpp"

namespace tfdebug {

namespace {

// Ordered: evidence and config keep the order they were written in.
using Json = nlohmann::ordered_json;

// Nesting deeper than any report's (findings[i].latest.evidence.key[j] is 5) is refused before
// parsing, and so are objects with more keys than a report's (its config has ~70; a rule's
// evidence a few): an ordered object checks each new key against the ones before, so its cost
// grows with the square of its keys, and 16 MiB of them would take minutes. Checked by a scan of
// the text, not the parser's callback, whose cost grows with the square of sibling objects.
constexpr std::size_t kMaxDepth = 16;
constexpr std::size_t kMaxKeys = 256;

void check_shape(const std::string& text, const std::filesystem::path& path) {
  const JsonShape shape = json_shape(text);
  if (shape.depth > kMaxDepth)
    throw Error(path.string() + ": nested deeper than " + std::to_string(kMaxDepth) +
                " levels: not a report.json");
  if (shape.max_keys > kMaxKeys)
    throw Error(path.string() + ": an object with more than " + std::to_string(kMaxKeys) +
                " keys: not a report.json");
}

// A field's name comes from the file: control characters (an escape sequence, a line break)
// become '?', so that the error stays one plain line.
std::string printable(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

class Fields {
 public:
  explicit Fields(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& expected) const {
    throw Error(file_ + ": field '" + printable(field) + "': expected " + expected);
  }
  const Json& member(const Json& parent, const std::string& where, const char* key) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(name(where, key), "it to be there");
    return *it;
  }
  const Json& object(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (!value.is_object()) fail(name(where, key), "an object");
    return value;
  }
  const Json& array(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (!value.is_array()) fail(name(where, key), "an array");
    return value;
  }
  std::int64_t integer(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (!value.is_number_integer() ||
        (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      fail(name(where, key), "an integer");
    return value.get<std::int64_t>();
  }
  // A number, or null for NaN and Inf (how report.json writes them).
  double number(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!value.is_number()) fail(name(where, key), "a number or null");
    return value.get<double>();
  }
  std::string text(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (!value.is_string()) fail(name(where, key), "a string");
    return value.get<std::string>();
  }
  bool boolean(const Json& parent, const std::string& where, const char* key) const {
    const Json& value = member(parent, where, key);
    if (!value.is_boolean()) fail(name(where, key), "true or false");
    return value.get<bool>();
  }
  static std::string name(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }

 private:
  std::string file_;
};

std::vector<Evidence> read_evidence(const Fields& f, const Json& parent, const std::string& where) {
  const Json& object = f.object(parent, where, "evidence");
  std::vector<Evidence> out;
  for (const auto& [key, value] : object.items()) {
    const std::string field = where + ".evidence." + key;
    if (value.is_null()) {
      out.emplace_back(key, std::numeric_limits<double>::quiet_NaN());
    } else if (value.is_number()) {
      out.emplace_back(key, value.get<double>());
    } else if (value.is_string()) {
      out.emplace_back(key, value.get<std::string>());
    } else if (value.is_array()) {
      std::vector<std::int64_t> list;
      for (const Json& x : value) {
        if (!x.is_number_integer() ||
            (x.is_number_unsigned() && x.get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
          f.fail(field, "a number, a string, null or a list of integers");
        list.push_back(x.get<std::int64_t>());
      }
      out.emplace_back(key, std::move(list));
    } else {
      f.fail(field, "a number, a string, null or a list of integers");
    }
  }
  return out;
}

std::optional<Occurrence> read_occurrence(const Fields& f, const Json& parent, const std::string& where,
                                          const char* key) {
  const Json& value = f.member(parent, where, key);
  if (value.is_null()) return std::nullopt;
  const std::string field = Fields::name(where, key);
  if (!value.is_object()) f.fail(field, "an object or null");
  Occurrence o;
  o.step = f.integer(value, field, "step");
  o.message = f.text(value, field, "message");
  o.evidence = read_evidence(f, value, field);
  o.magnitude = std::numeric_limits<double>::quiet_NaN();
  return o;
}

Finding read_finding(const Fields& f, const Json& value, const std::string& where) {
  if (!value.is_object()) f.fail(where, "an object (a finding)");
  Finding out;
  out.rule = f.text(value, where, "rule");
  const std::string severity = f.text(value, where, "severity");
  if (severity == "error") {
    out.severity = Severity::error;
  } else if (severity == "warning") {
    out.severity = Severity::warning;
  } else if (severity == "info") {
    out.severity = Severity::info;
  } else {
    f.fail(where + ".severity", "\"error\", \"warning\" or \"info\"");
  }
  out.step = f.integer(value, where, "step");
  const std::optional<Phase> phase = parse_phase(f.text(value, where, "phase"));
  if (!phase) f.fail(where + ".phase", "\"forward\", \"backward\" or \"optimizer\"");
  out.phase = *phase;
  out.module = f.text(value, where, "module");
  out.op = f.text(value, where, "op");
  out.message = f.text(value, where, "message");
  out.suggestion = f.text(value, where, "suggestion");
  out.count = f.integer(value, where, "count");
  out.last_step = f.integer(value, where, "last_step");
  out.evidence = read_evidence(f, value, where);
  out.latest = read_occurrence(f, value, where, "latest");
  out.worst = read_occurrence(f, value, where, "worst");
  return out;
}

Json parse(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path.string() + ": cannot read: " + ec.message());
  if (size > kMaxReportBytes)
    throw Error(path.string() + ": " + std::to_string(size) + " bytes: a report.json is at most " +
                std::to_string(kMaxReportBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  check_shape(text, path);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // Not e.what(): it quotes the bytes it read, which may be anything.
    throw Error(path.string() + ": not JSON (a syntax error at byte " + std::to_string(e.byte) +
                "): expected a report.json");
  } catch (const Json::out_of_range&) {  // 1e400: the parser's number overflow
    throw Error(path.string() + ": a number beyond the range of a double: not a report.json");
  }
}

}  // namespace

RunReport read_run_report(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path.string() + ": not found: expected the report.json a run with run_dir writes");
  const Json doc = parse(path);
  const Fields f(path.string());
  if (!doc.is_object()) f.fail("(top level)", "an object (a report.json)");
  if (f.text(doc, "", "tool") != "tfdebug") f.fail("tool", "\"tfdebug\"");
  RunReport report;
  report.version = f.text(doc, "", "version");
  RunSummary& s = report.summary;
  s.complete = doc.contains("complete") ? f.boolean(doc, "", "complete") : true;
  s.steps = f.integer(doc, "", "steps");
  s.first_step = f.integer(doc, "", "first_step");
  s.last_step = f.integer(doc, "", "last_step");
  s.observations = f.integer(doc, "", "observations");
  s.stopped = f.boolean(doc, "", "stopped");
  const Json& findings = f.array(doc, "", "findings");
  for (std::size_t i = 0; i < findings.size(); ++i)
    s.findings.push_back(read_finding(f, findings[i], "findings[" + std::to_string(i) + "]"));
  const Json& spectral = f.array(doc, "", "spectral");
  for (std::size_t i = 0; i < spectral.size(); ++i) {
    const std::string where = "spectral[" + std::to_string(i) + "]";
    const Json& m = spectral[i];
    if (!m.is_object()) f.fail(where, "an object");
    const std::int64_t iterations = f.integer(m, where, "iterations");
    if (iterations < 0 || iterations > std::numeric_limits<int>::max())
      f.fail(where + ".iterations", "a count of iterations");
    s.spectral.push_back({f.text(m, where, "module"), f.text(m, where, "parameter"),
                          f.integer(m, where, "step"), f.number(m, where, "spectral_norm"),
                          f.number(m, where, "stable_rank"), int(iterations)});
  }
  const Json& recorder = f.member(doc, "", "flight_recorder");
  if (recorder.is_string()) {
    s.flight_recorder = recorder.get<std::string>();
  } else if (!recorder.is_null()) {
    f.fail("flight_recorder", "a file name or null");
  }
  const Json& dropped = f.object(doc, "", "dropped");
  s.dropped_findings = f.integer(dropped, "dropped", "findings");
  s.untracked_observations = f.integer(dropped, "dropped", "untracked_observations");
  s.dropped_op_summaries = f.integer(dropped, "dropped", "op_summaries");
  s.dropped_sink_events = f.integer(dropped, "dropped", "sink_events");
  const Json& errors = f.array(doc, "", "hook_errors");
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i].is_string()) f.fail("hook_errors[" + std::to_string(i) + "]", "a string");
    s.hook_errors.push_back(errors[i].get<std::string>());
  }
  if (doc.contains("config")) {
    const Json& config = f.object(doc, "", "config");
    for (const auto& [key, value] : config.items()) {
      if (!value.is_string()) f.fail("config." + key, "a string");
      report.config.emplace_back(key, value.get<std::string>());
    }
  }
  return report;
}

}  // namespace tfdebug
