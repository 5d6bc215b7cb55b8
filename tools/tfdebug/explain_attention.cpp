// tfdebug explain --model demo --method attention-rollout (explain_attention.hpp): trains the demo
// model in-process (fixed seed, a few hundred steps: it learns the copy task's attention), then
// explains its next-token prediction for the given tokens by Attention Rollout, with every head's
// pattern (entropy, role, importance), and writes the attention as HTML or PNG on request.
#include "explain_attention.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "demo_model.hpp"
#include "demo_target.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/attention_view.hpp"
#include "tfdebug/interpret/attention.hpp"
#include "tfdebug/interpret/attention_rollout.hpp"
#include "tfdebug/torch/attention_capture.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::cli {
namespace {

interpret::HeadFusion parse_fusion(const std::string& name) {
  if (name == "mean") return interpret::HeadFusion::mean;
  if (name == "max") return interpret::HeadFusion::max;
  if (name == "min") return interpret::HeadFusion::min;
  throw Error("--head-fusion " + terminal_safe(name) + ": expected mean, max or min");
}

nlohmann::json matrix(const std::vector<double>& values, std::size_t n) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < n; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::size_t j = 0; j < n; ++j) row.push_back(json_number(values[i * n + j]));
    rows.push_back(std::move(row));
  }
  return rows;
}

void write_png(const std::string& path, const interpret::AttentionMaps& maps,
               const std::vector<std::string>& labels, const std::vector<double>& rollout) {
  viz::Figure figure;
  figure.title = "demo: attention per layer and head, and the rollout";
  figure.columns = static_cast<int>(maps.heads);
  const auto n = static_cast<std::size_t>(maps.tokens);
  const auto panel = [&](std::string title, std::span<const double> values) {
    viz::Heatmap h;
    h.title = std::move(title);
    h.rows = h.cols = n;
    h.values.assign(values.begin(), values.end());
    h.row_labels = h.col_labels = labels;
    h.x_title = "key";
    h.y_title = "query";
    h.lo = 0;
    h.hi = 1;  // one colour scale for every panel, so that they compare
    return h;
  };
  for (std::int64_t l = 0; l < maps.layer_count(); ++l)
    for (std::int64_t h = 0; h < maps.heads; ++h)
      figure.panels.emplace_back(
          panel(maps.layers[static_cast<std::size_t>(l)] + " head " + std::to_string(h), maps.head(l, h)));
  figure.panels.emplace_back(panel("rollout (input token by position)", rollout));
  const int rows = static_cast<int>((figure.panels.size() + figure.columns - 1) / figure.columns);
  viz::save(figure, path, {figure.columns * 360, rows * 340 + 40});
}

}  // namespace

