// The flame-graph SVG's labels read without its script (Note [Label fitting] in
// src/export/flame_graph_svg.cpp): exact trimmed labels, every label inside its frame by the SVG's
// own geometry, and rsvg-convert's rendering (an independent renderer) with no text ink outside
// the frame that owns it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tfdebug/export/flame_graph.hpp"
#include "tfdebug/viz/image.hpp"

namespace tfdebug {
namespace {

using profile::EventKind;
using profile::Trace;

// One frame of the SVG as written: geometry, full name (from <title>) and drawn label.
struct Frame {
  double x = 0, y = 0, width = 0;
  std::string name, label;
};

std::string unescape(std::string text) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
      text.replace(at, std::string(from).size(), to);
  }
  return text;
}

std::vector<Frame> frames_of(const std::string& svg) {
  static const std::regex kFrame(
      R"re(<g class="f"[^>]*><title>(.*) \([^()]*\)</title><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"[^>]*/><text[^>]*>(.*)</text></g>)re");
  std::vector<Frame> out;
  std::istringstream lines(svg);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kFrame)) continue;
    out.push_back({std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), unescape(m[1]), unescape(m[5])});
  }
  return out;
}

// Cells of a label: code points, two for the CJK ideographs used below.
int cells(const std::string& text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0u) == 0x80u) continue;
    n += c >= 0xE4 && c <= 0xE9 ? 2 : 1;  // U+4000..U+9FFF: wide; "…" (0xE2) is one cell
  }
  return n;
}

// A trace on one thread "t" whose root frame is `total_us` long, so 1 µs is 1180 / total_us px.
struct Builder {
  Trace trace;
  profile::ThreadTrace thread;
  void zone(std::int64_t begin_us, std::int64_t end_us, const std::string& name) {
    thread.events.push_back({begin_us * 1000, trace.intern(name), EventKind::kBegin, 0});
    pending.push_back({end_us * 1000, trace.intern(name), EventKind::kEnd, 0});
  }
  // Closes the zones opened since the last flush, innermost first.
  void flush() {
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) thread.events.push_back(*it);
    pending.clear();
  }
  std::string svg() {
    flush();
    thread.name = "t";
    trace.threads = {thread};
    std::ostringstream out;
    write_flame_graph_svg(trace, out);
    return out.str();
  }
  std::vector<profile::TraceEvent> pending;
};

TEST(FlameGraphSvg, LabelsAreTrimmedWithAnEllipsisOrDropped) {
  // 1180 µs in all: one µs is one pixel of the 1180-pixel frame area.
  Builder b;
  b.zone(0, 200, "blocks.0.attention.query_projection.matmul");  // 194 px of room: 25 cells
  b.flush();
  b.zone(200, 220, "narrow");  // 14 px: not even three cells
  b.flush();
  b.zone(220, 249, "abcdef");  // 23 px: three cells, "ab…"
  b.flush();
  b.zone(249, 278, "abc");  // three cells: fits whole
  b.flush();
  b.zone(278, 338, "注意力機制");  // 54 px: 7 cells, three ideographs and "…"
  b.flush();
  b.zone(338, 1180, "a<b>&c");
  b.flush();
  const std::vector<Frame> frames = frames_of(b.svg());
  ASSERT_EQ(frames.size(), 8u);  // all, t, and six zones
  std::map<std::string, std::string> label;
  for (const Frame& f : frames) label[f.name] = f.label;
  EXPECT_EQ(label["all"], "all");
  EXPECT_EQ(label["blocks.0.attention.query_projection.matmul"], "blocks.0.attention.query\xE2\x80\xA6");
  EXPECT_EQ(label["narrow"], "");
  EXPECT_EQ(label["abcdef"], "ab\xE2\x80\xA6");
  EXPECT_EQ(label["abc"], "abc");
  EXPECT_EQ(label["注意力機制"], "注意力\xE2\x80\xA6");
  EXPECT_EQ(label["a<b>&c"], "a<b>&c");
}

// A profile-like trace: steps of forward/backward over modules with ops of every width, down to
// fractions of a pixel, and long names.
std::string busy_svg() {
  Builder b;
  std::int64_t ns = 0;
  int op = 0;
  auto event = [&](const std::string& name, EventKind kind) {
    b.thread.events.push_back({ns, b.trace.intern(name), kind, 0});
  };
  for (int step = 0; step < 3; ++step) {
    event("step", EventKind::kBegin);
    for (const char* phase : {"forward", "backward"}) {
      event(phase, EventKind::kBegin);
      for (int block = 0; block < 2; ++block) {
        for (const char* module : {"attn.q_proj", "attn.softmax", "mlp.fc1", "mlp.fc2"}) {
          const std::string path = "blocks." + std::to_string(block) + "." + module;
          event(path, EventKind::kBegin);
          for (int k = 0; k < 1 + (step + block + op) % 4; ++k, ++op) {
            const std::string name = path + (op % 2 == 0 ? " aten::addmm" : " aten::_softmax_backward_data");
            event(name, EventKind::kBegin);
            ns += 200 + (op * 7919 % 97) * (op % 3 == 0 ? 900 : 40);
            event(name, EventKind::kEnd);
            ns += op % 5 == 0 ? 20000 : 100;  // some room between ops, background in their row
          }
          event(path, EventKind::kEnd);
        }
      }
      event(phase, EventKind::kEnd);
    }
    event("step", EventKind::kEnd);
  }
  return b.svg();
}

