// tfdebug attack --model M.pt --input X.npy --labels y.npy --attack NAME: adversarial examples
// for a classifier by any of tfdebug::robust's attacks, with the perturbation norms, success and
// confidences per example, an accuracy-vs-eps sweep, and pictures (docs/robustness.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "analysis_output.hpp"
#include "attack_tokens.hpp"
#include "cli_input.hpp"
#include "commands.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/robust/carlini_wagner.hpp"
#include "tfdebug/robust/deepfool.hpp"
#include "tfdebug/robust/gradient_attacks.hpp"
#include "tfdebug/torch/interpret_model.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::cli {
namespace {

struct AttackArgs {
  std::string model, input, labels, attack, norm = "linf", clip, out, png, sweep, mask;
  double eps = -1, step_size = -1, confidence = 0;  // < 0: the attack's default
  std::int64_t steps = -1, restarts = 1, target = -1, max_batch = 64;
  std::int64_t max_changes = 3, candidates = 10;  // hotflip
  std::uint64_t seed = 0;
  AnalysisOutput output;  // --json, --run-dir, --html
};

struct AttackInfo {
  const char* name;
  const char* what;
};
constexpr AttackInfo kAttacks[] = {
    {"fgsm", "one step x + eps sign(grad CE); --eps 8/255 (0.0314)"},
    {"pgd",
     "projected gradient descent; --norm linf: --eps 8/255, --step-size 2/255, --steps 10; --norm l2: --eps "
     "1, "
     "--step-size 0.2, --steps 10; random start, --restarts 1"},
    {"cw",
     "Carlini-Wagner L2 (needs --clip); 9 binary-search steps over c from 1e-3, --steps 1000 Adam steps, "
     "--step-size 0.01 (Adam's learning rate), --confidence 0"},
    {"deepfool", "DeepFool L2, untargeted; --steps 50, overshoot 0.02, 10 candidate classes"},
    {"hotflip",
     "--model demo only (token ids): greedy token substitution by the one-hot gradient, --max-changes 3, "
     "--candidates 10"},
};

std::vector<double> numbers(const std::string& text, const char* what) {
  std::vector<double> out;
  for (const auto& row : csv_rows(text, what)) out.insert(out.end(), row.begin(), row.end());
  return out;
}

std::vector<std::int64_t> read_labels(const std::string& path, std::int64_t n) {
  const std::vector<float> v = path.ends_with(".npy") ? npy_values(path) : [&] {
    std::vector<float> all;
    for (const auto& row : csv_rows(read_text(path), path)) all.insert(all.end(), row.begin(), row.end());
    return all;
  }();
  if (static_cast<std::int64_t>(v.size()) != n) {
    throw Error(path + ": " + std::to_string(v.size()) + " labels for " + std::to_string(n) +
                " examples (expected one class index per example)");
  }
  std::vector<std::int64_t> labels;
  for (const float f : v) {
    if (f != std::floor(f) || f < 0)
      throw Error(path + ": label " + std::to_string(f) + " is not a class index");
    labels.push_back(static_cast<std::int64_t>(f));
  }
  return labels;
}

// --mask: one 0/1 flag per element of one example (.npy of the example's shape or flat, or CSV);
// 1: the attack may change the element.
std::vector<std::uint8_t> read_mask(const std::string& path, std::int64_t numel) {
  const std::vector<float> v = path.ends_with(".npy") ? npy_values(path) : [&] {
    std::vector<float> all;
    for (const auto& row : csv_rows(read_text(path), path)) all.insert(all.end(), row.begin(), row.end());
    return all;
  }();
  if (static_cast<std::int64_t>(v.size()) != numel) {
    throw Error("--mask " + path + ": " + std::to_string(v.size()) + " flags; one example has " +
                std::to_string(numel) + " values (one 0/1 flag per value)");
  }
  std::vector<std::uint8_t> mask;
  for (const float f : v) {
    if (f != 0 && f != 1) throw Error("--mask " + path + ": " + std::to_string(f) + " is not 0 or 1");
    mask.push_back(f == 1 ? 1 : 0);
  }
  return mask;
}

robust::AttackResult run_one(interpret::GradientModel& model, const AttackArgs& args,
                             std::span<const float> x, std::span<const std::int64_t> y,
                             const robust::AttackSettings& s, double eps) {
  if (args.attack == "fgsm") return robust::fgsm(model, x, y, s, {.eps = eps > 0 ? eps : 8.0 / 255});
  if (args.attack == "pgd") {
    robust::PgdOptions o;
    o.norm = args.norm == "l2" ? robust::Norm::l2 : robust::Norm::linf;
    if (o.norm == robust::Norm::l2) {
      o.eps = 1.0;
      o.step_size = 0.2;
    }
    // The step follows eps unless given: torchattacks' ratios (2/255 of 8/255; 0.2 of 1.0), so that
    // a larger eps is reachable in the same steps.
    if (eps > 0) o.eps = eps;
    o.step_size = args.step_size > 0 ? args.step_size : o.eps * (o.norm == robust::Norm::l2 ? 0.2 : 0.25);
    if (args.steps > 0) o.steps = args.steps;
    o.restarts = args.restarts;
    return robust::pgd(model, x, y, s, o);
  }
  if (args.attack == "cw") {
    robust::CarliniWagnerOptions o;
    if (args.steps > 0) o.steps = args.steps;
    if (args.step_size > 0) o.learning_rate = args.step_size;
    o.confidence = args.confidence;
    return robust::carlini_wagner_l2(model, x, y, s, o);
  }
  robust::DeepFoolOptions o;
  if (args.steps > 0) o.steps = args.steps;
  return robust::deepfool(model, x, y, s, o);
}

nlohmann::json to_json(const robust::Distribution& d) {
  return {{"count", d.count},           {"min", json_number(d.min)},
          {"q25", json_number(d.q25)},  {"median", json_number(d.median)},
          {"q75", json_number(d.q75)},  {"max", json_number(d.max)},
          {"mean", json_number(d.mean)}};
}

// An example's shape as an image (rows, cols): [h, w], [1, h, w], or a flat square number of
// values (the digits' 64 = 8 x 8); none otherwise.
bool image_shape(const std::vector<std::int64_t>& shape, std::size_t& rows, std::size_t& cols) {
  std::vector<std::int64_t> s = shape;
  if (s.size() == 3 && s[0] == 1) s.erase(s.begin());
  if (s.size() == 2) {
    rows = static_cast<std::size_t>(s[0]);
    cols = static_cast<std::size_t>(s[1]);
    return true;
  }
  if (s.size() == 1) {
    const auto side = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(s[0]))));
    if (side >= 4 && side * side == s[0]) {
      rows = cols = static_cast<std::size_t>(side);
      return true;
    }
  }
  return false;
}

