// Analyses beside a run (tfdebug/export/analysis.hpp): saved as one JSON record each under
// RUN_DIR/analyses/, read back for the run's page, or drawn on a page of their own.
#include "tfdebug/export/analysis.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "html_data.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/json_shape.hpp"
#include "tfdebug/core/read_file.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "tfdebug-analysis";
constexpr int kVersion = 1;
// A record is the command's --json object plus its PNGs in base64 (4/3 of kMaxAnalysisImageBytes each).
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t(160) << 20;
// The deepest result the commands write is an image's attributions, [C, H, W] inside the record.
constexpr std::size_t kMaxRecordDepth = 32;
constexpr std::size_t kMaxRecordKeys = 4096;
constexpr std::size_t kMaxTitle = 300;

bool known_kind(std::string_view kind) {
  return kind == "explain" || kind == "attack" || kind == "robust";
}

constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const auto v = std::uint32_t(std::uint8_t(bytes[i])) << 16 |
                   std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 | std::uint32_t(std::uint8_t(bytes[i + 2]));
    for (int shift = 18; shift >= 0; shift -= 6) out += kBase64[(v >> shift) & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += rest == 2 ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// The bytes the first 16 characters of base64 text stand for (12), or "" when they are not base64.
std::string base64_prefix(std::string_view text) {
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < text.size() && i < 16; ++i) {
    const std::size_t at = kBase64.find(text[i]);
    if (at == std::string_view::npos) return {};
    bits = bits << 6 | std::uint32_t(at);
    if (++count == 4) {
      out += char((bits >> 16) & 0xff);
      out += char((bits >> 8) & 0xff);
      out += char(bits & 0xff);
      bits = 0;
      count = 0;
    }
  }
  return out;
}

constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};

// Base64 of a PNG as the page embeds it in a data: URL: the alphabet only, a PNG's signature first.
bool png_base64(std::string_view text) {
  if (text.size() < 16 || text.size() % 4 != 0) return false;
  const std::size_t body = text.find_first_not_of(kBase64);
  if (body != std::string_view::npos) {
    // Only padding may follow the alphabet, at most two '='.
    if (text.size() - body > 2 || text.find_first_not_of('=', body) != std::string_view::npos) return false;
  }
  return base64_prefix(text).starts_with(kPngSignature);
}

json image_record(const std::filesystem::path& path) {
  const std::string bytes = read_regular_file(path.string(), kMaxAnalysisImageBytes, "a PNG image");
  if (!std::string_view(bytes).starts_with(kPngSignature))
    throw Error(path.string() + ": not a PNG file (its first bytes are not PNG's signature)");
  return {{"name", path.filename().string()}, {"png", base64(bytes)}};
}

json make_record(const Analysis& a) {
  if (!known_kind(a.kind)) throw Error("analysis kind '" + a.kind + "': expected explain, attack or robust");
  json result = json::parse(a.result_json, nullptr, false);
  if (result.is_discarded() || !result.is_object())
    throw Error("analysis '" + a.title + "': the result is not a JSON object");
  if (a.images.size() > kMaxAnalysisImages)
    throw Error("analysis '" + a.title + "': " + std::to_string(a.images.size()) + " images, at most " +
                std::to_string(kMaxAnalysisImages));
  json images = json::array();
  for (const std::filesystem::path& p : a.images) images.push_back(image_record(p));
  return {{"format", kFormat},
          {"version", kVersion},
          {"kind", a.kind},
          {"title", a.title.substr(0, kMaxTitle)},
          {"written_by", "tfdebug " TFDEBUG_VERSION_STRING},
          {"result", std::move(result)},
          {"images", std::move(images)}};
}

// The number a record's file name starts with ("0007-explain.json": 7), or 0.
unsigned long record_number(const std::string& name) {
  const std::size_t dash = name.find('-');
  if (dash == 0 || dash == std::string::npos || dash > 9) return 0;
  unsigned long n = 0;
  for (std::size_t i = 0; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    n = n * 10 + static_cast<unsigned long>(name[i] - '0');
  }
  return n;
}

std::vector<std::filesystem::path> record_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (record_number(name) > 0 && name.ends_with(".json")) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end(), [](const std::filesystem::path& a, const std::filesystem::path& b) {
    const unsigned long na = record_number(a.filename().string()), nb = record_number(b.filename().string());
    return na != nb ? na < nb : a < b;
  });
  return files;
}

void write_new_file(const std::filesystem::path& path, const std::string& text) {
  // O_EXCL: a record another process saved under the same number is never replaced.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category());
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      std::error_code ec;
      std::filesystem::remove(path, ec);
      throw Error(path.string() + ": cannot be written: " + std::strerror(error));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw Error(path.string() + ": cannot be written (disk full?)");
}

