// Text for HTML: the one escape of the export pages (the HTML report, the attention page).
// Private to tfdebug::export.
#pragma once

#include <string>
#include <string_view>

namespace tfdebug::detail {

// Text for an HTML element's content or an attribute value.
inline std::string html_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace tfdebug::detail
