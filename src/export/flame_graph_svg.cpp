// A self-contained flame-graph SVG (docs/profiling.md): frames merged by stack across the
// trace's threads (each thread a child of "all"), widths proportional to inclusive time, hover
// titles, click-to-zoom and regex search in inline JavaScript; no network access.
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
  out << "<g class=\"f\" data-ns=\"" << node.total_ns << "\" data-start=\"" << start_ns << "\" data-depth=\""
      << depth << "\"><title>" << name << " (" << time_label(node.total_ns) << ", " << percent
      << ")</title><rect " << geometry << " rx=\"2\" fill=\"" << colour(node.name) << "\"/><text x=\""
      << x + 3 << "\" y=\"" << y + 11.5 << "\">" << name << "</text></g>\n";
  std::int64_t child_start = start_ns;
  for (const auto& [child_name, child] : node.children) {
    emit(out, *child, root_total, child_start, depth + 1, height);
    child_start += child->total_ns;
  }
}

const char* const kScript = R"JS(
const frames = Array.from(document.querySelectorAll('g.f'));
const W = 1200, PAD = 10, INNER = W - 2 * PAD;
function fit(g, x, w) {
  const r = g.querySelector('rect'), t = g.querySelector('text');
  r.setAttribute('x', x); r.setAttribute('width', Math.max(w, 0));
  t.setAttribute('x', x + 3);
  const name = g.querySelector('title').textContent.replace(/ \([^()]*\)$/, '');
  const chars = Math.floor((w - 6) / 7);
  t.textContent = chars < 3 ? '' : (name.length <= chars ? name : name.slice(0, chars - 2) + '..');
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
      << "<style>text { font: 12px monospace; pointer-events: none; } g.f:hover rect { stroke: #000; "
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
  out << "<script><![CDATA[" << kScript << "]]></script>\n</svg>\n";
}

}  // namespace tfdebug
