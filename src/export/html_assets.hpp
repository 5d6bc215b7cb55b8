// The HTML report's style and scripts (src/export/html/), embedded by cmake/EmbedText.cmake into
// the generated html_assets.cpp.
#pragma once

#include <string_view>

namespace tfdebug::detail {

std::string_view html_css();
std::string_view html_js_common();
std::string_view html_js_charts();
std::string_view html_js_table();
std::string_view html_js_tree();
std::string_view html_js_graph();
std::string_view html_js_run();
std::string_view html_js_checkpoint();
std::string_view html_js_analysis();
std::string_view html_js_live();
// The attention page's (attention_view.cpp).
std::string_view html_css_attention();
std::string_view html_js_attention();

}  // namespace tfdebug::detail