TEST(FlameGraphSvg, EveryLabelFitsItsFrameByTheSvgGeometry) {
  const std::vector<Frame> frames = frames_of(busy_svg());
  ASSERT_GT(frames.size(), 30u);
  int labelled = 0, trimmed = 0, dropped = 0;
  for (const Frame& f : frames) {
    if (f.label.empty()) {
      ++dropped;
      continue;
    }
    ++labelled;
    // 0.625 em of the 12 px font per cell, 3 px of margin on each side.
    EXPECT_LE(3 + 7.5 * cells(f.label) + 3, f.width + 1e-9) << f.name << " -> " << f.label;
    if (f.label != f.name) {
      ++trimmed;
      ASSERT_GE(f.label.size(), 3u);
      EXPECT_EQ(f.label.substr(f.label.size() - 3), "\xE2\x80\xA6") << f.label;
      EXPECT_EQ(f.name.rfind(f.label.substr(0, f.label.size() - 3), 0), 0u) << f.name << " -> " << f.label;
      // Trimmed only when the whole name does not fit.
      EXPECT_GT(3 + 7.5 * cells(f.name) + 3, f.width) << f.name;
    }
  }
  EXPECT_GT(labelled, 10);
  EXPECT_GT(trimmed, 3);
  EXPECT_GT(dropped, 3);
}

// Note [Ink test]: frames are warm colours (red channel 205 and up) on a #f8f8f8 background and
// labels are black, so a pixel with red below 128 is a label's ink. rsvg-convert draws the SVG
// without running its script; each frame's band must hold ink only where its own label may be
// drawn: none for a dropped label, from 2 px after the frame's left edge (the label starts at
// 3 px) to its right edge for a drawn one. A label that ran past its frame would put ink at the
// left edge of the next frame, or into a frame with no label.
TEST(FlameGraphSvg, RsvgConvertDrawsNoLabelOutsideItsFrame) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tfdebug_flame_svg_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string svg = busy_svg();
  { std::ofstream(dir / "flame.svg") << svg; }
  const std::string command =
      "rsvg-convert -o '" + (dir / "flame.png").string() + "' '" + (dir / "flame.svg").string() + "' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_EQ(status, 0) << command << " failed: rsvg-convert is installed by scripts/install-deps.sh";
  const viz::Image png = viz::read_png(dir / "flame.png");
  ASSERT_EQ(png.width(), 1200);
  const std::vector<Frame> frames = frames_of(svg);
  int inked = 0;
  for (const Frame& f : frames) {
    const int left = static_cast<int>(f.x), right = static_cast<int>(f.x + f.width);
    int first = -1, last = -1;
    for (int py = static_cast<int>(f.y) + 1; py < static_cast<int>(f.y) + 14; ++py) {
      for (int px = std::max(left, 0); px < std::min(right + 1, png.width()); ++px) {
        // Columns shared with a neighbour (fractional edges) belong to neither.
        if ((px == left && f.x > left) || (px == right && f.x + f.width < right + 1)) continue;
        if (png.at(px, py).r >= 128) continue;
        first = first < 0 ? px : std::min(first, px);
        last = std::max(last, px);
      }
    }
    if (f.label.empty()) {
      EXPECT_EQ(first, -1) << "ink in the frame of " << f.name << ", which has no label, at x " << first;
      continue;
    }
    if (first < 0) {
      ADD_FAILURE() << "no ink for the label of " << f.name;
      continue;
    }
    ++inked;
    EXPECT_GE(first, f.x + 2) << f.name;
    EXPECT_LE(last, f.x + f.width) << f.name;
  }
  EXPECT_GT(inked, 10);
  // Where no frame is drawn in a row, a label running past its frame would show on the
  // background (later frames paint over the text of earlier ones, but not there).
  std::map<double, std::vector<bool>> covered;  // row's y -> columns some frame of it covers
  for (const Frame& f : frames) {
    std::vector<bool>& row = covered[f.y];
    row.resize(static_cast<std::size_t>(png.width()), false);
    for (int px = static_cast<int>(f.x); px <= static_cast<int>(f.x + f.width) && px < png.width(); ++px)
      row[static_cast<std::size_t>(px)] = true;
  }
  int background = 0, stray = 0;
  std::string first_stray;
  for (const auto& [y, row] : covered) {
    for (int px = 0; px < png.width(); ++px) {
      if (row[static_cast<std::size_t>(px)]) continue;
      ++background;
      for (int py = static_cast<int>(y) + 1; py < static_cast<int>(y) + 14; ++py) {
        if (png.at(px, py).r >= 128) continue;
        if (stray++ == 0) first_stray = "x " + std::to_string(px) + ", y " + std::to_string(py);
      }
    }
  }
  EXPECT_EQ(stray, 0) << "label ink on the background, first at " << first_stray;
  EXPECT_GT(background, 100);  // the trace leaves room between frames
}

}  // namespace
}  // namespace tfdebug
