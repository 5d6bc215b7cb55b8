// tfdebug robust --model M.pt --input X.npy [--labels y.npy] ...: how easily a classifier's
// answers break — certified radii by randomized smoothing, perturbation curves, what-if curves,
// edge cases — and recommendations written from those numbers (docs/robustness.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis_output.hpp"
#include "cli_input.hpp"
#include "commands.hpp"
#include "demo_target.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/robust/edge_cases.hpp"
#include "tfdebug/robust/layer_activations.hpp"
#include "tfdebug/robust/perturbation.hpp"
#include "tfdebug/robust/recommendations.hpp"
#include "tfdebug/robust/smoothing.hpp"
#include "tfdebug/robust/what_if.hpp"
#include "tfdebug/torch/interpret_model.hpp"
#include "tfdebug/torch/layer_model.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::cli {
namespace {

struct RobustArgs {
  std::string model, input, labels, training, feature_names;
  bool certify = false;
  double sigma = 0.25;
  std::int64_t n = 100000, n0 = 100;
  double alpha = 0.001;
  std::string perturb;
  std::string intensities;
  std::int64_t samples = 20;
  std::int64_t mask_id = 0;     // token-masking's fill
  std::int64_t vocabulary = 0;  // token-replacement's ids [0, vocabulary); 0: swap positions
  std::string whatif;
  std::int64_t grid = 20;
  std::int64_t row = 0;
  std::int64_t target = -1;
  std::vector<std::string> scenarios;
  bool edge_cases = false;
  std::string layer;              // --edge-cases: distances and coverage on this layer's activations
  double coverage_threshold = 0;  // a unit is covered above this
  std::size_t top = 10;
  std::uint64_t seed = 0;
  std::int64_t max_batch = 1000;
  AnalysisOutput output;  // --json, --run-dir, --html
  std::string png;
};

// Default intensities: noise scales in input units; probabilities for the masking kinds.
std::vector<double> default_intensities(robust::Perturbation kind) {
  if (kind == robust::Perturbation::gaussian || kind == robust::Perturbation::uniform)
    return {0, 0.05, 0.1, 0.2, 0.3, 0.5, 1};
  return {0, 0.1, 0.2, 0.3, 0.5, 0.75, 1};
}

std::vector<double> parse_numbers(const std::string& text, const std::string& what) {
  std::vector<double> out;
  for (const auto& row : csv_rows(text, what))
    for (const float v : row) out.push_back(v);
  if (out.empty()) throw Error(what + ": expected comma-separated numbers");
  return out;
}

// A feature by index ("2") or by name ("petal_length").
std::int64_t parse_feature(const std::string& word, const std::vector<std::string>& names,
                           std::int64_t numel) {
  const auto at = std::find(names.begin(), names.end(), word);
  if (at != names.end()) return at - names.begin();
  std::int64_t j = -1;
  try {
    std::size_t used = 0;
    j = std::stoll(word, &used);
    if (used != word.size()) j = -1;
  } catch (const std::exception&) {
    j = -1;
  }
  if (j < 0 || j >= numel) {
    throw Error("feature '" + terminal_safe(word) + "': expected an index 0.." + std::to_string(numel - 1) +
                (names.empty() ? std::string() : " or a name given by --feature-names or the CSV header"));
  }
  return j;
}

std::string feature_text(std::int64_t j, const std::vector<std::string>& names) {
  std::string s = std::to_string(j);
  if (static_cast<std::size_t>(j) < names.size())
    s += " " + terminal_safe(names[static_cast<std::size_t>(j)]);
  return s;
}

struct Data {
  std::vector<float> rows;
  std::vector<std::int64_t> example_shape;
  std::int64_t count = 0;
  std::vector<std::string> names;
};

Data read_data(const RobustArgs& args) {
  Data d;
  if (args.input.ends_with(".npy")) {
    std::vector<std::int64_t> shape;
    d.rows = npy_values(args.input, &shape);
    if (shape.size() >= 2) {
      d.example_shape.assign(shape.begin() + 1, shape.end());
    } else {
      d.example_shape = {static_cast<std::int64_t>(d.rows.size())};
    }
  } else {
    std::string header;
    const auto rows = csv_rows(read_text(args.input), args.input, &header);
    if (rows.empty()) throw Error(args.input + ": no rows of numbers");
    for (const auto& r : rows) {
      if (r.size() != rows.front().size())
        throw Error(args.input + ": rows of different lengths (expected " +
                    std::to_string(rows.front().size()) + ")");
      d.rows.insert(d.rows.end(), r.begin(), r.end());
    }
    d.example_shape = {static_cast<std::int64_t>(rows.front().size())};
    d.names = split_names(header);
  }
  std::int64_t numel = 1;
  for (const auto s : d.example_shape) numel *= s;
  if (numel < 1 || d.rows.empty()) throw Error(args.input + ": no examples");
  d.count = static_cast<std::int64_t>(d.rows.size()) / numel;
  if (!args.feature_names.empty()) d.names = split_names(args.feature_names);
  if (static_cast<std::int64_t>(d.names.size()) != numel) d.names.clear();
  return d;
}

std::vector<std::int64_t> read_labels(const std::string& path, std::int64_t n) {
  const std::vector<float> values = read_rows(path, 1, "--labels");
  if (static_cast<std::int64_t>(values.size()) != n) {
    throw Error(path + ": " + std::to_string(values.size()) + " labels for " + std::to_string(n) +
                " inputs (expected one class index per input)");
  }
  std::vector<std::int64_t> labels;
  for (const float v : values) {
    if (v != std::floor(v) || v < 0)
      throw Error(path + ": label " + format_number(v) + " is not a class index");
    labels.push_back(static_cast<std::int64_t>(v));
  }
  return labels;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Plots built member by member: GCC 12 warns on designated initializers that leave members out.
viz::LinePlot line_plot(const std::string& title, const std::string& x, const std::string& y,
                        bool unit_range) {
  viz::LinePlot plot;
  plot.title = title;
  plot.x.title = x;
  plot.y.title = y;
  if (unit_range) {
    plot.y.lo = 0;
    plot.y.hi = 1;
  }
  return plot;
}

viz::Series series(const std::string& name, std::vector<double> x = {}, std::vector<double> y = {}) {
  viz::Series s;
  s.name = name;
  s.x = std::move(x);
  s.y = std::move(y);
  return s;
}

void save_png(const RobustArgs& args, const viz::Plot& plot, const std::string& name,
              std::vector<std::string>& saved) {
  const std::filesystem::path path = std::filesystem::path(args.png) / name;
  viz::save(plot, path);
  saved.push_back(path.string());
}

int run_robust(const RobustArgs& args) {
  args.output.check();
  // Names checked before the model loads: a typo costs nothing.
  std::vector<robust::Perturbation> kinds;
  for (const auto& name : split_names(args.perturb)) kinds.push_back(robust::parse_perturbation(name));
  const bool any = args.certify || !kinds.empty() || !args.whatif.empty() || args.edge_cases;
  const bool demo_model = args.model == "demo";
  if (demo_model) {
    if (args.certify || !args.whatif.empty() || !args.scenarios.empty() || args.edge_cases)
      throw Error(
          "--model demo: its inputs are token ids, so --certify, --whatif, --scenario and --edge-cases "
          "(Gaussian noise, feature values, input-space distances) do not apply; it takes --perturb "
          "token-masking,token-replacement");
    for (const auto kind : kinds)
      if (kind != robust::Perturbation::token_masking && kind != robust::Perturbation::token_replacement)
        throw Error(std::string("--perturb ") + robust::perturbation_name(kind) +
                    ": --model demo takes token ids; token-masking or token-replacement");
    if (!any) kinds = {robust::Perturbation::token_masking, robust::Perturbation::token_replacement};
  }
  if (!any && kinds.empty()) kinds.push_back(robust::Perturbation::gaussian);
  if (!args.layer.empty() && !args.edge_cases)
    throw Error("--layer " + terminal_safe(args.layer) + " is where --edge-cases measures: add --edge-cases");
  if (!args.intensities.empty()) parse_numbers(args.intensities, "--intensities");
  if (args.mask_id < 0 || args.vocabulary < 0) throw Error("--mask-id and --vocabulary: expected ids >= 0");
  if (!args.png.empty()) std::filesystem::create_directories(args.png);

  // The demo: its token sequences as rows of float ids, its copy task's answers as the labels.
  std::optional<TrainedDemo> demo;
  std::vector<std::int64_t> copy_answers;
  const Data data = [&] {
    if (!demo_model) return read_data(args);
    demo::DemoConfig config;
    const DemoSequences seqs = read_demo_sequences(args.input, config);
    if (args.mask_id >= config.vocab || args.vocabulary > config.vocab)
      throw Error("--mask-id and --vocabulary: the demo's ids are 0.." + std::to_string(config.vocab - 1));
    Data d;
    d.rows.assign(seqs.ids.begin(), seqs.ids.end());
    d.example_shape = {seqs.length};
    d.count = seqs.count;
    copy_answers = seqs.answers;
    return d;
  }();
  const std::int64_t numel = static_cast<std::int64_t>(data.rows.size()) / data.count;
  if (demo_model) demo = train_demo();
  torch::TorchModel model = demo_model ? demo_forward_model(*demo->trainer, numel)
                                       : torch::load_torchscript(args.model, data.example_shape);
  const std::vector<std::int64_t> labels =
      !args.labels.empty() ? read_labels(args.labels, data.count) : copy_answers;
  // --layer: the layer's activations (layer_model.hpp: the output of the last op that reads its
  // parameters) are where edge-case distances and coverage are taken; loaded now, so that a
  // wrong name fails before any work.
  std::optional<torch::TorchLayerModel> layer_model;
  std::optional<robust::LayerActivations> layer_units;
  if (!args.layer.empty()) {
    layer_model.emplace(torch::load_torchscript_layer(args.model, data.example_shape, args.layer));
    layer_units.emplace(*layer_model);
  }
  if (model.output_size() < 2)
    throw Error(args.model + ": " + std::to_string(model.output_size()) +
                " output; robust needs a classifier (one output per class, at least 2)");
  for (const auto l : labels)
    if (l >= model.output_size())
      throw Error(args.labels + ": label " + std::to_string(l) + " is not a class of the model (0.." +
                  std::to_string(model.output_size() - 1) + ")");
  const auto row_at = [&](std::int64_t i) {
    return std::span<const float>(data.rows).subspan(static_cast<std::size_t>(i * numel), numel);
  };

  nlohmann::json out = {{"model", args.model},
                        {"inputs", data.count},
                        {"shape", data.example_shape},
                        {"classes", model.output_size()},
                        {"seed", args.seed}};
  if (demo_model) {
    std::vector<float> logits(static_cast<std::size_t>(data.count * model.output_size()));
    std::vector<std::int64_t> predicted;
    model.forward(TensorView(data.rows.data(), DType::f32, std::vector<std::int64_t>{data.count, numel}),
                  logits);
    for (std::int64_t i = 0; i < data.count; ++i) {
      const auto row = std::span<const float>(logits).subspan(
          static_cast<std::size_t>(i * model.output_size()), static_cast<std::size_t>(model.output_size()));
      predicted.push_back(std::max_element(row.begin(), row.end()) - row.begin());
    }
    out["demo"] = {{"training",
                    {{"steps", kDemoTrainSteps},
                     {"seed", kDemoSeed},
                     {"loss", json_number(demo->loss)},
                     {"copy_accuracy", json_number(demo->copy_accuracy)}}},
                   {"labels_from", !args.labels.empty() ? "--labels"
                                   : !labels.empty()    ? "copy task"
                                                        : "model predictions"},
                   {"labels", labels},
                   {"predicted", predicted}};
  }
  robust::Measurements measured;
  measured.feature_names = data.names;
  std::vector<std::string> pngs;
  const bool colour = use_colour(stdout);
  const auto heading = [&](const std::string& text) {
    if (!args.output.json) std::printf("\n%s\n", paint(text, Tone::bold, colour).c_str());
  };
  if (!args.output.json) {
    std::printf("%s of %s on %s (%s%s)\n", paint("robustness", Tone::bold, colour).c_str(),
                terminal_safe(args.model).c_str(), terminal_safe(args.input).c_str(),
                plural(data.count, "input").c_str(),
                labels.empty() ? ", no labels: against the clean predictions" : "");
  }

  if (args.certify) {
    robust::SmoothingOptions o;
    o.sigma = args.sigma;
    o.n = args.n;
    o.n0 = args.n0;
    o.alpha = args.alpha;
    o.seed = args.seed;
    o.max_batch = args.max_batch;
    nlohmann::json predicted = nlohmann::json::array(), counts = nlohmann::json::array(),
                   lower = nlohmann::json::array(), radius = nlohmann::json::array();
    std::vector<double> radii;
    std::int64_t abstained = 0, right = 0;
    std::vector<std::pair<double, bool>> certified;  // radius, correct
    for (std::int64_t i = 0; i < data.count; ++i) {
      const robust::Certificate c = robust::certify(model, row_at(i), o);
      predicted.push_back(c.predicted);
      counts.push_back(c.count);
      lower.push_back(json_number(c.p_lower));
      radius.push_back(json_number(c.radius));
      radii.push_back(c.radius);
      abstained += c.abstained();
      const bool correct =
          !c.abstained() && (labels.empty() || c.predicted == labels[static_cast<std::size_t>(i)]);
      right += correct;
      certified.emplace_back(c.radius, correct);
    }
    robust::CertificationSummary s{args.sigma, data.count, static_cast<double>(abstained) / data.count,
                                   static_cast<double>(right) / data.count, median(radii)};
    measured.certification = s;
    out["certify"] = {{"sigma", args.sigma},
                      {"n", args.n},
                      {"n0", args.n0},
                      {"alpha", args.alpha},
                      {"predicted", predicted},
                      {"count", counts},
                      {"p_lower", lower},
                      {"radius", radius},
                      {"abstain_rate", json_number(s.abstain_rate)},
                      {"certified_accuracy", json_number(s.certified_accuracy)},
                      {"median_radius", json_number(s.median_radius)}};
    heading("certified robustness: randomized smoothing, sigma " + format_number(args.sigma) + ", n " +
            format_count(args.n) + ", alpha " + format_number(args.alpha));
    if (!args.output.json) {
      KeyValueTable t;
      t.add("abstained",
            plural(abstained, "input") + " (" + robust::format_measure(100 * s.abstain_rate) + "%)");
      t.add(labels.empty() ? "certified" : "certified and correct",
            robust::format_measure(100 * s.certified_accuracy) + "%");
      t.add("median certified L2 radius", format_number(s.median_radius));
      t.print(stdout);
    }
    if (!args.png.empty()) {
      // Certified accuracy at radius r: the fraction certified correctly with a radius >= r.
      double top = 0;
      for (const auto& [r, ok] : certified) top = std::max(top, r);
      viz::LinePlot plot =
          line_plot("certified accuracy (sigma " + format_number(args.sigma) + ")", "L2 radius",
                    labels.empty() ? "fraction certified" : "certified accuracy", true);
      viz::Series curve = series("sigma " + format_number(args.sigma));
      for (int k = 0; k <= 50; ++k) {
        const double r = top * k / 50;
        std::int64_t at = 0;
        for (const auto& [cr, ok] : certified) at += ok && cr >= r;
        curve.x.push_back(r);
        curve.y.push_back(static_cast<double>(at) / data.count);
      }
      plot.series.push_back(curve);
      save_png(args, plot, "certified_accuracy.png", pngs);
    }
  }

  if (!kinds.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto kind : kinds) {
      robust::PerturbationOptions o;
      o.kind = kind;
      o.intensities = args.intensities.empty() ? default_intensities(kind)
                                               : parse_numbers(args.intensities, "--intensities");
      o.samples = args.samples;
      o.fill = static_cast<float>(args.mask_id);
      o.vocabulary = demo_model && args.vocabulary == 0 ? demo->config.vocab : args.vocabulary;
      o.seed = args.seed;
      o.max_batch = args.max_batch;
      const robust::PerturbationReport r = robust::perturbation_test(model, data.rows, labels, o);
      measured.perturbations.push_back(r);
      nlohmann::json j = {{"kind", robust::perturbation_name(kind)},
                          {"intensities", o.intensities},
                          {"samples", o.samples},
                          {"clean_accuracy", json_number(r.clean_accuracy)},
                          {"score", json_number(r.score)},
                          {"accuracy_score", json_number(r.accuracy_score)},
                          {"evaluations", r.evaluations}};
      for (const char* key : {"accuracy", "agreement", "flip_rate", "confidence"})
        j[key] = nlohmann::json::array();
      for (const auto& p : r.points) {
        j["accuracy"].push_back(json_number(p.accuracy));
        j["agreement"].push_back(json_number(p.agreement));
        j["flip_rate"].push_back(json_number(p.flip_rate));
        j["confidence"].push_back(json_number(p.confidence));
      }
      j["hotspots"] = nlohmann::json::array();
      for (const auto& h : r.hotspots)
        j["hotspots"].push_back({{"unit", h.unit}, {"flip_rate", json_number(h.flip_rate)}});
      j["failure_modes"] = nlohmann::json::array();
      for (const auto& f : r.failure_modes)
        j["failure_modes"].push_back({{"from", f.from}, {"to", f.to}, {"count", f.count}});
      list.push_back(j);
      heading(std::string("perturbation: ") + robust::perturbation_name(kind) + ", " +
              plural(o.samples, "sample") + " an input; score " + robust::format_measure(r.score) +
              " (normalised area under agreement)");
      if (!args.output.json) {
        using Align = Table::Align;
        Table t({{.header = "intensity", .align = Align::right},
                 {.header = labels.empty() ? "agreement" : "accuracy", .align = Align::right},
                 {.header = "flipped", .align = Align::right},
                 {.header = "confidence", .align = Align::right}});
        for (const auto& p : r.points) {
          t.add({format_number(p.intensity), robust::format_measure(100 * p.accuracy) + "%",
                 robust::format_measure(100 * p.flip_rate) + "%", format_number(p.confidence)},
                p.flip_rate >= 0.1 ? Tone::warn : Tone::plain);
        }
        t.print(stdout, terminal_columns(stdout), colour);
        const bool scaled = kind == robust::Perturbation::gaussian || kind == robust::Perturbation::uniform;
        std::printf("  hotspots (%s alone%s): ", r.tokens ? "each token" : "each feature",
                    scaled ? (" at " + format_number(o.intensities.back())).c_str() : ", always perturbed");
        for (std::size_t k = 0; k < std::min<std::size_t>(5, r.hotspots.size()); ++k) {
          std::printf("%s%s %s%%", k ? ", " : "",
                      r.tokens ? ("token " + std::to_string(r.hotspots[k].unit)).c_str()
                               : feature_text(r.hotspots[k].unit, data.names).c_str(),
                      robust::format_measure(100 * r.hotspots[k].flip_rate).c_str());
        }
        std::printf("\n");
        if (!r.failure_modes.empty()) {
          std::printf("  failure modes (%s -> predicted):", labels.empty() ? "clean prediction" : "label");
          for (std::size_t k = 0; k < std::min<std::size_t>(5, r.failure_modes.size()); ++k)
            std::printf(" %lld->%lld x%s", static_cast<long long>(r.failure_modes[k].from),
                        static_cast<long long>(r.failure_modes[k].to),
                        format_count(r.failure_modes[k].count).c_str());
          std::printf("\n");
        }
      }
      if (!args.png.empty()) {
        viz::LinePlot plot = line_plot(std::string(robust::perturbation_name(kind)) + " perturbation",
                                       "intensity", "fraction", true);
        plot.markers = true;
        viz::Series acc = series(labels.empty() ? "agreement" : "accuracy"),
                    agree = series("agreement with clean"), conf = series("confidence");
        for (const auto& p : r.points) {
          acc.x.push_back(p.intensity);
          acc.y.push_back(p.accuracy);
          agree.x.push_back(p.intensity);
          agree.y.push_back(p.agreement);
          conf.x.push_back(p.intensity);
          conf.y.push_back(p.confidence);
        }
        plot.series.push_back(acc);
        if (!labels.empty()) plot.series.push_back(agree);
        plot.series.push_back(conf);
        save_png(args, plot, std::string("perturbation_") + robust::perturbation_name(kind) + ".png", pngs);
      }
    }
    out["perturbation"] = list;
  }

  if (!args.whatif.empty() || !args.scenarios.empty()) {
    if (args.row < 0 || args.row >= data.count)
      throw Error("--row " + std::to_string(args.row) + ": the input has rows 0.." +
                  std::to_string(data.count - 1));
    std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
    std::vector<std::int64_t> shape = data.example_shape;
    shape.insert(shape.begin(), 1);
    const auto x = row_at(args.row);
    model.forward(TensorView(const_cast<float*>(x.data()), DType::f32, shape), outputs);
    const std::int64_t target =
        args.target >= 0 ? args.target : std::max_element(outputs.begin(), outputs.end()) - outputs.begin();
    if (target >= model.output_size())
      throw Error("--target " + std::to_string(target) + ": the model has outputs 0.." +
                  std::to_string(model.output_size() - 1));
    nlohmann::json w = {{"row", args.row}, {"target", target}};
    if (!args.whatif.empty()) {
      std::vector<std::int64_t> features;
      for (const auto& word : split_names(args.whatif))
        features.push_back(parse_feature(word, data.names, numel));
      if (features.size() > 2) throw Error("--whatif: one or two features (FEATURE or FEATURE,FEATURE2)");
      std::vector<std::vector<double>> grids;
      grids.reserve(features.size());
      for (const auto f : features) grids.push_back(robust::feature_grid(data.rows, numel, f, args.grid));
      const robust::PartialDependence pd =
          robust::partial_dependence(model, data.rows, features, grids, target, args.max_batch);
      w["features"] = features;
      w["grids"] = grids;
      w["pdp"] = pd.average;
      w["ice"] = pd.ice;
      w["sweeps"] = nlohmann::json::array();
      heading("what-if: output " + std::to_string(target) + " against feature" +
              (features.size() > 1 ? "s " : " ") + feature_text(features[0], data.names) +
              (features.size() > 1 ? " and " + feature_text(features[1], data.names) : std::string()) +
              " (partial dependence over " + plural(data.count, "row") + ")");
      for (std::size_t fi = 0; fi < features.size(); ++fi) {
        const std::int64_t f = features[fi];
        const auto& grid = grids[fi];
        const robust::FeatureSweep s = robust::sweep_feature(model, x, f, grid, 40, args.max_batch);
        measured.sweeps.push_back(s);
        nlohmann::json flips = nlohmann::json::array();
        for (const auto& fl : s.flips)
          flips.push_back({{"at", json_number(fl.at)}, {"from", fl.from}, {"to", fl.to}});
        w["sweeps"].push_back({{"feature", f}, {"grid", grid}, {"predicted", s.predicted}, {"flips", flips}});
        if (!args.output.json) {
          std::printf("  sweep of feature %s on row %lld (%s..%s): ", feature_text(f, data.names).c_str(),
                      static_cast<long long>(args.row), format_number(grid.front()).c_str(),
                      format_number(grid.back()).c_str());
          if (s.flips.empty())
            std::printf("the decision stays class %lld\n", static_cast<long long>(s.predicted.front()));
          for (std::size_t k = 0; k < s.flips.size(); ++k)
            std::printf("%sclass %lld -> %lld at %s", k ? "; " : "", static_cast<long long>(s.flips[k].from),
                        static_cast<long long>(s.flips[k].to), format_number(s.flips[k].at).c_str());
          if (!s.flips.empty()) std::printf("\n");
        }
      }
      if (!args.output.json && features.size() == 1) {
        std::printf("  partial dependence:");
        for (std::size_t g = 0; g < grids[0].size(); g += std::max<std::size_t>(1, grids[0].size() / 6))
          std::printf(" %s: %s", format_number(grids[0][g]).c_str(), format_number(pd.average[g]).c_str());
        std::printf("\n");
      }
      if (!args.png.empty()) {
        if (features.size() == 1) {
          viz::LinePlot plot = line_plot("partial dependence and ICE of output " + std::to_string(target),
                                         "feature " + feature_text(features[0], data.names),
                                         "output " + std::to_string(target), false);
          plot.series.push_back(series("partial dependence", grids[0], pd.average));
          const std::size_t shown = std::min<std::size_t>(pd.ice.size(), 7);
          for (std::size_t i = 0; i < shown; ++i) {
            const std::size_t r = i * pd.ice.size() / shown;
            plot.series.push_back(series("ICE row " + std::to_string(r), grids[0], pd.ice[r]));
          }
          save_png(args, plot, "whatif_pdp_" + std::to_string(features[0]) + ".png", pngs);
        } else {
          viz::Heatmap h;
          h.title = "partial dependence of output " + std::to_string(target);
          h.x_title = "feature " + feature_text(features[1], data.names);
          h.y_title = "feature " + feature_text(features[0], data.names);
          h.rows = grids[0].size();
          h.cols = grids[1].size();
          h.values = pd.average;
          h.value_title = "output " + std::to_string(target);
          for (const double v : grids[0]) h.row_labels.push_back(format_number(v));
          for (const double v : grids[1]) h.col_labels.push_back(format_number(v));
          save_png(args, h,
                   "whatif_pdp_" + std::to_string(features[0]) + "_" + std::to_string(features[1]) + ".png",
                   pngs);
        }
      }
    }
    if (!args.scenarios.empty()) {
      std::vector<robust::Scenario> scenarios;
      for (const auto& text : args.scenarios) {
        robust::Scenario s{text, {}};
        for (const auto& change : split_names(text)) {
          const auto eq = change.find('=');
          if (eq == std::string::npos)
            throw Error("--scenario '" + terminal_safe(text) +
                        "': expected FEATURE=VALUE[,FEATURE=VALUE...]");
          const double v = parse_numbers(change.substr(eq + 1), "--scenario " + change).front();
          s.changes.emplace_back(parse_feature(change.substr(0, eq), data.names, numel),
                                 static_cast<float>(v));
        }
        scenarios.push_back(s);
      }
      const auto table = robust::scenario_table(model, x, scenarios);
      w["scenarios"] = nlohmann::json::array();
      for (const auto& r : table)
        w["scenarios"].push_back(
            {{"name", r.name}, {"outputs", r.outputs}, {"predicted", r.predicted}, {"change", r.change}});
      heading("scenarios for row " + std::to_string(args.row));
      if (!args.output.json) {
        using Align = Table::Align;
        Table t({{.header = "scenario", .elidable = true, .minimum = 12},
                 {.header = "predicted", .align = Align::right},
                 {.header = "output " + std::to_string(target), .align = Align::right},
                 {.header = "change", .align = Align::right}});
        for (const auto& r : table)
          t.add({terminal_safe(r.name), std::to_string(r.predicted),
                 format_number(r.outputs[static_cast<std::size_t>(target)]),
                 format_number(r.change[static_cast<std::size_t>(target)])},
                r.predicted != table[0].predicted ? Tone::warn : Tone::plain);
        t.print(stdout, terminal_columns(stdout), colour);
      }
    }
    out["whatif"] = w;
  }

  if (args.edge_cases) {
    std::vector<float> training;
    robust::EdgeCaseOptions o;
    o.max_batch = args.max_batch;
    if (!args.training.empty()) {
      training = read_rows(args.training, numel, "--training");
      o.training = training;
    }
    if (layer_units) {
      o.layer = &*layer_units;
      o.coverage_threshold = args.coverage_threshold;
    }
    const robust::EdgeCaseReport e = robust::find_edge_cases(model, data.rows, labels, o);
    measured.edge_cases = e;
    nlohmann::json risky = nlohmann::json::array();
    for (const auto& c : e.risky) risky.push_back({{"index", c.index}, {"reasons", c.reasons}});
    out["edge_cases"] = {{"margins", e.margins},
                         {"gradient_norms", e.gradient_norms},
                         {"mahalanobis", e.mahalanobis},
                         {"distance_space", e.distance_space},
                         {"shrinkage", o.shrinkage},
                         {"ood_threshold", json_number(e.ood_threshold)},
                         {"margin_cut", json_number(e.margin_cut)},
                         {"gradient_cut", json_number(e.gradient_cut)},
                         {"risky", risky}};
    if (!args.layer.empty()) {
      out["edge_cases"]["layer"] = args.layer;
      out["edge_cases"]["layer_units"] = layer_units->output_size();
      out["edge_cases"]["coverage"] = {{"threshold", args.coverage_threshold},
                                       {"covered", e.coverage->covered},
                                       {"units", e.coverage->units},
                                       {"fraction", json_number(e.coverage->fraction())}};
    }
    heading(
        "edge cases: " + plural(static_cast<std::int64_t>(e.risky.size()), "risky input") + " of " +
        std::to_string(data.count) +
        (args.training.empty()
             ? " (no --training: no out-of-distribution check)"
             : " (Mahalanobis on " +
                   (args.layer.empty() ? std::string("the inputs")
                                       : "layer " + terminal_safe(args.layer) + "'s " +
                                             std::to_string(layer_units->output_size()) + " activations") +
                   ", covariance of --training, shrinkage 0.01)"));
    if (!args.output.json && e.coverage) {
      std::printf("  neuron coverage of layer %s: %lld of %lld units above %s on some input (%s%%)\n",
                  terminal_safe(args.layer).c_str(), static_cast<long long>(e.coverage->covered),
                  static_cast<long long>(e.coverage->units), format_number(args.coverage_threshold).c_str(),
                  robust::format_measure(100 * e.coverage->fraction()).c_str());
    }
    if (!args.output.json) {
      for (std::size_t k = 0; k < std::min(args.top, e.risky.size()); ++k) {
        std::printf("  #%lld: ", static_cast<long long>(e.risky[k].index));
        for (std::size_t r = 0; r < e.risky[k].reasons.size(); ++r)
          std::printf("%s%s", r ? "; " : "", e.risky[k].reasons[r].c_str());
        std::printf("\n");
      }
    }
  }

  const auto recommendations = robust::recommend(measured);
  nlohmann::json recs = nlohmann::json::array();
  for (const auto& r : recommendations) {
    nlohmann::json numbers = nlohmann::json::object();
    for (const auto& [name, v] : r.numbers) numbers[name] = json_number(v);
    recs.push_back({{"topic", r.topic}, {"text", r.text}, {"numbers", numbers}});
  }
  out["recommendations"] = recs;
  out["png"] = pngs;
  args.output.emit("robust", "robustness of " + args.model + " on " + args.input, out, pngs);
  if (args.output.json) return 0;
  heading("recommendations");
  // Not a terminal (a pipe, a file): lines of 100 columns.
  const std::size_t columns = terminal_columns(stdout);
  const std::size_t text_columns = std::max<std::size_t>(40, columns == 0 ? 100 : columns);
  for (const auto& r : recommendations) {
    for (const auto& line : wrap_words("- " + r.text, text_columns - 2, 2))
      std::printf("  %s\n", line.c_str());
  }
  for (const auto& p : pngs) std::printf("wrote %s\n", terminal_safe(p).c_str());
  return 0;
}

}  // namespace

