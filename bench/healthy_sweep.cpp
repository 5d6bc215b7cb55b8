// What the rules say about healthy training runs: the zoo's models (tools/tfdebug/demo/zoo.hpp),
// no fault, over many seeds, attached as the README shows (each step handed to Attachment::step),
// with a Session of default settings. Every warning and error is printed with its step and
// message, then a table per model: runs, runs with a warning, warnings, errors. Issue 16's bound
// for 300-step runs: no error, at most one warning in two runs, each a true one
// (docs/live-debugging.md, "Healthy runs").
//
//   healthy_sweep [--model NAME] [--seeds A-B] [--steps N] [--tier watch|diagnose] [--threads N]
//
// --model: mlp, cnn, encoder, gru, sigmoid or zoo (the default: each of the five). --seeds: the
// seeds, inclusive (default 1-8). --steps: steps per run (default 300). --tier: the Session's
// tier (default watch). --threads: LibTorch's intra-op threads (default: LibTorch's own; the
// numbers, and so a run's findings, differ with the thread count).
#include <ATen/Parallel.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "zoo.hpp"

namespace {

using tfdebug::Finding;
using tfdebug::Severity;
using tfdebug::demo::ZooModel;

struct Tally {
  int runs = 0;
  int runs_warned = 0;
  int warnings = 0;
  int errors = 0;
};

Tally sweep(ZooModel model, std::uint64_t first, std::uint64_t last, std::int64_t steps, tfdebug::Tier tier) {
  Tally tally;
  const std::string name(tfdebug::demo::zoo_model_name(model));
  for (std::uint64_t seed = first; seed <= last; ++seed) {
    tfdebug::demo::ZooTrainer trainer({.model = model, .seed = seed});
    tfdebug::RunConfig config;
    config.tier = tier;
    tfdebug::Session session(config);
    {
      auto debug = tfdebug::torch::attach(session, trainer.model());
      for (std::int64_t step = 0; step < steps; ++step) {
        trainer.before_step(step);
        debug.step(step, [&] { return trainer.train_step(step); });
      }
    }
    const auto summary = session.finish();
    int warnings = 0;
    for (const Finding& f : summary.findings) {
      if (f.severity == Severity::info) continue;
      (f.severity == Severity::error ? tally.errors : warnings) += 1;
      std::printf("%s seed %llu: %s %s, step %lld, '%s' %s: %s\n", name.c_str(), (unsigned long long)seed,
                  std::string(tfdebug::severity_name(f.severity)).c_str(), f.rule.c_str(), (long long)f.step,
                  f.module.c_str(), f.op.c_str(), f.message.c_str());
    }
    ++tally.runs;
    tally.warnings += warnings;
    if (warnings > 0) ++tally.runs_warned;
    std::fflush(stdout);
  }
  return tally;
}

int usage() {
  std::fprintf(stderr,
               "usage: healthy_sweep [--model NAME] [--seeds A-B] [--steps N] [--tier watch|diagnose] "
               "[--threads N]\n"
               "  NAME: mlp, cnn, encoder, gru, sigmoid or zoo (all five, the default)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = "zoo";
  std::uint64_t first = 1, last = 8;
  std::int64_t steps = 300;
  tfdebug::Tier tier = tfdebug::Tier::watch;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--model") == 0 && has_value) {
      model = argv[++i];
      if (model != "zoo" && !tfdebug::demo::parse_zoo_model(model)) return usage();
    } else if (std::strcmp(argv[i], "--seeds") == 0 && has_value) {
      const std::string seeds = argv[++i];
      const auto dash = seeds.find('-');
      first = std::strtoull(seeds.c_str(), nullptr, 10);
      last = dash == std::string::npos ? first : std::strtoull(seeds.c_str() + dash + 1, nullptr, 10);
      if (first == 0 || last < first) return usage();
    } else if (std::strcmp(argv[i], "--steps") == 0 && has_value) {
      steps = std::atoll(argv[++i]);
      if (steps <= 0) return usage();
    } else if (std::strcmp(argv[i], "--tier") == 0 && has_value) {
      const std::string name = argv[++i];
      if (name != "watch" && name != "diagnose") return usage();
      tier = name == "watch" ? tfdebug::Tier::watch : tfdebug::Tier::diagnose;
    } else if (std::strcmp(argv[i], "--threads") == 0 && has_value) {
      const int threads = std::atoi(argv[++i]);
      if (threads <= 0) return usage();
      at::set_num_threads(threads);
    } else {
      return usage();
    }
  }
  std::vector<ZooModel> models;
  if (model == "zoo") {
    models = {ZooModel::mlp, ZooModel::cnn, ZooModel::encoder, ZooModel::gru, ZooModel::sigmoid};
  } else {
    models = {*tfdebug::demo::parse_zoo_model(model)};
  }
  std::vector<Tally> tallies;
  tallies.reserve(models.size());
  for (const ZooModel m : models) tallies.push_back(sweep(m, first, last, steps, tier));
  std::printf("\n%lld steps a run, seeds %llu-%llu, tier %s, LibTorch intra-op threads: %d\n",
              (long long)steps, (unsigned long long)first, (unsigned long long)last,
              tier == tfdebug::Tier::watch ? "watch" : "diagnose", at::get_num_threads());
  std::printf("  %-8s %5s %12s %9s %7s\n", "model", "runs", "runs warned", "warnings", "errors");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const Tally& t = tallies[i];
    std::printf("  %-8s %5d %12d %9d %7d\n", std::string(tfdebug::demo::zoo_model_name(models[i])).c_str(),
                t.runs, t.runs_warned, t.warnings, t.errors);
  }
  return 0;
}
