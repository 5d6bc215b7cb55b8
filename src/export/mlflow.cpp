// MLflow's file store, written from its documented layout (../shared/reference/formats.md
// section 5): block YAML with sorted keys for meta.yaml, one file per metric/param/tag.
#include "tfdebug/export/mlflow.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

namespace fs = std::filesystem;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void write_text(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !(out << text)) throw Error(path.string() + ": cannot write");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A YAML plain scalar when safe, else single-quoted (quotes doubled).
std::string yaml_string(const std::string& s) {
  bool plain = !s.empty() && s.find_first_of(":#'\"{}[],&*!|>%@`\n") == std::string::npos &&
               s.front() != ' ' && s.back() != ' ' && s.front() != '-' && s.front() != '?';
  if (plain) {  // words YAML would read as something else
    for (const char* special : {"null", "true", "false", "yes", "no", "on", "off", "~"})
      plain = plain && s != special;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    plain = plain && end != s.c_str() + s.size();
  }
  if (plain) return s;
  std::string out = "'";
  for (const char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

void check_key(const std::string& key) {
  bool ok = !key.empty() && key.front() != '/' && key.find("..") == std::string::npos;
  for (const char c : key) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ' ' ||
                c == '/');
  }
  if (!ok) {
    throw Error("MLflow key '" + key +
                "' may hold only letters, digits, _ - . space and / (not at the start, no ..)");
  }
}

std::string random_hex(std::size_t digits) {
  std::random_device device;
  std::mt19937_64 rng((static_cast<std::uint64_t>(device()) << 32) ^ device());
  static const char* const kHex = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < digits; ++i) s += kHex[rng() & 15];
  return s;
}

std::string file_uri(const fs::path& p) {
  return "file://" + fs::absolute(p).lexically_normal().string();
}

// The experiment's name as its meta.yaml writes it ("name: <value>").
std::string experiment_name(const fs::path& meta) {
  const std::string text = read_text(meta);
  const std::size_t at = text.find("\nname: ");
  if (at == std::string::npos) return {};
  std::string value = text.substr(at + 7, text.find('\n', at + 7) - (at + 7));
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
    std::string unquoted;
    for (std::size_t i = 1; i + 1 < value.size(); ++i) {
      unquoted += value[i];
      if (value[i] == '\'' && value[i + 1] == '\'') ++i;
    }
    return unquoted;
  }
  return value;
}

void write_experiment(const fs::path& dir, const std::string& id, const std::string& name) {
  const std::string ms = std::to_string(now_ms());
  write_text(dir / "meta.yaml", "artifact_location: " + file_uri(dir) + "\ncreation_time: " + ms +
                                    "\nexperiment_id: '" + id + "'\nlast_update_time: " + ms +
                                    "\nlifecycle_stage: active\nname: " + yaml_string(name) + "\n");
}

}  // namespace

std::string python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form, then Python's repr layout: scientific when
  // the exponent is < -4 or >= 16, else positional with at least one digit after the point.
  char buffer[64];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific).ptr;
  const std::string sci(buffer, end);
  const std::size_t e = sci.find('e');
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const bool negative = sci.front() == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out.append(digits, 0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1, std::string::npos);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out.append(exp);
  }
  if (exponent < 0) {
    out.append("0.").append(static_cast<std::size_t>(-exponent - 1), '0').append(digits);
    return out;
  }
  const auto int_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    out.append(digits).append(int_digits - digits.size(), '0').append(".0");
    return out;
  }
  out.append(digits, 0, int_digits).append(".").append(digits, int_digits, std::string::npos);
  return out;
}

