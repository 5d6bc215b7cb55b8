// The attention page (attention_view.hpp). Its script and style are real files under html/
// (attention_view.js, attention_view.css), embedded like the report's.
#include "tfdebug/export/attention_view.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "html_assets.hpp"
#include "html_escape.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/html_report.hpp"

namespace tfdebug {
namespace {

using detail::html_escaped;

}  // namespace

std::string attention_html(const AttentionView& view) {
  const auto n = view.tokens.size();
  if (view.layers.empty() || view.heads <= 0 || n == 0 ||
      view.weights.size() != view.layers.size() * static_cast<std::size_t>(view.heads) * n * n) {
    throw Error("attention view: " + std::to_string(view.weights.size()) + " weights for " +
                std::to_string(view.layers.size()) + " layers x " + std::to_string(view.heads) + " heads x " +
                std::to_string(n) + "^2 tokens");
  }
  nlohmann::json data = {
      {"title", view.title}, {"tokens", view.tokens}, {"layers", view.layers}, {"heads", view.heads}};
  // Six significant digits: what a line's opacity or a cell's colour can show, and a small page.
  nlohmann::json weights = nlohmann::json::array();
  for (const double w : view.weights) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", std::isfinite(w) ? w : 0.0);
    weights.push_back(std::stod(text));
  }
  data["weights"] = std::move(weights);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n";
  page += "<title>" + html_escaped(view.title) + " — attention — tfdebug</title>\n<style>\n";
  page += detail::html_css_attention();
  page += "</style>\n</head>\n<body>\n<script type=\"application/json\" id=\"attention-data\">";
  page += script_safe_json(data.dump());
  page += "</script>\n<script>\n";
  page += detail::html_js_attention();
  page += "\n</script>\n</body>\n</html>\n";
  return page;
}

void write_attention_html(const AttentionView& view, const std::filesystem::path& path) {
  const std::string page = attention_html(view);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(page.data(), static_cast<std::streamsize>(page.size()));
    if (!out.flush()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw Error(path.string() + ": cannot be written (is its folder there and writable?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(path.string() + ": cannot be written: " + ec.message());
  }
}

}  // namespace tfdebug