// Original, adversarial and difference of up to four examples (the successful ones first).
void draw_examples(const robust::AttackResult& r, std::span<const float> x,
                   const std::vector<std::int64_t>& shape, const std::string& path) {
  std::size_t rows = 0, cols = 0;
  if (!image_shape(shape, rows, cols)) {
    throw Error(
        "--png draws images: one example must be [h, w], [1, h, w] or a square number of values; it is " +
        std::to_string(r.numel) + " values");
  }
  std::vector<std::size_t> chosen;
  for (std::size_t pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < r.success.size() && chosen.size() < 4; ++i) {
      if ((r.success[i] != 0) == (pass == 0)) chosen.push_back(i);
    }
  }
  double lo = x[0], hi = x[0], big = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    lo = std::min({lo, static_cast<double>(x[j]), static_cast<double>(r.adversarial[j])});
    hi = std::max({hi, static_cast<double>(x[j]), static_cast<double>(r.adversarial[j])});
    big = std::max(big, std::abs(static_cast<double>(r.adversarial[j]) - x[j]));
  }
  if (big == 0) big = 1;
  viz::Figure figure{.title = r.attack + ": original, adversarial, difference", .columns = 3, .panels = {}};
  const auto n = static_cast<std::size_t>(r.numel);
  for (const std::size_t i : chosen) {
    viz::Heatmap original;
    original.title = "#" + std::to_string(i) + " label " + std::to_string(r.labels[i]) + ", predicted " +
                     std::to_string(r.predicted_before[i]);
    original.rows = rows;
    original.cols = cols;
    original.values.assign(x.begin() + static_cast<std::ptrdiff_t>(i * n),
                           x.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    original.lo = lo;
    original.hi = hi;
    original.value_title = "value";
    viz::Heatmap adversarial = original;
    adversarial.title = std::string(r.success[i] != 0 ? "fooled" : "not fooled") + ": predicted " +
                        std::to_string(r.predicted_after[i]) + " (L2 " + format_number(r.l2[i]) + ")";
    adversarial.values.assign(r.adversarial.begin() + static_cast<std::ptrdiff_t>(i * n),
                              r.adversarial.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    viz::Heatmap difference = adversarial;
    difference.title = "adversarial - original (L-inf " + format_number(r.linf[i]) + ")";
    for (std::size_t j = 0; j < n; ++j) difference.values[j] -= x[i * n + j];
    difference.map = viz::Colormap::diverging;
    difference.lo = -big;
    difference.hi = big;
    difference.value_title = "change";
    figure.panels.push_back(original);
    figure.panels.push_back(adversarial);
    figure.panels.push_back(difference);
  }
  viz::save(figure, path, {.width = 960, .height = 300 * static_cast<int>(chosen.size()) + 60});
}

// The options that only continuous inputs (a TorchScript classifier) take.
void check_token_attack(const AttackArgs& args) {
  if (args.attack != "hotflip") {
    throw Error("--attack " + terminal_safe(args.attack) +
                ": the demo's inputs are token ids, which a continuous step does not keep; --model demo "
                "takes --attack hotflip (greedy token substitution)");
  }
  if (!args.labels.empty() || !args.clip.empty() || !args.mask.empty() || !args.sweep.empty() ||
      !args.png.empty() || args.eps >= 0 || args.steps >= 0 || args.target >= 0 || args.step_size >= 0) {
    throw Error(
        "--model demo takes --input, --max-changes, --candidates, --max-batch, --out and the output options "
        "(labels: the copy task's answers; --labels, --clip, --mask, --eps, --eps-sweep, --steps, "
        "--step-size, "
        "--target-class and --png are for TorchScript classifiers)");
  }
}

int run_attack(AttackArgs args) {
  args.output.check();
  if (args.attack.empty()) args.attack = args.model == "demo" ? "hotflip" : "pgd";
  if (args.model == "demo") {
    check_token_attack(args);
    return run_token_attack({.input = args.input,
                             .max_changes = args.max_changes,
                             .candidates = args.candidates,
                             .max_batch = args.max_batch,
                             .out = args.out,
                             .output = args.output});
  }
  if (args.attack == "hotflip") throw Error("--attack hotflip substitutes token ids: it is for --model demo");
  if (std::none_of(std::begin(kAttacks), std::end(kAttacks),
                   [&](const AttackInfo& a) { return args.attack == a.name; })) {
    throw Error("--attack '" + terminal_safe(args.attack) +
                "' is not an attack; expected fgsm, pgd, cw, deepfool or hotflip");
  }
  if (args.norm != "linf" && args.norm != "l2")
    throw Error("--norm '" + terminal_safe(args.norm) + "': expected linf or l2");
  if (args.norm == "l2" && args.attack != "pgd")
    throw Error("--norm l2 is PGD's; fgsm is L-inf, cw and deepfool L2");
  robust::AttackSettings s;
  s.seed = args.seed;
  s.max_batch = args.max_batch;
  if (!args.clip.empty()) {
    const std::vector<double> c = numbers(args.clip, "--clip");
    if (c.size() != 2 || !(c[0] < c[1]))
      throw Error("--clip '" + terminal_safe(args.clip) + "': expected lo,hi with lo < hi");
    s.clip_min = static_cast<float>(c[0]);
    s.clip_max = static_cast<float>(c[1]);
  } else if (args.attack == "cw") {
    throw Error("cw needs the inputs' valid range: --clip lo,hi (e.g. --clip 0,1 for pixels)");
  }
  if (args.target >= 0) s.targets = {args.target};

  std::vector<std::int64_t> shape;
  const std::vector<float> x = npy_values(args.input, &shape);
  if (shape.empty()) throw Error(args.input + ": a scalar is not a batch of examples");
  std::vector<std::int64_t> example(shape.begin() + 1, shape.end());
  if (example.empty()) example = {shape[0]}, shape.insert(shape.begin(), 1);  // one example given as a vector
  const std::int64_t n = shape[0];
  if (!args.mask.empty()) {
    std::int64_t numel = 1;
    for (const std::int64_t d : example) numel *= d;
    s.mask = read_mask(args.mask, numel);
  }
  auto model = torch::load_torchscript(args.model, example);
  std::vector<std::int64_t> labels;
  if (!args.labels.empty()) {
    labels = read_labels(args.labels, n);
  } else {  // the model's own predictions: how easily are its answers changed
    std::vector<float> out(static_cast<std::size_t>(n * model.output_size()));
    model.forward(TensorView(x.data(), DType::f32, shape), out);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto row = std::span<const float>(out).subspan(static_cast<std::size_t>(i * model.output_size()),
                                                           static_cast<std::size_t>(model.output_size()));
      labels.push_back(std::max_element(row.begin(), row.end()) - row.begin());
    }
  }

  if (!args.sweep.empty()) {
    if (args.attack != "fgsm" && args.attack != "pgd")
      throw Error("--eps-sweep runs fgsm or pgd (the attacks with an eps)");
    const std::vector<double> grid = numbers(args.sweep, "--eps-sweep");
    nlohmann::json points = nlohmann::json::array();
    std::vector<double> eps_axis, accuracy, success;
    for (const double eps : grid) {
      if (!(eps >= 0)) throw Error("--eps-sweep: " + std::to_string(eps) + " is not an eps >= 0");
      // eps 0 is the clean accuracy: an attack of size 0 changes nothing.
      const robust::AttackSummary sum =
          robust::summarize(run_one(model, args, x, labels, s, eps > 0 ? eps : 1e-30));
      eps_axis.push_back(eps);
      accuracy.push_back(eps > 0 ? sum.robust_accuracy : sum.clean_accuracy);
      success.push_back(eps > 0 ? sum.success_rate : 1 - sum.clean_accuracy);
      points.push_back({{"eps", json_number(eps)},
                        {"accuracy", json_number(accuracy.back())},
                        {"success_rate", json_number(success.back())},
                        {"queries", sum.queries}});
    }
    if (!args.png.empty()) {
      viz::LinePlot plot;
      plot.title =
          "accuracy under " + args.attack + (args.attack == "pgd" ? "-" + args.norm : "") + " attack";
      plot.x.title = "eps";
      plot.y.title = "accuracy";
      plot.y.lo = 0.0;
      plot.y.hi = 1.0;
      plot.series.push_back({.name = "accuracy", .x = eps_axis, .y = accuracy});
      plot.markers = true;
      viz::save(plot, args.png);
    }
    if (args.output.wanted()) {
      std::vector<std::string> images;
      if (!args.png.empty()) images.push_back(args.png);
      args.output.emit("attack", args.attack + " eps sweep on " + args.model,
                       {{"attack", args.attack}, {"model", args.model}, {"examples", n}, {"sweep", points}},
                       images);
      if (args.output.json) return 0;
    }
    std::printf("accuracy of %s under %s over %lld examples\n", terminal_safe(args.model).c_str(),
                args.attack.c_str(), static_cast<long long>(n));
    Table table({{.header = "eps", .align = Table::Align::right},
                 {.header = "accuracy", .align = Table::Align::right},
                 {.header = "attack success", .align = Table::Align::right}});
    for (std::size_t k = 0; k < grid.size(); ++k) {
      table.add({format_number(grid[k]), format_number(accuracy[k]), format_number(success[k])});
    }
    table.print(stdout, terminal_columns(stdout), use_colour(stdout));
    return 0;
  }

  const robust::AttackResult r = run_one(model, args, x, labels, s, args.eps);
  const robust::AttackSummary sum = robust::summarize(r);
  if (!args.out.empty()) write_npy(args.out, r.adversarial, shape);
  if (!args.png.empty()) draw_examples(r, x, example, args.png);
  if (args.output.wanted()) {
    nlohmann::json success = nlohmann::json::array();
    for (const std::uint8_t v : r.success) success.push_back(v != 0);
    const auto list = [](const std::vector<double>& v) {
      nlohmann::json a = nlohmann::json::array();
      for (const double d : v) a.push_back(json_number(d));
      return a;
    };
    nlohmann::json out = {{"attack", r.attack},
                          {"model", args.model},
                          {"examples", n},
                          {"targeted", r.targeted},
                          {"success", success},
                          {"l0", list(r.l0)},
                          {"l2", list(r.l2)},
                          {"linf", list(r.linf)},
                          {"labels", r.labels},
                          {"predicted_before", r.predicted_before},
                          {"predicted_after", r.predicted_after},
                          {"confidence_before", list(r.confidence_before)},
                          {"confidence_after", list(r.confidence_after)},
                          {"summary",
                           {{"success_rate", json_number(sum.success_rate)},
                            {"clean_accuracy", json_number(sum.clean_accuracy)},
                            {"robust_accuracy", json_number(sum.robust_accuracy)},
                            {"queries", sum.queries},
                            {"mean_confidence_before", json_number(sum.mean_confidence_before)},
                            {"mean_confidence_after", json_number(sum.mean_confidence_after)},
                            {"l0", to_json(sum.l0)},
                            {"l2", to_json(sum.l2)},
                            {"linf", to_json(sum.linf)}}}};
    if (r.targeted) out["target"] = args.target;
    std::vector<std::string> images;
    if (!args.png.empty()) images.push_back(args.png);
    args.output.emit("attack", r.attack + " on " + args.model + " (" + std::to_string(n) + " examples)", out,
                     images);
    if (args.output.json) return 0;
  }
  const bool colour = use_colour(stdout);
  std::printf("%s on %s: %lld examples\n", paint(r.attack, Tone::bold, colour).c_str(),
              terminal_safe(args.model).c_str(), static_cast<long long>(n));
  Table table({{.header = "example", .align = Table::Align::right},
               {.header = "label", .align = Table::Align::right},
               {.header = "before", .align = Table::Align::right},
               {.header = "after", .align = Table::Align::right},
               {.header = "fooled"},
               {.header = "L0", .align = Table::Align::right},
               {.header = "L2", .align = Table::Align::right},
               {.header = "L-inf", .align = Table::Align::right},
               {.header = "confidence", .align = Table::Align::right, .droppable = true}});
  constexpr std::size_t kShown = 40;
  for (std::size_t i = 0; i < r.success.size() && i < kShown; ++i) {
    table.add({std::to_string(i), std::to_string(r.labels[i]), std::to_string(r.predicted_before[i]),
               std::to_string(r.predicted_after[i]), r.success[i] != 0 ? "yes" : "no", format_number(r.l0[i]),
               format_number(r.l2[i]), format_number(r.linf[i]),
               format_number(r.confidence_before[i]) + " -> " + format_number(r.confidence_after[i])},
              r.success[i] != 0 ? Tone::warn : Tone::plain);
  }
  table.print(stdout, terminal_columns(stdout), colour);
  if (r.success.size() > kShown)
    std::printf("  ... %zu more (--json lists every example)\n", r.success.size() - kShown);
  KeyValueTable facts;
  facts.add("success rate",
            format_number(sum.success_rate) + (r.targeted ? " (reached the target)" : " (misclassified)"));
  facts.add("accuracy", format_number(sum.clean_accuracy) + " clean -> " +
                            format_number(sum.robust_accuracy) + " under attack");
  const auto dist = [](const robust::Distribution& d) {
    return d.count == 0 ? std::string("no success")
                        : "median " + format_number(d.median) + " [" + format_number(d.q25) + ", " +
                              format_number(d.q75) + "], min " + format_number(d.min) + ", max " +
                              format_number(d.max);
  };
  facts.add("L2 of successes", dist(sum.l2));
  facts.add("L-inf of successes", dist(sum.linf));
  facts.add("L0 of successes", dist(sum.l0));
  facts.add(r.targeted ? "confidence in the target" : "confidence in the label",
            format_number(sum.mean_confidence_before) + " -> " + format_number(sum.mean_confidence_after) +
                " (mean)");
  facts.add("model queries", format_count(sum.queries) + " example rows");
  std::printf("\n");
  facts.print(stdout);
  return 0;
}

}  // namespace