MlflowRun::MlflowRun(const std::string& mlruns, const std::string& experiment, const std::string& run_name)
    : run_name_(run_name) {
  const fs::path root(mlruns);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error(mlruns + ": cannot create the MLflow store: " + ec.message());
  if (!fs::exists(root / "0" / "meta.yaml")) write_experiment(root / "0", "0", "Default");
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory() && fs::exists(entry.path() / "meta.yaml") &&
        experiment_name(entry.path() / "meta.yaml") == experiment) {
      experiment_id_ = entry.path().filename().string();
      break;
    }
  }
  if (experiment_id_.empty()) {
    std::mt19937_64 rng(std::random_device{}());
    do {
      experiment_id_ = std::to_string(100000000000000000ull + rng() % 800000000000000000ull);
    } while (fs::exists(root / experiment_id_));
    write_experiment(root / experiment_id_, experiment_id_, experiment);
  }
  run_id_ = random_hex(32);
  run_dir_ = (root / experiment_id_ / run_id_).string();
  fs::create_directories(fs::path(run_dir_) / "artifacts", ec);
  fs::create_directories(fs::path(run_dir_) / "metrics", ec);
  fs::create_directories(fs::path(run_dir_) / "params", ec);
  if (ec) throw Error(run_dir_ + ": cannot create the run: " + ec.message());
  start_ms_ = now_ms();
  write_meta("1", "null");
  set_tag("mlflow.runName", run_name_);
  set_tag("mlflow.source.name", "tfdebug");
  set_tag("mlflow.source.type", "LOCAL");
}

MlflowRun::~MlflowRun() {
  if (finished_) return;
  try {
    finish();
  } catch (const Error&) {  // a destructor has nobody to report to
  }
}

void MlflowRun::write_meta(const char* status, const std::string& end_time) {
  const char* user = std::getenv("USER");
  write_text(fs::path(run_dir_) / "meta.yaml",
             "artifact_uri: " + file_uri(fs::path(run_dir_) / "artifacts") + "\nend_time: " + end_time +
                 "\nentry_point_name: ''\nexperiment_id: '" + experiment_id_ +
                 "'\nlifecycle_stage: active\nrun_id: " + run_id_ + "\nrun_name: " + yaml_string(run_name_) +
                 "\nrun_uuid: " + run_id_ +
                 "\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: " +
                 std::to_string(start_ms_) + "\nstatus: " + status +
                 "\ntags: []\nuser_id: " + yaml_string(user != nullptr ? user : "tfdebug") + "\n");
}

void MlflowRun::log_param(const std::string& key, const std::string& value) {
  check_key(key);
  write_text(fs::path(run_dir_) / "params" / key, value);
}

void MlflowRun::set_tag(const std::string& key, const std::string& value) {
  check_key(key);
  write_text(fs::path(run_dir_) / "tags" / key, value);
}

void MlflowRun::log_metric(const std::string& key, double value, std::int64_t step) {
  check_key(key);
  const fs::path path = fs::path(run_dir_) / "metrics" / key;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out || !(out << now_ms() << ' ' << python_float(value) << ' ' << step << '\n')) {
    throw Error(path.string() + ": cannot write");
  }
}

void MlflowRun::log_metrics(std::span<const MlflowMetric> points) {
  std::map<std::string_view, std::string> lines;  // by key: the lines to append
  for (const MlflowMetric& p : points) {
    check_key(p.key);
    std::string& text = lines[p.key];
    text.append(std::to_string(p.timestamp_ms)).append(" ").append(python_float(p.value));
    text.append(" ").append(std::to_string(p.step)).append("\n");
  }
  for (const auto& [key, text] : lines) {
    const fs::path path = fs::path(run_dir_) / "metrics" / std::string(key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::app);
    if (!out || !(out << text)) throw Error(path.string() + ": cannot write");
  }
}

void MlflowRun::log_artifact(const std::string& path) {
  std::error_code ec;
  fs::copy_file(path, fs::path(run_dir_) / "artifacts" / fs::path(path).filename(),
                fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(path + ": cannot copy into the MLflow run: " + ec.message());
}

void MlflowRun::finish(bool failed) {
  if (finished_) return;
  finished_ = true;
  write_meta(failed ? "4" : "3", std::to_string(now_ms()));
}

}  // namespace tfdebug