// A record read back from a file that may be anything: the fields the page reads, checked.
json read_record(const std::filesystem::path& path) {
  const std::string text = read_regular_file(path.string(), kMaxRecordBytes, "a saved analysis");
  const JsonShape shape = json_shape(text);
  if (shape.depth > kMaxRecordDepth)
    throw Error("nested deeper than " + std::to_string(kMaxRecordDepth) + " levels");
  if (shape.max_keys > kMaxRecordKeys)
    throw Error("an object with more than " + std::to_string(kMaxRecordKeys) + " keys");
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw Error("not a JSON object");
  const auto string_field = [&](const char* key) -> std::string {
    const auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) throw Error(std::string("field '") + key + "': expected text");
    return it->get<std::string>();
  };
  if (string_field("format") != kFormat) throw Error("field 'format': expected \"tfdebug-analysis\"");
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() != kVersion)
    throw Error("field 'version': expected 1 (written by another tfdebug?)");
  const std::string kind = string_field("kind");
  if (!known_kind(kind)) throw Error("field 'kind': expected explain, attack or robust");
  const auto result = doc.find("result");
  if (result == doc.end() || !result->is_object()) throw Error("field 'result': expected an object");
  json images = json::array();
  if (const auto it = doc.find("images"); it != doc.end()) {
    if (!it->is_array() || it->size() > kMaxAnalysisImages)
      throw Error("field 'images': expected at most " + std::to_string(kMaxAnalysisImages) + " images");
    for (const json& image : *it) {
      if (!image.is_object() || !image.contains("png") || !image["png"].is_string() ||
          !png_base64(image["png"].get_ref<const std::string&>()))
        throw Error("field 'images': expected PNGs in base64");
      images.push_back({{"name", image.value("name", std::string("image.png")).substr(0, kMaxTitle)},
                        {"png", image["png"]}});
    }
  }
  return {{"kind", kind},
          {"title", string_field("title").substr(0, kMaxTitle)},
          {"file", path.filename().string()},
          {"written_by", doc.value("written_by", std::string())},
          {"result", std::move(*result)},
          {"images", std::move(images)}};
}

}  // namespace

std::filesystem::path save_analysis(const std::filesystem::path& run_dir, const Analysis& analysis) {
  const std::string text = detail::html_dump(make_record(analysis));
  const std::filesystem::path dir = run_dir / "analyses";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot be created: " + ec.message());
  const std::vector<std::filesystem::path> existing = record_files(dir);
  unsigned long next = existing.empty() ? 1 : record_number(existing.back().filename().string()) + 1;
  for (int attempt = 0; attempt < 1000; ++attempt, ++next) {
    std::array<char, 16> number{};
    std::snprintf(number.data(), number.size(), "%04lu", next);
    std::filesystem::path path = dir / (std::string(number.data()) + "-" + analysis.kind + ".json");
    try {
      write_new_file(path, text);
      return path;
    } catch (const std::system_error& e) {
      if (e.code() != std::errc::file_exists)
        throw Error(path.string() + ": cannot be written: " + e.code().message());
    }
  }
  throw Error(dir.string() + ": no free record name after 1000 tries");
}

namespace detail {

json html_analyses(const std::filesystem::path& run_dir, std::size_t max, json& notes) {
  json out = json::array();
  const std::filesystem::path dir = run_dir / "analyses";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  std::vector<std::filesystem::path> files = record_files(dir);
  if (files.size() > max) {
    notes.push_back("The page shows the newest " + std::to_string(max) + " of " +
                    std::to_string(files.size()) + " analyses in " + dir.string() + ".");
    files.erase(files.begin(), files.end() - static_cast<std::ptrdiff_t>(max));
  }
  for (const std::filesystem::path& file : files) {
    try {
      out.push_back(read_record(file));
    } catch (const Error& e) {
      std::string why = e.what();
      // read_regular_file names the path itself; the others are about the record's fields.
      if (!why.starts_with(file.string())) why = file.string() + ": " + why;
      notes.push_back(why + " (left out)");
    }
  }
  return out;
}

}  // namespace detail

HtmlReportWritten write_analysis_html(const std::vector<Analysis>& analyses, const std::filesystem::path& out,
                                      const HtmlReportOptions& options) {
  json records = json::array();
  for (const Analysis& a : analyses) {
    json record = make_record(a);
    records.push_back({{"kind", record["kind"]},
                       {"title", record["title"]},
                       {"file", out.filename().string()},
                       {"written_by", record["written_by"]},
                       {"result", std::move(record["result"])},
                       {"images", std::move(record["images"])}});
  }
  const json doc = {{"kind", "analysis"},
                    {"generator", "tfdebug " TFDEBUG_VERSION_STRING},
                    {"analyses", std::move(records)},
                    {"notes", json::array()}};
  std::string title = options.title;
  if (title.empty()) title = analyses.size() == 1 ? analyses.front().title : "analyses";
  const std::string page = html_page("analysis", title, detail::html_dump(doc));
  detail::write_page_atomically(out, page);
  HtmlReportWritten written;
  written.bytes = page.size();
  return written;
}

}  // namespace tfdebug
