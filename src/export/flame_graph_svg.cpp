// A self-contained flame-graph SVG (docs/profiling.md): frames merged by stack across the
// trace's threads (each thread a child of "all"), widths proportional to inclusive time, hover
// titles, click-to-zoom and regex search in inline JavaScript; no network access. Labels are
// fitted to their frames when the file is written (Note [Label fitting]), so viewers that do not
// run the script (rsvg-convert, Inkscape, an <img> tag) show no overlapping text.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tfdebug/export/flame_graph.hpp"

namespace tfdebug {
namespace {

struct Node {
  std::string name;
  std::int64_t total_ns = 0;
  std::map<std::string, std::unique_ptr<Node>> children;  // by name, as flamegraph.pl merges

  Node* child(const std::string& child_name) {
    auto& slot = children[child_name];
    if (!slot) {
      slot = std::make_unique<Node>();
      slot->name = child_name;
    }
    return slot.get();
  }
};

constexpr double kWidth = 1200;
constexpr double kFrameHeight = 16;
constexpr double kPad = 10;
constexpr double kTop = 40;

// Note [Label fitting]
// A label is trimmed to the cells that fit in its frame, ending in "…", or dropped when fewer
// than three cells fit; the full name stays in the frame's <title>. The font is monospace at
// kFontPx, so a label's width is its cell count times one advance. kCellPx is deliberately wider
// than the advances of the monospace fonts a viewer may pick (DejaVu Sans Mono, Menlo and
// Liberation Mono: 0.600-0.602 em, Consolas 0.55 em): 0.625 em, so a fitted label never reaches
// its frame's right edge whichever of them renders it. East Asian wide characters take two cells.
// The inline script applies the same rule (fit()) when a zoom gives frames new widths.
constexpr double kFontPx = 12;
constexpr double kCellPx = 0.625 * kFontPx;
constexpr double kLabelInset = 3;  // from the frame's left edge; the same margin on the right

// Whether a code point is drawn two cells wide (Unicode East Asian Width W/F, main blocks).
bool is_wide(std::uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

// One UTF-8 sequence from text[i]: its length in bytes and its cells. A byte that does not start a
// valid sequence counts as one byte of one cell, so trimming never splits a valid character.
std::pair<std::size_t, int> next_char(const std::string& text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 1;
  std::uint32_t cp = lead;
  if (lead >= 0xF0 && lead < 0xF8) {
    length = 4;
    cp = lead & 0x07u;
  } else if (lead >= 0xE0) {
    length = 3;
    cp = lead & 0x0Fu;
  } else if (lead >= 0xC0) {
    length = 2;
    cp = lead & 0x1Fu;
  }
  if (length > 1) {
    if (i + length > text.size()) return {1, 1};
    for (std::size_t k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xC0u) != 0x80u) return {1, 1};
      cp = (cp << 6) | (c & 0x3Fu);
    }
  }
  return {length, is_wide(cp) ? 2 : 1};
}

// The label drawn in a frame `width` pixels wide (Note [Label fitting]); empty when none fits.
std::string fitted_label(const std::string& name, double width) {
  const double room = width - 2 * kLabelInset;
  if (room < 3 * kCellPx) return {};
  const auto cells = static_cast<int>(room / kCellPx);
  int used = 0;
  std::size_t cut = 0;  // bytes of the name that fit with a one-cell ellipsis after them
  for (std::size_t i = 0; i < name.size();) {
    const auto [length, width_cells] = next_char(name, i);
    if (used + width_cells > cells) {
      if (cut == 0) return {};
      return name.substr(0, cut) + "\xE2\x80\xA6";
    }
    used += width_cells;
    i += length;
    if (used + 1 <= cells) cut = i;
  }
  return name;
}

std::string xml_escape(const std::string& text) {
  std::string out;
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
      default:
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

std::string time_label(std::int64_t ns) {
  char buf[32];
  const auto v = static_cast<double>(ns);
  if (ns >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.3f ms", v / 1e6);
  } else if (ns >= 1'000) {
    std::snprintf(buf, sizeof buf, "%.3f us", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  }
  return buf;
}

// A warm colour from the name, stable across runs (FNV-1a).
std::string colour(const std::string& name) {
  std::uint32_t h = 2166136261u;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130, 40 + (h >> 16) % 50);
  return buf;
}

std::size_t depth_of(const Node& node) {
  std::size_t deepest = 0;
  for (const auto& [name, child] : node.children) deepest = std::max(deepest, depth_of(*child));
  return deepest + 1;
}

void emit(std::ostream& out, const Node& node, std::int64_t root_total, std::int64_t start_ns,
          std::size_t depth, double height) {
  const double x =
      kPad + (kWidth - 2 * kPad) * static_cast<double>(start_ns) / static_cast<double>(root_total);
  const double w = (kWidth - 2 * kPad) * static_cast<double>(node.total_ns) / static_cast<double>(root_total);
  const double y = height - kPad - static_cast<double>(depth + 1) * kFrameHeight;
  char geometry[160];
  std::snprintf(geometry, sizeof geometry, "x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\"", x, y, w,
                kFrameHeight - 1);
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.2f%%",
                100.0 * static_cast<double>(node.total_ns) / static_cast<double>(root_total));
  const std::string name = xml_escape(node.name);
  const std::string label = xml_escape(fitted_label(node.name, w));
  out << "<g class=\"f\" data-ns=\"" << node.total_ns << "\" data-start=\"" << start_ns << "\" data-depth=\""
      << depth << "\"><title>" << name << " (" << time_label(node.total_ns) << ", " << percent
      << ")</title><rect " << geometry << " rx=\"2\" fill=\"" << colour(node.name) << "\"/><text x=\""
      << x + kLabelInset << "\" y=\"" << y + 11.5 << "\">" << label << "</text></g>\n";
  std::int64_t child_start = start_ns;
  for (const auto& [child_name, child] : node.children) {
    emit(out, *child, root_total, child_start, depth + 1, height);
    child_start += child->total_ns;
  }
}

const char* const kScript = R"JS(
const frames = Array.from(document.querySelectorAll('g.f'));
const W = 1200, PAD = 10, INNER = W - 2 * PAD;
// fitted_label() of the C++ writer (Note [Label fitting]); CELL and INSET come from it.
function isWide(c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
      (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) || (c >= 0x1F900 && c <= 0x1F9FF) ||
      (c >= 0x20000 && c <= 0x3FFFD);
}
function label(name, w) {
  const room = w - 2 * INSET;
  if (room < 3 * CELL) return '';
  const cells = Math.floor(room / CELL), chars = Array.from(name);
  let used = 0, cut = 0;
  for (let i = 0; i < chars.length; ++i) {
    const c = isWide(chars[i].codePointAt(0)) ? 2 : 1;
    if (used + c > cells) return cut === 0 ? '' : chars.slice(0, cut).join('') + '\u2026';
    used += c;
    if (used + 1 <= cells) cut = i + 1;
  }
  return name;
}
function fit(g, x, w) {
  const r = g.querySelector('rect'), t = g.querySelector('text');
  r.setAttribute('x', x); r.setAttribute('width', Math.max(w, 0));
  t.setAttribute('x', x + INSET);
  t.textContent = label(g.querySelector('title').textContent.replace(/ \([^()]*\)$/, ''), w);
}
function zoom(target) {
  const s = +target.dataset.start, n = +target.dataset.ns, d = +target.dataset.depth;
  for (const g of frames) {
    const gs = +g.dataset.start, gn = +g.dataset.ns, gd = +g.dataset.depth;
    const inside = gs >= s && gs + gn <= s + n && gd >= d;
    const above = gd < d && gs <= s && gs + gn >= s + n;
    g.style.display = inside || above ? '' : 'none';
    g.style.opacity = above ? 0.6 : 1;
    if (inside) fit(g, PAD + INNER * (gs - s) / n, INNER * gn / n);
    if (above) fit(g, PAD, INNER);
  }
}
function search() {
  const term = prompt('Search frames (regular expression)', '');
  if (term === null) return;
  let re;
  try { re = new RegExp(term); } catch (e) { alert(e.message); return; }
  const root = frames[0];
  let matched = 0;
  const spans = [];
  for (const g of frames) {
    const name = g.querySelector('title').textContent.replace(/ \([^()]*\)$/, '');
    const hit = term !== '' && re.test(name);
    g.querySelector('rect').style.fill = hit ? 'rgb(230,0,230)' : '';
    if (hit) spans.push([+g.dataset.start, +g.dataset.start + +g.dataset.ns]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let end = -1;
  for (const [a, b] of spans) {  // count nested matches once
    if (a >= end) { matched += b - a; end = b; } else if (b > end) { matched += b - end; end = b; }
  }
  document.getElementById('matched').textContent =
      term === '' ? '' : 'Matched: ' + (100 * matched / +root.dataset.ns).toFixed(2) + '%';
}
for (const g of frames) g.addEventListener('click', () => zoom(g));
document.getElementById('reset').addEventListener('click', () => zoom(frames[0]));
document.getElementById('search').addEventListener('click', search);
zoom(frames[0]);
)JS";

}  // namespace

void write_flame_graph_svg(const profile::Trace& trace, std::ostream& out) {
  Node root;
  root.name = "all";
  for (const profile::ThreadTrace& thread : trace.threads) {
    const std::vector<profile::Slice> all = profile::slices(thread);
    if (all.empty()) continue;
    Node* thread_node = root.child(thread.name);
    std::vector<Node*> node_of(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      const profile::Slice& slice = all[i];
      Node* parent = slice.parent < 0 ? thread_node : node_of[static_cast<std::size_t>(slice.parent)];
      node_of[i] = parent->child(trace.names[slice.name]);
      const std::int64_t ns = slice.end_ns - slice.start_ns;
      node_of[i]->total_ns += ns;
      if (slice.parent < 0) thread_node->total_ns += ns;
    }
    root.total_ns += thread_node->total_ns;
  }
  const double height = kTop + static_cast<double>(depth_of(root)) * kFrameHeight + 2 * kPad;
  out << "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      << "<svg version=\"1.1\" width=\"" << kWidth << "\" height=\"" << height << "\" viewBox=\"0 0 "
      << kWidth << ' ' << height << "\" xmlns=\"http://www.w3.org/2000/svg\">\n"
      << "<style>text { font: " << kFontPx
      << "px 'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace; pointer-events: none; } "
         "g.f:hover rect { stroke: #000; "
         "stroke-width: 0.5; } g.f { cursor: pointer; } #reset, #search { cursor: pointer; }</style>\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#f8f8f8\"/>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"20\" text-anchor=\"middle\" style=\"font-size: 15px\">"
      << xml_escape(trace.process_name.empty() ? std::string("Flame graph")
                                               : "Flame graph: " + trace.process_name)
      << "</text>\n"
      << "<text id=\"reset\" x=\"" << kPad << "\" y=\"20\">Reset zoom</text>\n"
      << "<text id=\"search\" x=\"" << kWidth - kPad << "\" y=\"20\" text-anchor=\"end\">Search</text>\n"
      << "<text id=\"matched\" x=\"" << kWidth - kPad << "\" y=\"" << height - 2
      << "\" text-anchor=\"end\"></text>\n";
  if (root.total_ns > 0) emit(out, root, root.total_ns, 0, 0, height);
  out << "<script><![CDATA[\nconst CELL = " << kCellPx << ", INSET = " << kLabelInset << ";" << kScript
      << "]]></script>\n</svg>\n";
}

}  // namespace tfdebug
