// tfdebug scan PATH...: would `torch.load` run code opening these files? Every pickle in them
// (torch.save zips, legacy torch files, plain pickles, object-array .npy, .npz members) is read
// statically, and every global it references is listed as safe, info, warning or error
// (docs/scan.md). Exit 0 clean (or info only), 1 when any error, 2 when an input is unreadable.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "terminal.hpp"
#include "tfdebug/io/pickle_scan.hpp"

namespace tfdebug::cli {
namespace {

struct ScanArgs {
  std::vector<std::string> paths;
  bool json = false;
};

const char* severity_of(io::GlobalRisk risk) {
  switch (risk) {
    case io::GlobalRisk::allowed:
      return "safe";
    case io::GlobalRisk::full_module:
      return "info";
    case io::GlobalRisk::imports:
      return "warning";
    case io::GlobalRisk::runs_code:
      return "error";
  }
  return "warning";
}

bool malformed(const io::PickleScan& p) {
  if (!p.problem.empty()) return true;
  for (const io::PickleScan& n : p.nested) {
    if (malformed(n)) return true;
  }
  return false;
}

// "error", "warning", "info", "clean", "unreadable" (an error finding wins: it is the news), "skipped".
std::string verdict(const io::FileScan& f) {
  const io::GlobalRisk worst = f.worst();
  if (worst == io::GlobalRisk::runs_code) return "error";
  bool broken = !f.error.empty();
  for (const io::PickleScan& p : f.pickles) broken = broken || malformed(p);
  if (broken) return "unreadable";
  if (!f.note.empty()) return "skipped";
  if (worst == io::GlobalRisk::imports) return "warning";
  if (worst == io::GlobalRisk::full_module) return "info";
  return "clean";
}

// Paths and messages as the user may have typed them, but with control characters and bytes
// that are not UTF-8 escaped: a hostile file name must not reach the terminal raw.
std::string shown(const std::string& text) {
  return io::printable(text);
}

nlohmann::json pickle_json(const io::PickleScan& p) {
  nlohmann::json globals = nlohmann::json::array();
  for (const io::PickleGlobal& g : p.globals) {
    globals.push_back({{"global", g.full_name()},
                       {"module", g.module},
                       {"name", g.name},
                       {"called", g.called},
                       {"modified", g.modified},
                       {"references", g.references},
                       {"offset", g.offset},
                       {"risk", io::risk_name(g.risk)},
                       {"severity", severity_of(g.risk)},
                       {"reason", g.reason},
                       {"message", io::global_message(g)}});
  }
  nlohmann::json nested = nlohmann::json::array();
  for (const io::PickleScan& n : p.nested) nested.push_back(pickle_json(n));
  nlohmann::json out = {{"origin", shown(p.origin)}, {"globals", globals}, {"nested", nested}};
  if (!p.problem.empty()) out["problem"] = p.problem;
  return out;
}

// Whether a pickle has anything to show: a global, a problem, or a nested pickle that does.
bool shows_anything(const io::PickleScan& p) {
  if (!p.globals.empty() || !p.problem.empty()) return true;
  for (const io::PickleScan& n : p.nested) {
    if (shows_anything(n)) return true;
  }
  return false;
}

void print_pickle(const io::PickleScan& p, int indent, bool colour) {
  if (!shows_anything(p)) return;  // a legacy file's magic number, an empty payload
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::printf("%s%s\n", pad.c_str(), shown(p.origin).c_str());
  // Errors first, then warnings, info and safe globals, each in the order the pickle has them.
  std::vector<const io::PickleGlobal*> order;
  for (const io::PickleGlobal& g : p.globals) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [](const io::PickleGlobal* a, const io::PickleGlobal* b) { return a->risk > b->risk; });
  for (const io::PickleGlobal* global : order) {
    const io::PickleGlobal& g = *global;
    const char* severity = severity_of(g.risk);
    const Tone tone = g.risk == io::GlobalRisk::runs_code ? Tone::bad
                      : g.risk == io::GlobalRisk::imports ? Tone::warn
                                                          : Tone::dim;
    const std::string word =
        paint(std::string(severity) + std::string(8 - std::string(severity).size(), ' '), tone, colour);
    if (g.risk == io::GlobalRisk::allowed) {
      std::printf("%s  %s%s %s (%s)\n", pad.c_str(), word.c_str(), g.called ? "calls" : "references",
                  g.full_name().c_str(), g.reason.c_str());
    } else {
      std::printf("%s  %s%s\n", pad.c_str(), word.c_str(), io::global_message(g).c_str());
    }
  }
  if (!p.problem.empty()) std::printf("%s  %s\n", pad.c_str(), ("malformed: " + p.problem).c_str());
  for (const io::PickleScan& n : p.nested) print_pickle(n, indent + 2, colour);
}

int run_scan(const ScanArgs& args) {
  const std::vector<io::FileScan> files = io::scan_paths(args.paths);
  int errors = 0, warnings = 0, unreadable = 0, clean = 0, skipped = 0;
  for (const io::FileScan& f : files) {
    const std::string v = verdict(f);
    errors += v == "error";
    warnings += v == "warning";
    unreadable += v == "unreadable";
    skipped += v == "skipped";
    clean += v == "clean" || v == "info";
  }
  const int code = errors > 0 ? 1 : unreadable > 0 ? 2 : 0;
  if (args.json) {
    nlohmann::json out;
    out["files"] = nlohmann::json::array();
    for (const io::FileScan& f : files) {
      nlohmann::json pickles = nlohmann::json::array();
      for (const io::PickleScan& p : f.pickles) pickles.push_back(pickle_json(p));
      nlohmann::json j = {
          {"path", shown(f.path)}, {"container", f.container}, {"verdict", verdict(f)}, {"pickles", pickles}};
      if (!f.error.empty()) j["error"] = shown(f.error);
      if (!f.note.empty()) j["note"] = shown(f.note);
      out["files"].push_back(std::move(j));
    }
    out["summary"] = {{"files", files.size()},    {"error", errors}, {"warning", warnings},
                      {"unreadable", unreadable}, {"clean", clean},  {"skipped", skipped}};
    out["exit_code"] = code;
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return code;
  }
  const bool colour = use_colour(stdout);
  for (const io::FileScan& f : files) {
    const std::string v = verdict(f);
    const Tone tone = v == "error" || v == "unreadable" ? Tone::bad
                      : v == "warning"                  ? Tone::warn
                                                        : Tone::good;
    std::printf("%s  (%s)  %s\n", shown(f.path).c_str(), f.container.c_str(), paint(v, tone, colour).c_str());
    if (!f.error.empty()) std::printf("  %s\n", shown(f.error).c_str());
    if (!f.note.empty()) std::printf("  %s\n", shown(f.note).c_str());
    bool any = false;
    for (const io::PickleScan& p : f.pickles) any = any || shows_anything(p);
    if (f.error.empty() && f.note.empty() && !any) std::printf("  references no globals\n");
    for (const io::PickleScan& p : f.pickles) print_pickle(p, 2, colour);
  }
  std::printf("\n%s: %s, %s, %s unreadable, %s clean, %s skipped\n",
              plural(static_cast<std::int64_t>(files.size()), "file").c_str(),
              plural(errors, "error").c_str(), plural(warnings, "warning").c_str(),
              format_count(unreadable).c_str(), format_count(clean).c_str(), format_count(skipped).c_str());
  return code;
}

}  // namespace

void register_scan(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ScanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "scan", "Would torch.load run code opening these files? Lists every global their pickles reference");
  cmd->add_option("path", args->paths,
                  "Files or folders (walked for .pt .pth .bin .ckpt .pkl .pickle .joblib .npy .npz .zip)")
      ->required();
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/scan.md)");
  cmd->callback([args, &exit_code] { exit_code = run_scan(*args); });
}

}  // namespace tfdebug::cli