int run_attention_explain(const AttentionExplainArgs& args) {
  if (!(args.discard_ratio >= 0 && args.discard_ratio < 1))
    throw Error("--discard-ratio " + format_number(args.discard_ratio) + ": expected a fraction in [0, 1)");
  const interpret::RolloutOptions rollout_options{.fusion = parse_fusion(args.fusion),
                                                  .discard_ratio = args.discard_ratio};
  const bool demo_model = args.model == "demo";
  demo::DemoConfig config;
  config.seed = kDemoSeed;
  const std::vector<std::int64_t> tokens = parse_tokens(args.input, demo_model ? &config : nullptr);
  const auto n = static_cast<std::int64_t>(tokens.size());

  // The model explained: the demo's next-token logits at the last position, trained here; or a
  // TorchScript file's outputs for the token ids.
  std::optional<demo::DemoTrainer> trainer;
  double loss = 0, accuracy = 0, train_seconds = 0;
  std::optional<torch::TorchAttentionModel> loaded;
  if (demo_model) {
    const auto start = std::chrono::steady_clock::now();
    trainer.emplace(config);
    for (std::int64_t step = 0; step < kDemoTrainSteps; ++step) loss = trainer->train_step();
    accuracy = trainer->evaluate();
    train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    loaded.emplace(
        trainer->model(),
        [&](const at::Tensor& batch) { return trainer->logits(batch.to(at::kLong)).select(1, -1); },
        std::vector<std::int64_t>{n});
  } else {
    loaded.emplace(torch::load_torchscript_attention(args.model, {n}));
  }
  torch::TorchAttentionModel& model = *loaded;
  if (args.target >= model.output_size())
    throw Error("--target " + std::to_string(args.target) + ": the model has " +
                std::to_string(model.output_size()) + " outputs (0.." +
                std::to_string(model.output_size() - 1) + ")");
  const std::vector<float> x(tokens.begin(), tokens.end());
  const interpret::Attribution a = interpret::rollout_attribution(
      model, x, {.rollout = rollout_options, .query = -1, .target = args.target});
  std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
  model.forward(TensorView(x.data(), DType::f32, std::vector<std::int64_t>{1, n}), outputs);
  const std::int64_t target =
      args.target >= 0
          ? args.target
          : static_cast<std::int64_t>(std::max_element(outputs.begin(), outputs.end()) - outputs.begin());
  const interpret::AttentionMaps maps = model.attention(x);
  const std::vector<double> rollout = interpret::attention_rollout(maps, rollout_options);
  const std::vector<double> flow = interpret::attention_flow(maps, rollout_options);
  const std::vector<interpret::HeadStats> stats =
      interpret::head_stats(maps, tokens, {.delimiter = args.delimiter});
  const interpret::HeadImportance importance = interpret::head_importance(model, x, target);

  std::vector<std::string> labels;
  labels.reserve(tokens.size());
  for (const std::int64_t t : tokens) labels.push_back(std::to_string(t));
  std::vector<std::string> wrote;
  if (!args.html.empty()) {
    write_attention_html({.title = (demo_model ? std::string("demo") : args.model) + ": " + args.input,
                          .tokens = labels,
                          .layers = maps.layers,
                          .heads = maps.heads,
                          .weights = maps.weights},
                         args.html);
    wrote.push_back(args.html);
  }
  if (!args.png.empty()) {
    if (viz::format_for(args.png) != viz::Format::png)
      throw Error("--attention-png " + args.png + ": expected a .png file name");
    write_png(args.png, maps, labels, rollout);
    wrote.push_back(args.png);
  }

  if (args.output.wanted()) {
    nlohmann::json heads = nlohmann::json::array();
    for (std::size_t k = 0; k < stats.size(); ++k) {
      const interpret::HeadStats& s = stats[k];
      heads.push_back({{"layer", s.layer},
                       {"layer_name", maps.layers[static_cast<std::size_t>(s.layer)]},
                       {"head", s.head},
                       {"role", interpret::role_name(s.role)},
                       {"role_fraction", json_number(s.role_fraction)},
                       {"entropy", json_number(s.entropy)},
                       {"entropy_relative", json_number(s.entropy_relative)},
                       {"mean_distance", json_number(s.mean_distance)},
                       {"confidence", json_number(s.confidence)},
                       {"fractions",
                        {{"self", json_number(s.fraction_self)},
                         {"previous", json_number(s.fraction_previous)},
                         {"next", json_number(s.fraction_next)},
                         {"first", json_number(s.fraction_first)},
                         {"delimiter", json_number(s.fraction_delimiter)},
                         {"broad", json_number(s.fraction_broad)}}},
                       {"importance", json_number(importance.importance[k])}});
    }
    nlohmann::json attention = nlohmann::json::array();
    for (std::int64_t l = 0; l < maps.layer_count(); ++l) {
      nlohmann::json layer = nlohmann::json::array();
      for (std::int64_t h = 0; h < maps.heads; ++h) {
        const auto head = maps.head(l, h);
        layer.push_back(matrix({head.begin(), head.end()}, static_cast<std::size_t>(n)));
      }
      attention.push_back(std::move(layer));
    }
    nlohmann::json out = {{"method", a.method},
                          {"model", args.model},
                          {"tokens", tokens},
                          {"target", target},
                          {"target_chosen", args.target >= 0 ? "given" : "top output"},
                          {"output", json_number(a.output)},
                          {"query", n - 1},
                          {"attributions", a.values},
                          {"sum", json_number(a.sum())},
                          {"head_fusion", args.fusion},
                          {"discard_ratio", args.discard_ratio},
                          {"layers", maps.layers},
                          {"heads", maps.heads},
                          {"attention", attention},
                          {"rollout", matrix(rollout, static_cast<std::size_t>(n))},
                          {"flow", matrix(flow, static_cast<std::size_t>(n))},
                          {"head_analysis", heads},
                          {"wrote", wrote}};
    if (demo_model) {
      out["training"] = {{"steps", kDemoTrainSteps},
                         {"seed", kDemoSeed},
                         {"loss", json_number(loss)},
                         {"copy_accuracy", json_number(accuracy)}};
    }
    std::vector<std::string> images;
    if (!args.png.empty()) images.push_back(args.png);
    args.output.emit("explain",
                     "attention-rollout of " + (demo_model ? std::string("the demo model") : args.model) +
                         " on " + args.input,
                     out, images);
    if (args.output.json) return 0;
  }

  const bool colour = use_colour(stdout);
  if (demo_model) {
    std::printf("%s of the demo's next token after \"%s\": token %lld (%s)\n",
                paint(a.method, Tone::bold, colour).c_str(), terminal_safe(args.input).c_str(),
                static_cast<long long>(target), args.target >= 0 ? "--target" : "its top prediction");
  } else {
    std::printf("%s of output %lld (%s) of %s for \"%s\"\n", paint(a.method, Tone::bold, colour).c_str(),
                static_cast<long long>(target), args.target >= 0 ? "--target" : "the model's top output",
                terminal_safe(args.model).c_str(), terminal_safe(args.input).c_str());
  }
  KeyValueTable facts;
  if (demo_model) {
    facts.add("model", "demo transformer, " + std::to_string(maps.layer_count()) + " layers x " +
                           std::to_string(maps.heads) + " heads, trained " + std::to_string(kDemoTrainSteps) +
                           " steps (seed 1) in " + format_number(train_seconds) + " s: copy accuracy " +
                           format_number(accuracy));
  } else {
    facts.add("attention", std::to_string(maps.layer_count()) + " layers x " + std::to_string(maps.heads) +
                               " heads, captured from the softmax of each");
  }
  facts.add(demo_model ? "logit" : "output", format_number(a.output));
  facts.add("rollout",
            args.fusion + " of heads" +
                (args.discard_ratio > 0 ? ", " + format_number(args.discard_ratio) + " discarded" : "") +
                "; row of the last token, sums to " + format_number(a.sum()));
  facts.print(stdout);

  using Align = Table::Align;
  std::printf("\n%s\n",
              paint("how much each input token reaches the last position", Tone::bold, colour).c_str());
  Table tokens_table({{.header = "position", .align = Align::right},
                      {.header = "token", .align = Align::right},
                      {.header = "rollout", .align = Align::right},
                      {.header = "flow", .align = Align::right},
                      {.header = "", .droppable = true}});
  double largest = 0;
  for (const double v : a.values) largest = std::max(largest, v);
  for (std::int64_t j = 0; j < n; ++j) {
    const double v = a.values[static_cast<std::size_t>(j)];
    const int bar = largest > 0 ? static_cast<int>(std::lround(20 * v / largest)) : 0;
    tokens_table.add({std::to_string(j), labels[static_cast<std::size_t>(j)], format_number(v),
                      format_number(flow[static_cast<std::size_t>((n - 1) * n + j)]),
                      std::string(static_cast<std::size_t>(bar), '+')},
                     Tone::plain);
  }
  tokens_table.print(stdout, terminal_columns(stdout), colour);

  std::printf("\n%s\n", paint("attention heads (importance: the logit's drop when the head is masked)",
                              Tone::bold, colour)
                            .c_str());
  Table heads_table({{.header = "layer", .elidable = true, .minimum = 8},
                     {.header = "head", .align = Align::right},
                     {.header = "role", .align = Align::left},
                     {.header = "of queries", .align = Align::right},
                     {.header = "entropy", .align = Align::right},
                     {.header = "/ ln n", .align = Align::right},
                     {.header = "distance", .align = Align::right},
                     {.header = "confidence", .align = Align::right},
                     {.header = "importance", .align = Align::right}});
  for (std::size_t k = 0; k < stats.size(); ++k) {
    const interpret::HeadStats& s = stats[k];
    heads_table.add(
        {terminal_safe(maps.layers[static_cast<std::size_t>(s.layer)]), std::to_string(s.head),
         std::string(interpret::role_name(s.role)), format_number(s.role_fraction), format_number(s.entropy),
         format_number(s.entropy_relative), format_number(s.mean_distance), format_number(s.confidence),
         format_number(importance.importance[k])},
        Tone::plain);
  }
  heads_table.print(stdout, terminal_columns(stdout), colour);
  for (const std::string& path : wrote) std::printf("wrote %s\n", terminal_safe(path).c_str());
  return 0;
}

}  // namespace tfdebug::cli