void register_robust(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RobustArgs>();
  CLI::App* cmd = app.add_subcommand("robust",
                                     "How easily does it break? Certified radii, perturbation curves, "
                                     "what-if, edge cases (docs/robustness.md)");
  cmd->add_option(
         "--model", args->model,
         "A TorchScript classifier (torch.jit.script(model).save(path)); or demo: tfdebug demo's language "
         "model, trained here for a few seconds (its next token; --perturb token-masking, "
         "token-replacement)")
      ->required();
  cmd->add_option("--input", args->input,
                  "The inputs: a .npy file [n, ...] or a CSV file, one example a row; for --model demo token "
                  "sequences of one length, a file of one a line or \"3 5 1 0 3; 2 4 6 0 2\"")
      ->required();
  cmd->add_option(
      "--labels", args->labels,
      "Their classes (.npy or CSV, one a row); without them, accuracy is against the clean predictions");
  cmd->add_flag("--certify", args->certify,
                "Randomized smoothing (Cohen et al. 2019): CERTIFY every input, certified L2 radius");
  cmd->add_option("--sigma", args->sigma, "--certify: the noise's standard deviation, in input units")
      ->capture_default_str();
  cmd->add_option("--n", args->n, "--certify: samples estimating the top class's probability")
      ->capture_default_str();
  cmd->add_option("--n0", args->n0, "--certify: samples choosing the class")->capture_default_str();
  cmd->add_option("--alpha", args->alpha, "--certify: the certificate's failure probability")
      ->capture_default_str();
  cmd->add_option(
      "--perturb", args->perturb,
      "Perturbations, comma-separated: gaussian, uniform, salt-and-pepper, feature-dropout, token-masking, "
      "token-replacement (default: gaussian when nothing else is asked)");
  cmd->add_option(
      "--intensities", args->intensities,
      "--perturb: comma-separated, increasing (default: gaussian/uniform 0,0.05,0.1,0.2,0.3,0.5,1 in input "
      "units; the others 0,0.1,0.2,0.3,0.5,0.75,1 as probabilities)");
  cmd->add_option("--samples", args->samples, "--perturb: perturbed copies of each input per intensity")
      ->capture_default_str();
  cmd->add_option("--mask-id", args->mask_id, "token-masking: the id a masked token becomes")
      ->capture_default_str();
  cmd->add_option("--vocabulary", args->vocabulary,
                  "token-replacement: random ids in [0, vocabulary) (default: 0, another position's token; "
                  "the demo: its 16 ids)")
      ->capture_default_str();
  cmd->add_option(
      "--whatif", args->whatif,
      "FEATURE[,FEATURE2] (index or name): partial dependence and ICE, and a sweep of --row with the values "
      "where its decision flips");
  cmd->add_option("--grid", args->grid,
                  "--whatif: grid points between the feature's 5th and 95th percentiles")
      ->capture_default_str();
  cmd->add_option("--row", args->row, "--whatif, --scenario: the input row to sweep or change")
      ->capture_default_str();
  cmd->add_option("--target", args->target,
                  "--whatif: the output to plot (default: --row's predicted class)");
  cmd->add_option("--scenario", args->scenarios,
                  "FEATURE=VALUE[,FEATURE=VALUE...]: --row with these features changed (repeatable)");
  cmd->add_flag(
      "--edge-cases", args->edge_cases,
      "Rank risky inputs: low margin, high margin-gradient norm, far from --training (Mahalanobis)");
  cmd->add_option(
      "--training", args->training,
      "--edge-cases: training rows (.npy or CSV) for the Mahalanobis covariance (shrinkage 0.01)");
  cmd->add_option("--layer", args->layer,
                  "--edge-cases: take the Mahalanobis distances on this layer's activations (a module path "
                  "with parameters, as grad-cam's --layer) and report its neuron coverage over the inputs");
  cmd->add_option("--coverage-threshold", args->coverage_threshold,
                  "--layer: a unit is covered when its activation exceeds this on some input")
      ->capture_default_str();
  cmd->add_option("--top", args->top, "--edge-cases: risky inputs shown")->capture_default_str();
  cmd->add_option("--feature-names", args->feature_names,
                  "Names of the features, comma-separated (default: CSV header)");
  cmd->add_option("--seed", args->seed, "Seed of every random draw (same seed, same answer)")
      ->capture_default_str();
  cmd->add_option("--max-batch", args->max_batch, "Examples per model call: memory is bounded by this")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  add_analysis_options(cmd, &args->output);
  cmd->add_flag("--json", args->output.json,
                "One JSON object: certify, perturbation, whatif, edge_cases, recommendations");
  cmd->add_option("--png", args->png, "Write the curves as PNG files into this directory");
  cmd->callback([args, &exit_code] { exit_code = run_robust(*args); });
}

}  // namespace tfdebug::cli