void register_attack(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<AttackArgs>();
  std::string attacks = "Attack:";
  for (const AttackInfo& a : kAttacks) attacks.append("\n  ").append(a.name).append(": ").append(a.what);
  CLI::App* cmd = app.add_subcommand(
      "attack",
      "How easily does the model break? Adversarial examples for a classifier (docs/robustness.md)");
  cmd->add_option("--model", args->model,
                  "A TorchScript classifier: forward(x [n, ...]) -> logits [n, classes]; or demo: tfdebug "
                  "demo's language model, trained here for a few seconds (--attack hotflip on its token ids)")
      ->required();
  cmd->add_option(
         "--input", args->input,
         "The examples: a .npy file [n, ...] (f32, f64 or integers); for --model demo token sequences "
         "of one length, a file of one a line or \"3 5 1 0 3; 2 4 6 0 2\"")
      ->required();
  cmd->add_option("--labels", args->labels,
                  "Their true classes: .npy [n] or CSV (default: the model's own predictions)");
  cmd->add_option("--attack", args->attack, attacks + "\n(default: pgd; hotflip for --model demo)");
  cmd->add_option("--max-changes", args->max_changes, "hotflip: tokens changed at most (the L0 budget)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
  cmd->add_option("--candidates", args->candidates,
                  "hotflip: substitutions the model checks per step, the best by the one-hot gradient")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--eps", args->eps, "fgsm, pgd: the perturbation budget (see the defaults above)");
  cmd->add_option("--norm", args->norm, "pgd: linf or l2")->capture_default_str();
  cmd->add_option("--steps", args->steps, "pgd: steps; cw: Adam steps per value of c; deepfool: steps");
  cmd->add_option("--step-size", args->step_size, "pgd: alpha; cw: Adam's learning rate");
  cmd->add_option("--restarts", args->restarts, "pgd: random restarts; the first success is kept")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1000}));
  cmd->add_option("--target-class", args->target, "A targeted attack: make every example this class");
  cmd->add_option("--confidence", args->confidence, "cw: the logit margin kappa a success needs")
      ->capture_default_str();
  cmd->add_option("--clip", args->clip,
                  "The inputs' valid range lo,hi (e.g. 0,1); default: unbounded (cw needs one)");
  cmd->add_option(
      "--mask", args->mask,
      "Only these values may change: a .npy (the example's shape, or flat) or CSV of one 0/1 flag "
      "per value of one example, the same for every example");
  cmd->add_option("--seed", args->seed, "Seed of the random starts (same seed, same answer)")
      ->capture_default_str();
  cmd->add_option("--max-batch", args->max_batch, "Examples per model call: memory is bounded by this")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--eps-sweep", args->sweep,
                  "fgsm, pgd: accuracy at each eps of a list, e.g. 0,0.05,0.1,0.2");
  cmd->add_option("--out", args->out,
                  "Write the adversarial examples to this .npy file (the input's shape); for --model demo a "
                  "text file, one sequence a line");
  cmd->add_option("--png", args->png,
                  "Draw original / adversarial / difference for image inputs (up to 4 examples), or with "
                  "--eps-sweep the accuracy curve");
  add_analysis_options(cmd, &args->output);
  cmd->add_flag("--json", args->output.json,
                "One JSON object: per example (input order) success, l0, l2, linf, labels, predictions and "
                "confidences; the summary (success rate, accuracy, queries, norm quantiles)");
  cmd->callback([args, &exit_code] { exit_code = run_attack(*args); });
}

}  // namespace tfdebug::cli
