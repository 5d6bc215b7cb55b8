// tfdebug attack --model demo (attack_tokens.hpp): trains the demo as explain does, reads its
// token sequences, and changes as few tokens as it can (robust::hotflip) so that the next token
// predicted is no longer the copy task's answer (or, for sequences that are not copies, no longer
// the model's own prediction). The separator and the token the answer copies never change: they
// would change the right answer itself.
#include "attack_tokens.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "demo_target.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/robust/attack.hpp"
#include "tfdebug/robust/token_attack.hpp"

namespace tfdebug::cli {
namespace {

std::string join(std::span<const std::int64_t> ids) {
  std::string s;
  for (const auto id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

nlohmann::json distribution_json(const robust::Distribution& d) {
  return {{"count", d.count},           {"min", json_number(d.min)},
          {"q25", json_number(d.q25)},  {"median", json_number(d.median)},
          {"q75", json_number(d.q75)},  {"max", json_number(d.max)},
          {"mean", json_number(d.mean)}};
}

}  // namespace

int run_token_attack(const TokenAttackArgs& args) {
  args.output.check();
  if (args.max_changes < 1 || args.candidates < 1)
    throw Error("--max-changes and --candidates: expected at least 1");
  demo::DemoConfig config;
  const DemoSequences data = read_demo_sequences(args.input, config);
  TrainedDemo demo = train_demo();
  DemoTokenModel model(*demo.trainer, demo.config.vocab);

  std::vector<std::int64_t> labels = data.answers;
  const bool copies = !labels.empty();
  if (!copies) {  // the model's own predictions: how easily are its answers changed
    std::vector<float> logits(static_cast<std::size_t>(data.count * demo.config.vocab));
    model.forward(data.ids, data.length, logits);
    for (std::int64_t i = 0; i < data.count; ++i) {
      const auto row = std::span<const float>(logits).subspan(static_cast<std::size_t>(i * demo.config.vocab),
                                                              static_cast<std::size_t>(demo.config.vocab));
      labels.push_back(std::max_element(row.begin(), row.end()) - row.begin());
    }
  }
  robust::TokenAttackOptions o;
  o.max_changes = args.max_changes;
  o.candidates = args.candidates;
  o.first_id = 1;  // 0 is the separator: a second one would change the task, not the input
  o.changeable = data.changeable;
  o.max_batch = args.max_batch;
  const robust::TokenAttackResult r = robust::hotflip(model, data.ids, data.length, labels, o);

  if (!args.out.empty()) {
    std::ofstream file(args.out);
    for (const auto& e : r.examples) file << join(e.adversarial) << "\n";
    if (!file) throw Error(args.out + ": cannot write the adversarial sequences");
  }
  std::vector<double> l0;
  for (const auto& e : r.examples)
    if (e.success) l0.push_back(static_cast<double>(e.changed));
  const robust::Distribution l0_dist = robust::distribution(l0);
  double mean_before = 0, mean_after = 0;
  for (const auto& e : r.examples) {
    mean_before += e.confidence_before / static_cast<double>(data.count);
    mean_after += e.confidence_after / static_cast<double>(data.count);
  }

  if (args.output.wanted()) {
    nlohmann::json success = nlohmann::json::array(), changed = nlohmann::json::array(),
                   positions = nlohmann::json::array(), adversarial = nlohmann::json::array(),
                   before = nlohmann::json::array(), after = nlohmann::json::array(),
                   conf_before = nlohmann::json::array(), conf_after = nlohmann::json::array(),
                   queries = nlohmann::json::array();
    for (const auto& e : r.examples) {
      success.push_back(e.success);
      changed.push_back(e.changed);
      positions.push_back(e.positions);
      adversarial.push_back(e.adversarial);
      before.push_back(e.predicted_before);
      after.push_back(e.predicted_after);
      conf_before.push_back(json_number(e.confidence_before));
      conf_after.push_back(json_number(e.confidence_after));
      queries.push_back(e.queries);
    }
    nlohmann::json inputs = nlohmann::json::array();
    for (std::int64_t i = 0; i < data.count; ++i)
      inputs.push_back(std::vector<std::int64_t>(data.ids.begin() + i * data.length,
                                                 data.ids.begin() + (i + 1) * data.length));
    const nlohmann::json out = {{"attack", "hotflip"},
                                {"model", "demo"},
                                {"examples", data.count},
                                {"labels_from", copies ? "copy task" : "model predictions"},
                                {"max_changes", args.max_changes},
                                {"candidates", args.candidates},
                                {"training",
                                 {{"steps", kDemoTrainSteps},
                                  {"seed", kDemoSeed},
                                  {"loss", json_number(demo.loss)},
                                  {"copy_accuracy", json_number(demo.copy_accuracy)}}},
                                {"inputs", inputs},
                                {"labels", labels},
                                {"success", success},
                                {"l0", changed},
                                {"positions", positions},
                                {"adversarial", adversarial},
                                {"predicted_before", before},
                                {"predicted_after", after},
                                {"confidence_before", conf_before},
                                {"confidence_after", conf_after},
                                {"queries", queries},
                                {"summary",
                                 {{"success_rate", json_number(r.success_rate)},
                                  {"clean_accuracy", json_number(r.clean_accuracy)},
                                  {"robust_accuracy", json_number(r.robust_accuracy)},
                                  {"queries", r.queries},
                                  {"mean_confidence_before", json_number(mean_before)},
                                  {"mean_confidence_after", json_number(mean_after)},
                                  {"l0", distribution_json(l0_dist)}}}};
    args.output.emit("attack", "hotflip on the demo model (" + std::to_string(data.count) + " sequences)",
                     out);
    if (args.output.json) return 0;
  }

  const bool colour = use_colour(stdout);
  std::printf("%s on the demo model (trained %lld steps, copy accuracy %s): %lld sequences of %lld tokens\n",
              paint("hotflip", Tone::bold, colour).c_str(), static_cast<long long>(kDemoTrainSteps),
              format_number(demo.copy_accuracy).c_str(), static_cast<long long>(data.count),
              static_cast<long long>(data.length));
  Table table({{.header = "#", .align = Table::Align::right},
               {.header = "label", .align = Table::Align::right},
               {.header = "before", .align = Table::Align::right},
               {.header = "after", .align = Table::Align::right},
               {.header = "fooled"},
               {.header = "L0", .align = Table::Align::right},
               {.header = "adversarial sequence (changed positions)", .elidable = true, .minimum = 16}});
  constexpr std::size_t kShown = 40;
  for (std::size_t i = 0; i < r.examples.size() && i < kShown; ++i) {
    const auto& e = r.examples[i];
    std::string where;
    for (const auto p : e.positions) where += (where.empty() ? " (" : ", ") + std::to_string(p);
    table.add({std::to_string(i), std::to_string(labels[i]), std::to_string(e.predicted_before),
               std::to_string(e.predicted_after), e.success ? "yes" : "no", std::to_string(e.changed),
               join(e.adversarial) + (where.empty() ? "" : where + ")")},
              e.success ? Tone::warn : Tone::plain);
  }
  table.print(stdout, terminal_columns(stdout), colour);
  if (r.examples.size() > kShown)
    std::printf("  ... %zu more (--json lists every example)\n", r.examples.size() - kShown);
  KeyValueTable facts;
  facts.add("labels", copies ? "the copy task's next token" : "the model's own predictions");
  facts.add("success rate", format_number(r.success_rate) + " (next token no longer the label)");
  facts.add("accuracy", format_number(r.clean_accuracy) + " clean -> " + format_number(r.robust_accuracy) +
                            " under attack (at most " + std::to_string(args.max_changes) +
                            " tokens changed)");
  facts.add("tokens changed (L0) of successes",
            l0_dist.count == 0 ? std::string("no success")
                               : "median " + format_number(l0_dist.median) + ", min " +
                                     format_number(l0_dist.min) + ", max " + format_number(l0_dist.max));
  facts.add("confidence in the label",
            format_number(mean_before) + " -> " + format_number(mean_after) + " (mean)");
  facts.add("model queries", format_count(r.queries) + " sequences");
  std::printf("\n");
  facts.print(stdout);
  if (!args.out.empty()) std::printf("wrote %s\n", terminal_safe(args.out).c_str());
  return 0;
}

}  // namespace tfdebug::cli
