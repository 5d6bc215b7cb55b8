// Attention as one self-contained HTML page, in the manner of BertViz: a head view (one layer,
// heads selectable, a line from each query token to each key token, as opaque as its weight) and
// a model view (a grid of every layer x head, each a small heatmap). Scripts, style and data are
// inline and a Content-Security-Policy forbids every request, as the HTML report's
// (html_report.hpp). docs/interpretability.md shows it.
//
//   tfdebug::AttentionView view{.title = "demo", .tokens = {"3", "5", "0", "3"},
//                               .layers = {"blocks.0.attn"}, .heads = 4, .weights = w};
//   tfdebug::write_attention_html(view, "attention.html");
//
// Token texts and layer names are set as text by the page, never as markup.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tfdebug {

struct AttentionView {
  std::string title{};
  std::vector<std::string> tokens{};  // n token texts
  std::vector<std::string> layers{};  // layer names
  std::int64_t heads = 0;
  std::vector<double> weights{};  // [layers][heads][n][n], rows = queries
};

// The page's text; tfdebug::Error when the sizes disagree.
std::string attention_html(const AttentionView& view);
// Writes it (to a temporary file renamed into place); tfdebug::Error naming the path when it
// cannot be written.
void write_attention_html(const AttentionView& view, const std::filesystem::path& path);

}  // namespace tfdebug
