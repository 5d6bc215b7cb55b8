#include "explain_counterfactuals.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/counterfactual.hpp"
#include "tfdebug/interpret/diverse_counterfactuals.hpp"

namespace tfdebug::cli {
namespace {

// Comma-separated feature indices given to `option`.
std::vector<std::int64_t> feature_list(const std::string& text, std::size_t features, const char* option) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (!text.empty() && start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string field = text.substr(start, end - start);
    std::int64_t j = -1;
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), j);
    if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() || j < 0 ||
        static_cast<std::size_t>(j) >= features) {
      throw Error(std::string(option).append(": '").append(terminal_safe(field)) +
                  "' is not a feature index (0.." + std::to_string(features - 1) + ")");
    }
    out.push_back(j);
    start = end + 1;
  }
  return out;
}

std::int64_t top_class(std::span<const float> outputs) {
  if (outputs.size() == 1) return outputs[0] > 0 ? 1 : 0;
  return static_cast<std::int64_t>(std::max_element(outputs.begin(), outputs.end()) - outputs.begin());
}

// Wachter on a classifier: the softmax probability of the wanted class (the sigmoid of a single
// logit) as the output to move, its gradient by the chain rule over every logit's gradient.
class ClassProbability : public interpret::GradientModel {
 public:
  ClassProbability(interpret::GradientModel& logits, std::int64_t wanted)
      : logits_(logits), wanted_(wanted) {}
  std::vector<std::int64_t> input_shape() const override { return logits_.input_shape(); }
  std::int64_t output_size() const override { return 1; }
  void forward(const TensorView& x, std::span<float> out) override {
    const std::int64_t n = x.shape(0), c = logits_.output_size();
    std::vector<float> z(static_cast<std::size_t>(n * c));
    logits_.forward(x, z);
    for (std::int64_t i = 0; i < n; ++i)
      out[static_cast<std::size_t>(i)] = static_cast<float>(probability(z, i, c));
  }
  void gradient(const TensorView& x, std::int64_t, std::span<float> score, std::span<float> grad) override {
    const std::int64_t n = x.shape(0), c = logits_.output_size();
    const auto numel = static_cast<std::size_t>(interpret::example_size(logits_));
    std::vector<float> z(static_cast<std::size_t>(n * c));
    logits_.forward(x, z);
    std::vector<float> s(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n) * numel);
    std::fill(grad.begin(), grad.end(), 0.0f);
    if (c == 1) {  // d sigmoid(s z) = p (1 - p) s dz
      logits_.gradient(x, 0, s, g);
      for (std::int64_t i = 0; i < n; ++i) {
        const double p = probability(z, i, 1), sign = wanted_ == 1 ? 1 : -1;
        score[static_cast<std::size_t>(i)] = static_cast<float>(p);
        for (std::size_t j = 0; j < numel; ++j)
          grad[static_cast<std::size_t>(i) * numel + j] =
              static_cast<float>(p * (1 - p) * sign * g[static_cast<std::size_t>(i) * numel + j]);
      }
      return;
    }
    // d p_w = p_w (d z_w - sum_k p_k d z_k)
    for (std::int64_t k = 0; k < c; ++k) {
      logits_.gradient(x, k, s, g);
      for (std::int64_t i = 0; i < n; ++i) {
        const double pw = probability(z, i, c);
        const double pk = softmax(z, i, c, k);
        const double f = pw * ((k == wanted_ ? 1.0 : 0.0) - pk);
        for (std::size_t j = 0; j < numel; ++j)
          grad[static_cast<std::size_t>(i) * numel + j] +=
              static_cast<float>(f * g[static_cast<std::size_t>(i) * numel + j]);
      }
    }
    for (std::int64_t i = 0; i < n; ++i)
      score[static_cast<std::size_t>(i)] = static_cast<float>(probability(z, i, c));
  }

 private:
  static double softmax(const std::vector<float>& z, std::int64_t i, std::int64_t c, std::int64_t k) {
    const float* row = z.data() + i * c;
    const double top = *std::max_element(row, row + c);
    double sum = 0;
    for (std::int64_t t = 0; t < c; ++t) sum += std::exp(row[t] - top);
    return std::exp(row[k] - top) / sum;
  }
  double probability(const std::vector<float>& z, std::int64_t i, std::int64_t c) const {
    if (c == 1) {
      const double s = wanted_ == 1 ? z[static_cast<std::size_t>(i)] : -z[static_cast<std::size_t>(i)];
      return 1 / (1 + std::exp(-s));
    }
    return softmax(z, i, c, wanted_);
  }
  interpret::GradientModel& logits_;
  std::int64_t wanted_;
};

}  // namespace

