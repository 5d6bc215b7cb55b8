// The HTML report's page: style, scripts and data inline in one file, and the writers that put it
// on disk (tfdebug/export/html_report.hpp).
#include <cstdio>
#include <string>
#include <system_error>

#include "html_assets.hpp"
#include "html_data.hpp"
#include "html_escape.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/html_report.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {
namespace {

using detail::html_escaped;

// A script or a style sheet of ours inside its element: none of them contains "</" followed by
// the element's name (a test reads them), but a stray one would end the element early, so it
// is split the way JavaScript and CSS both read unchanged inside strings and comments.
std::string inline_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

namespace detail {

void write_page_atomically(const std::filesystem::path& out, const std::string& page) {
  std::filesystem::path tmp = out;
  tmp += ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "wb");
  if (file == nullptr) throw Error(out.string() + ": cannot be written (is its folder there and writable?)");
  const bool ok = std::fwrite(page.data(), 1, page.size(), file) == page.size();
  const bool closed = std::fclose(file) == 0;
  std::error_code ec;
  if (!ok || !closed) {
    std::filesystem::remove(tmp, ec);
    throw Error(out.string() + ": cannot be written (disk full?)");
  }
  std::filesystem::rename(tmp, out, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(out.string() + ": cannot be written: " + ec.message());
  }
}

}  // namespace detail

// Note [Script-safe JSON]: the page's data is JSON inside <script type="application/json">. The
// HTML parser ends that element at the first "</script" whatever the JSON means, and a "<!--"
// changes how it looks for the end; JavaScript before ES2019 ended string literals at U+2028 and
// U+2029. Names in the data come from files that may be hostile (Note [Quoted input] in
// src/io/quote.hpp), so every '<', '>' and '&' becomes a \u escape, and so do U+2028/U+2029
// (nlohmann's dump with ensure_ascii already writes them escaped; this holds for any JSON text).
// Outside strings JSON has none of these characters, so the escaped text parses to the same
// value. The page reads it with JSON.parse and sets it as text (textContent, SVG text nodes),
// never as markup: no text from a file is ever parsed as HTML or run.
std::string script_safe_json(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xa8' || json[i + 2] == '\xa9')) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// The page around its data. `connect`: the origins the page's scripts may request (the live
// dashboard's event stream: 'self'); empty for a report, which requests nothing.
std::string page_with(std::string_view kind, std::string_view title, std::string_view data_json,
                      std::string_view connect) {
  std::string page;
  page.reserve(data_json.size() + 96 * 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // Nothing may be fetched: every script and style is inline, images are data: URLs.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";
  if (!connect.empty()) {
    page += "; connect-src ";
    page += connect;
  }
  page += "\">\n";
  page += "<meta name=\"generator\" content=\"tfdebug " TFDEBUG_VERSION_STRING "\">\n";
  page += "<title>" + html_escaped(title) + " — tfdebug</title>\n<style>\n";
  page += inline_text(detail::html_css());
  page += "</style>\n</head>\n<body data-kind=\"" + html_escaped(kind) + "\">\n";
  page +=
      "<noscript><p class=\"noscript\">This report draws its charts and tables with JavaScript; "
      "allow scripts for this file to see it.</p></noscript>\n";
  page += "<script type=\"application/json\" id=\"tfdebug-data\">";
  page += script_safe_json(data_json);
  page += "</script>\n<script>\n";
  for (const std::string_view script :
       {detail::html_js_common(), detail::html_js_charts(), detail::html_js_table(), detail::html_js_tree(),
        detail::html_js_graph(), detail::html_js_run(), detail::html_js_checkpoint(),
        detail::html_js_analysis(), detail::html_js_live()}) {
    page += inline_text(script);
    page += "\n";
  }
  page += "TF.start();\n</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace

std::string html_page(std::string_view kind, std::string_view title, std::string_view data_json) {
  return page_with(kind, title, data_json, {});
}

std::string html_live_page(std::string_view title) {
  const std::string data = R"({"kind":"live","generator":"tfdebug )" TFDEBUG_VERSION_STRING R"("})";
  return page_with("live", title, data, "'self'");
}

HtmlReportWritten write_run_html(const std::filesystem::path& run_dir, const std::filesystem::path& out,
                                 const HtmlReportOptions& options) {
  HtmlReportWritten written;
  const std::string data = run_report_data(run_dir, options, &written);
  std::string title = options.title;
  if (title.empty()) {
    // The run directory as the user named it.
    title = run_dir.lexically_normal().string();
    while (title.size() > 1 && title.back() == '/') title.pop_back();
  }
  const std::string page = html_page("run", title, data);
  detail::write_page_atomically(out, page);
  written.bytes = page.size();
  return written;
}

HtmlReportWritten write_inspection_html(const inspect::Inspection& inspection,
                                        const std::filesystem::path& out, const HtmlReportOptions& options) {
  HtmlReportWritten written;
  const std::string data = inspection_report_data(inspection, options, &written);
  std::string title = options.title;
  if (title.empty() && !inspection.files.empty())
    title = std::filesystem::path(inspection.files.front().path).filename().string();
  const std::string page = html_page("checkpoint", title.empty() ? "checkpoint" : title, data);
  detail::write_page_atomically(out, page);
  written.bytes = page.size();
  return written;
}

}  // namespace tfdebug
