// What one refresh of `tfdebug top` costs on a big run, measured in process (bench/top_refresh.py
// makes the run and prints the whole table): RunFollower::poll and top_view, the two things the
// screen does each --interval, with one new step appended before each refresh, and idle.
//
//   top_refresh RUN_DIR [REFRESHES]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "run_follower.hpp"
#include "top_view.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void print(const char* what, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("%-44s median %.3f ms, p90 %.3f ms (%zu refreshes)\n", what, ms[ms.size() / 2],
              ms[ms.size() * 9 / 10], ms.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: top_refresh RUN_DIR [REFRESHES]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int refreshes = argc > 2 ? std::stoi(argv[2]) : 200;
  tfdebug::cli::TopViewOptions options;
  options.width = 120;
  options.height = 40;

  // The last line of metrics.jsonl is the template of the steps appended (its step renumbered).
  std::string last;
  {
    std::ifstream in(dir + "/metrics.jsonl");
    for (std::string line; std::getline(in, line);) last = line;
  }
  const std::size_t colon = last.find(':'), comma = last.find(',');
  long long step = std::stoll(last.substr(colon + 1, comma - colon - 1));

  tfdebug::cli::RunFollower run(dir);
  auto start = Clock::now();
  run.poll(Clock::now());
  const double load = ms_since(start);
  start = Clock::now();
  std::size_t lines = tfdebug::cli::top_view(run, Clock::now(), options).size();
  std::printf("first poll (every step read): %.0f ms; first draw: %.2f ms (%zu lines, %lld steps)\n", load,
              ms_since(start), lines, static_cast<long long>(run.steps()));

  std::vector<double> grow, idle;
  std::ofstream out(dir + "/metrics.jsonl", std::ios::app | std::ios::binary);
  for (int i = 0; i < refreshes; ++i) {
    out << "{\"step\":" << ++step << last.substr(comma) << "\n" << std::flush;
    start = Clock::now();
    run.poll(Clock::now());
    lines += tfdebug::cli::top_view(run, Clock::now(), options).size();
    grow.push_back(ms_since(start));
  }
  for (int i = 0; i < refreshes; ++i) {
    start = Clock::now();
    run.poll(Clock::now());
    lines += tfdebug::cli::top_view(run, Clock::now(), options).size();
    idle.push_back(ms_since(start));
  }
  print("refresh with a new step (poll + draw):", grow);
  print("idle refresh (poll finds nothing, draw):", idle);
  return lines > 0 ? 0 : 1;
}