int print_counterfactuals(interpret::GradientModel& model, const CounterfactualRequest& r) {
  const std::size_t n = r.x.size();
  const auto classes = static_cast<std::int64_t>(r.outputs.size());
  const std::int64_t current = top_class(r.outputs);
  std::int64_t wanted = r.wanted_class;
  if (wanted < 0) {  // the runner-up
    if (classes == 1) {
      wanted = 1 - current;
    } else {
      wanted = current == 0 ? 1 : 0;
      for (std::int64_t c = 0; c < classes; ++c)
        if (c != current &&
            r.outputs[static_cast<std::size_t>(c)] > r.outputs[static_cast<std::size_t>(wanted)])
          wanted = c;
    }
  }
  const std::int64_t limit = classes == 1 ? 2 : classes;
  if (wanted >= limit) {
    throw Error(std::string("--wanted-class ").append(std::to_string(wanted)) + ": the model has " +
                std::to_string(limit) + " classes (0.." + std::to_string(limit - 1) + ")");
  }
  const std::vector<std::int64_t> immutable = feature_list(r.immutable, n, "--immutable");
  const std::vector<std::int64_t> categorical = feature_list(r.categorical, n, "--categorical");
  if (!categorical.empty() && r.method != "dice") throw Error("--categorical is for --method dice");
  if (!categorical.empty() && r.training.empty())
    throw Error("--categorical needs --background rows: a categorical feature's values are theirs");

  // Both methods end in the same shape: counterfactuals with their outputs, and the set's facts.
  interpret::DiverseCounterfactuals set;
  if (r.method == "dice") {
    interpret::DiverseCounterfactualOptions o;
    o.count = r.count;
    o.wanted_class = wanted;
    o.training = r.training;
    o.immutable = immutable;
    o.categorical = categorical;
    o.seed = r.seed;
    set = interpret::diverse_counterfactuals(model, r.x, o);
  } else {
    ClassProbability probability(model, wanted);
    interpret::CounterfactualOptions o;
    o.wanted = 1;  // alibi's target_proba, with a tolerance that makes p >= 0.55: the wanted class on top
    o.tolerance = 0.45;
    o.training = r.training;
    o.immutable = immutable;
    const interpret::Counterfactual cf = interpret::wachter_counterfactual(probability, r.x, o);
    interpret::DiverseCounterfactual c;
    c.x = cf.x;
    c.outputs.resize(static_cast<std::size_t>(classes));
    std::vector<std::int64_t> shape = model.input_shape();
    shape.insert(shape.begin(), 1);
    model.forward(TensorView(c.x.data(), DType::f32, shape), c.outputs);
    c.valid = top_class(c.outputs) == wanted;
    c.changed = cf.changed;
    c.distance = 0;
    for (std::size_t j = 0; j < n; ++j)
      c.distance += std::fabs(static_cast<double>(c.x[j]) - r.x[j]) / cf.scale[j];
    set.scale = cf.scale;
    set.validity = c.valid ? 1 : 0;
    set.proximity = c.distance / static_cast<double>(n);
    set.sparsity = static_cast<double>(c.changed);
    set.determinant = 1;
    set.evaluations = cf.evaluations;
    set.counterfactuals.push_back(std::move(c));
  }

  if (r.output.wanted()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : set.counterfactuals) {
      std::vector<std::int64_t> changed;
      for (std::size_t j = 0; j < n; ++j)
        if (c.x[j] != r.x[j]) changed.push_back(static_cast<std::int64_t>(j));
      list.push_back({{"x", c.x},
                      {"valid", c.valid},
                      {"outputs", c.outputs},
                      {"class", top_class(c.outputs)},
                      {"changed", changed},
                      {"distance", json_number(c.distance)}});
    }
    nlohmann::json out = {{"method", r.method},
                          {"model", r.model},
                          {"input", std::vector<float>(r.x.begin(), r.x.end())},
                          {"outputs", std::vector<float>(r.outputs.begin(), r.outputs.end())},
                          {"class", current},
                          {"wanted_class", wanted},
                          {"immutable", immutable},
                          {"categorical", set.categorical},
                          {"allowed", set.allowed},
                          {"scale", set.scale},
                          {"counterfactuals", list},
                          {"metrics",
                           {{"validity", json_number(set.validity)},
                            {"proximity", json_number(set.proximity)},
                            {"sparsity", json_number(set.sparsity)},
                            {"diversity", json_number(set.diversity)},
                            {"count_diversity", json_number(set.count_diversity)},
                            {"determinant", json_number(set.determinant)}}},
                          {"evaluations", set.evaluations}};
    nlohmann::json extra = nlohmann::json::object();
    if (r.names.size() == n) extra["feature_names"] = r.names;
    r.output.emit("explain",
                  r.method + " counterfactuals into class " + std::to_string(wanted) + " of " + r.model, out,
                  {}, extra);
    if (r.output.json) return 0;
  }

  const bool colour = use_colour(stdout);
  std::printf(
      "%s: %s into class %lld (the input is class %lld) of %s\n", paint(r.method, Tone::bold, colour).c_str(),
      plural(static_cast<std::int64_t>(set.counterfactuals.size()), "counterfactual").c_str(),
      static_cast<long long>(wanted), static_cast<long long>(current), terminal_safe(r.model).c_str());
  KeyValueTable facts;
  facts.add("validity", format_number(set.validity) + " (fraction in the wanted class)");
  facts.add("proximity", format_number(set.proximity) + " (mean MAD-scaled L1 distance per feature)");
  facts.add("sparsity", format_number(set.sparsity) + " (mean features changed)");
  if (!set.categorical.empty()) {
    std::string list;
    for (const std::int64_t j : set.categorical) list += (list.empty() ? "" : ", ") + std::to_string(j);
    facts.add("categorical", list + " (only the background rows' values; 1 per mismatch in the distances)");
  }
  if (set.counterfactuals.size() > 1) {
    facts.add("diversity", format_number(set.diversity) + " (mean pairwise MAD-scaled L1 per feature)");
    facts.add("count diversity",
              format_number(set.count_diversity) + " (mean pairwise fraction of features differing)");
    facts.add("det K", format_number(set.determinant));
  }
  facts.add("model evaluations", format_count(set.evaluations));
  facts.print(stdout);

  // The features any counterfactual changes: the input's value, then each one's (blank: kept).
  std::printf("\n%s\n", paint("the features that change", Tone::bold, colour).c_str());
  std::vector<Table::Column> columns = {{.header = "feature", .elidable = true, .minimum = 12},
                                        {.header = "input", .align = Table::Align::right}};
  for (std::size_t i = 0; i < set.counterfactuals.size(); ++i)
    columns.push_back(
        {.header = std::string("#").append(std::to_string(i + 1)), .align = Table::Align::right});
  Table table(columns);
  for (std::size_t j = 0; j < n; ++j) {
    if (std::none_of(set.counterfactuals.begin(), set.counterfactuals.end(),
                     [&](const auto& c) { return c.x[j] != r.x[j]; }))
      continue;
    std::vector<std::string> row = {
        std::to_string(j) +
            (j < r.names.size() ? std::string(" ").append(terminal_safe(r.names[j])) : std::string()),
        format_number(r.x[j])};
    for (const auto& c : set.counterfactuals) row.push_back(c.x[j] != r.x[j] ? format_number(c.x[j]) : "");
    table.add(row);
  }
  std::vector<std::string> classes_row = {"class", std::to_string(current)};
  for (const auto& c : set.counterfactuals)
    classes_row.push_back(std::to_string(top_class(c.outputs)) + (c.valid ? "" : " (not valid)"));
  table.add(classes_row, Tone::dim);
  table.print(stdout, terminal_columns(stdout), colour);
  return 0;
}

}  // namespace tfdebug::cli
