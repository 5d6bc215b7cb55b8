// tfdebug explain --model M.pt --input X --method NAME: why a model gave its output for one
// input, by any of tfdebug::interpret's methods (docs/interpretability.md).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analysis_output.hpp"
#include "cli_input.hpp"
#include "commands.hpp"
#include "explain_attention.hpp"
#include "explain_cam.hpp"
#include "explain_counterfactuals.hpp"
#include "explain_rules.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "suggest.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/interpret/background_kmeans.hpp"
#include "tfdebug/interpret/evaluation.hpp"
#include "tfdebug/interpret/gradient_attribution.hpp"
#include "tfdebug/interpret/lime.hpp"
#include "tfdebug/interpret/lime_image.hpp"
#include "tfdebug/interpret/lime_text.hpp"
#include "tfdebug/interpret/shapley.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace tfdebug::cli {
namespace {

struct ExplainArgs {
  std::string model;
  std::string input;
  std::string background;
  std::optional<std::int64_t> background_kmeans;  // the SHAP methods: --background as k centroids
  std::string baseline = "zero";
  std::string path;  // path-integrated-gradients: the points between the baseline and x
  std::string method = "integrated-gradients";
  std::int64_t target = -1;  // -1: the model's top output at the input
  std::int64_t steps = 50;
  std::string quadrature = "gauss-legendre";
  std::int64_t samples = 0;  // 0: the method's default
  double stdev = -1;         // < 0: the method's default
  std::uint64_t seed = 0;
  std::int64_t max_batch = 64;
  std::size_t top = 10;
  std::string feature_names;
  AnalysisOutput output;  // --json, --run-dir, --html
  bool evaluate = false;
  std::string neighbourhood;  // lime: the samples, weights and outputs as CSV
  std::string layer;          // the CAM methods: a module path of the model
  std::string png;            // the CAM methods: the map beside the input
  std::string lrp_rule = "epsilon";
  double lrp_epsilon = 1e-9;
  double lrp_gamma = 0.25;
  std::string attention_html, attention_png, head_fusion = "mean";  // attention-rollout
  double discard_ratio = 0;
  std::int64_t delimiter = 0;
  float mask_token = 0;  // lime on tokens
  std::string token_masking = "replace";
  bool bow = false;           // lime on tokens: one feature per token type
  std::string hide = "mean";  // lime on images
  std::int64_t count = 4;     // dice
  std::int64_t wanted_class = -1;
  std::string immutable;
  std::string categorical;  // dice: features set only to the training data's values
};

// The methods `explain` runs, with what they need and their defaults, for --help and errors.
struct MethodInfo {
  const char* name;
  const char* what;
};
constexpr MethodInfo kMethods[] = {
    {"gradient-x-input", "x * grad f(x)"},
    {"integrated-gradients", "--steps 50 Gauss-Legendre nodes from --baseline (zero)"},
    {"path-integrated-gradients",
     "IG along straight segments from --baseline (zero) through the --path rows (required) to x, "
     "--steps 50 Gauss-Legendre nodes a segment"},
    {"smoothgrad", "mean gradient over --samples 5 noisy copies, --stdev 1.0"},
    {"gradient-shap", "--samples 5 random points between --background rows and x"},
    {"expected-gradients", "--samples 200 draws over --background rows (required)"},
    {"shap-exact", "every coalition of the features (at most 20); --background rows (default zero)"},
    {"shap-permutation", "--samples 500 evaluations of antithetic permutations; --background"},
    {"kernel-shap", "--samples 2M+2048 coalitions, weighted least squares; --background"},
    {"lime",
     "--samples 5000 around x, quartile bins of the --background rows (the training data, "
     "required), Ridge(alpha=1); a token input (tok:3,5,1): --samples 5000 with tokens hidden by "
     "--token-masking (replace), kernel width 25, --bow for one feature per token type; an image input "
     "([C,H,W] or [H,W]): --samples 1000 "
     "over quickshift superpixels, hidden ones --hide (mean), kernel width 0.25"},
    {"dice",
     "--count 4 diverse counterfactuals into --wanted-class (the runner-up), DiCE's loss by Adam "
     "(lr 0.05, 500..5000 steps, --seed); MADs of --background rows; --immutable i,j; "
     "--categorical i,j (only the --background rows' values)"},
    {"wachter",
     "the closest counterfactual into --wanted-class (the runner-up), probability >= 0.55; "
     "MAD-weighted L1, lambda schedule; --background, --immutable"},
    {"grad-cam", "--layer NAME (required): ReLU(sum_k mean(dy/dA^k) A^k), resized to the input"},
    {"grad-cam-plus-plus", "--layer NAME (required): Grad-CAM++'s closed-form weights"},
    {"score-cam", "--layer NAME (required): softmax of y(x * mask_k) over the channels; --max-batch"},
    {"deeplift", "rescale rule against --baseline (zero); sums to f(x) - f(x')"},
    {"deeplift-shap", "deeplift averaged over the --background rows (required) as baselines"},
    {"lrp", "relevance by --lrp-rule epsilon (--lrp-epsilon 1e-9), gamma (--lrp-gamma 0.25) or alpha1-beta0"},
    {"guided-backprop", "the gradient with each ReLU passing only positive gradients where its input is > 0"},
    {"deconvnet", "the gradient with each ReLU passing relu(gradient)"},
    {"attention-rollout",
     "the last position's Attention Rollout over the input tokens (--input token ids; --head-fusion "
     "mean, --discard-ratio 0), head roles and importance; --attention-html, --attention-png; --model demo "
     "or a TorchScript model that computes its attention with a softmax"},
};

std::string method_list() {
  std::string s;
  for (const MethodInfo& m : kMethods) s.append(s.empty() ? "" : ", ").append(m.name);
  return s;
}

// "[2, 3]" in the input's shape for element `flat`.
std::string index_text(std::int64_t flat, const std::vector<std::int64_t>& shape) {
  if (shape.size() <= 1) return std::to_string(flat);
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < index.size(); ++d) s.append(d ? ", " : "").append(std::to_string(index[d]));
  return s + "]";
}

// `values` (row-major) as nested JSON arrays of `shape`.
nlohmann::json nested(const std::vector<double>& values, const std::vector<std::int64_t>& shape,
                      std::size_t dim, std::size_t& at) {
  nlohmann::json out = nlohmann::json::array();
  for (std::int64_t i = 0; i < shape[dim]; ++i) {
    if (dim + 1 == shape.size()) {
      out.push_back(json_number(values[at++]));
    } else {
      out.push_back(nested(values, shape, dim + 1, at));
    }
  }
  return out;
}

interpret::LimeAttribution run_lime(interpret::ForwardModel& model, const ExplainArgs& args,
                                    std::span<const float> x, std::int64_t target,
                                    const std::vector<float>& training, bool keep, bool tokens = false) {
  const std::size_t dims = model.input_shape().size();
  if (tokens) {
    interpret::LimeTextOptions o;
    if (args.samples > 0) o.samples = args.samples;
    if (args.token_masking != "replace" && args.token_masking != "remove")
      throw Error("--token-masking: '" + terminal_safe(args.token_masking) + "' is not replace or remove");
    o.masking =
        args.token_masking == "remove" ? interpret::TokenMasking::remove : interpret::TokenMasking::replace;
    o.mask_token = args.mask_token;
    o.bow = args.bow;
    o.seed = args.seed;
    o.max_batch = args.max_batch;
    o.keep_neighbourhood = keep;
    return interpret::lime_text(model, x, target, o);
  }
  if (dims == 2 || dims == 3) {
    interpret::LimeImageOptions o;
    if (args.samples > 0) o.samples = args.samples;
    if (args.hide != "mean" && args.hide != "zero")
      throw Error("--hide: '" + terminal_safe(args.hide) + "' is not mean or zero");
    o.hide = args.hide == "mean" ? interpret::HiddenFill::mean : interpret::HiddenFill::value;
    o.seed = args.seed;
    o.max_batch = args.max_batch;
    o.keep_neighbourhood = keep;
    return interpret::lime_image(model, x, target, o);
  }
  if (training.empty())
    throw Error("lime needs --background rows (the training data: its quartiles and scale)");
  interpret::LimeOptions o;
  o.training = training;
  if (args.samples > 0) o.samples = args.samples;
  o.seed = args.seed;
  o.max_batch = args.max_batch;
  o.keep_neighbourhood = keep;
  return interpret::lime_tabular(model, x, target, o);
}

// The neighbourhood LIME fitted its surrogate to, as CSV: weight, output, then the interpretable
// features (1: in x's quartile bin), one sample a row, x first.
void write_neighbourhood(const std::string& path, const interpret::LimeAttribution& a) {
  const std::size_t features = a.weights.empty() ? 0 : a.data.size() / a.weights.size();
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot write");
  out << "weight,output";
  for (std::size_t j = 0; j < features; ++j) out << ",f" << j;
  out << "\n";
  char number[32];
  const auto put = [&](double v) {
    std::snprintf(number, sizeof number, "%.17g", v);
    out << number;
  };
  for (std::size_t s = 0; s < a.weights.size(); ++s) {
    put(a.weights[s]);
    out << ',';
    put(a.outputs[s]);
    for (std::size_t j = 0; j < features; ++j) {
      out << ',';
      put(a.data[s * features + j]);
    }
    out << '\n';
  }
  if (!out) throw Error(path + ": cannot write");
}

// --baseline: empty for zero, the mean of the background rows, or a file's one example.
std::vector<float> baseline_of(const ExplainArgs& args, std::span<const float> x,
                               const std::vector<float>& background) {
  std::vector<float> baseline;
  if (args.baseline == "mean") {
    if (background.empty()) throw Error("--baseline mean needs --background rows");
    const std::size_t n = x.size();
    baseline.assign(n, 0.0f);
    const std::size_t rows = background.size() / n;
    for (std::size_t i = 0; i < background.size(); ++i) baseline[i % n] += background[i] / float(rows);
  } else if (args.baseline != "zero") {
    baseline = read_rows(args.baseline, static_cast<std::int64_t>(x.size()), "--baseline");
    if (baseline.size() != x.size()) throw Error(args.baseline + ": expected one example as the baseline");
  }
  return baseline;
}

// A k-means summary's centroids as JSON rows of numel values (flattened inputs).
nlohmann::json centroid_rows(const std::vector<float>& centroids, std::int64_t numel) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t r = 0; r < centroids.size(); r += static_cast<std::size_t>(numel))
    rows.push_back(std::vector<float>(centroids.begin() + static_cast<std::ptrdiff_t>(r),
                                      centroids.begin() + static_cast<std::ptrdiff_t>(r) + numel));
  return rows;
}

interpret::Attribution explain(interpret::GradientModel& model, const ExplainArgs& args,
                               std::span<const float> x, std::int64_t target,
                               const std::vector<float>& background,
                               const std::vector<double>& background_weights = {}) {
  using namespace interpret;
  const std::string& m = args.method;
  if (m == "gradient-x-input") return gradient_x_input(model, x, target);
  if (m == "integrated-gradients") {
    IntegratedGradientsOptions o;
    o.steps = args.steps;
    o.method = parse_quadrature(args.quadrature);
    o.max_batch = args.max_batch;
    o.baseline = baseline_of(args, x, background);
    return integrated_gradients(model, x, target, o);
  }
  if (m == "path-integrated-gradients") {
    IntegratedGradientsOptions o;
    o.steps = args.steps;
    o.method = parse_quadrature(args.quadrature);
    o.max_batch = args.max_batch;
    o.baseline = baseline_of(args, x, background);
    if (args.path.empty())
      throw Error(
          "path-integrated-gradients needs --path: the points the path passes between --baseline and x");
    const std::vector<float> rows = read_rows(args.path, static_cast<std::int64_t>(x.size()), "--path");
    std::vector<std::vector<float>> waypoints;
    for (std::size_t r = 0; r < rows.size(); r += x.size())
      waypoints.emplace_back(rows.begin() + static_cast<std::ptrdiff_t>(r),
                             rows.begin() + static_cast<std::ptrdiff_t>(r + x.size()));
    waypoints.emplace_back(x.begin(), x.end());
    return path_integrated_gradients(model, x, target, waypoints, o);
  }
  if (is_rule_method(m)) {
    const RuleMethodArgs rule{.model = args.model,
                              .method = m,
                              .lrp_rule = args.lrp_rule,
                              .lrp_epsilon = args.lrp_epsilon,
                              .lrp_gamma = args.lrp_gamma,
                              .max_batch = args.max_batch};
    return explain_rules(rule, model.input_shape(), x, target, baseline_of(args, x, background), background);
  }
  if (m == "smoothgrad") {
    SmoothGradOptions o;
    if (args.samples > 0) o.samples = args.samples;
    if (args.stdev >= 0) o.stdev = args.stdev;
    o.seed = args.seed;
    o.max_batch = args.max_batch;
    return smoothgrad(model, x, target, o);
  }
  if (m == "gradient-shap" || m == "expected-gradients") {
    if (m == "expected-gradients") {
      if (background.empty())
        throw Error("expected-gradients needs --background rows (the data's distribution)");
      ExpectedGradientsOptions o;
      o.background = background;
      if (args.samples > 0) o.samples = args.samples;
      o.seed = args.seed;
      o.max_batch = args.max_batch;
      return expected_gradients(model, x, target, o);
    }
    GradientShapOptions o;
    o.baselines = background;
    if (args.samples > 0) o.samples = args.samples;
    if (args.stdev >= 0) o.stdev = args.stdev;
    o.seed = args.seed;
    o.max_batch = args.max_batch;
    return gradient_shap(model, x, target, o);
  }
  if (m == "lime") return run_lime(model, args, x, target, background, false);
  ShapleyOptions o;
  o.background = background;
  o.background_weights = background_weights;
  o.seed = args.seed;
  o.max_batch = args.max_batch;
  if (m == "shap-exact") return exact_shapley(model, x, target, o);
  if (m == "shap-permutation") {
    if (args.samples > 0) o.max_evals = args.samples;
    return permutation_shap(model, x, target, o);
  }
  if (m == "kernel-shap") {
    o.samples = args.samples;
    return kernel_shap(model, x, target, o);
  }
  throw Error("unknown method '" + terminal_safe(m) + "'");  // run_explain checked the name
}

int run_explain(const ExplainArgs& args) {
  args.output.check();
  // The method is checked before the model loads: a typo costs nothing.
  if (std::none_of(std::begin(kMethods), std::end(kMethods),
                   [&](const MethodInfo& m) { return args.method == m.name; })) {
    std::vector<std::string> names;
    for (const MethodInfo& info : kMethods) names.emplace_back(info.name);
    std::string message = "unknown method '" + terminal_safe(args.method) + "'";
    if (const auto close = closest_name(args.method, names)) message += " — did you mean '" + *close + "'?";
    throw Error(message + " (methods: " + method_list() + ")");
  }
  if (is_cam_method(args.method)) {
    Input in = read_input(args.input);
    // A map needs the channels: a .npy of [1, 8, 8] is one channel of 8 x 8 here, not a batch of
    // one [8, 8]; only a 4-d batch of one loses its leading 1.
    if (args.input.ends_with(".npy")) {
      npy_values(args.input, &in.shape);
      if (in.shape.size() >= 4 && in.shape.front() == 1) in.shape.erase(in.shape.begin());
    }
    return run_cam_explain({.model = args.model,
                            .input = std::move(in.values),
                            .shape = std::move(in.shape),
                            .method = args.method,
                            .layer = args.layer,
                            .target = args.target,
                            .max_batch = args.max_batch,
                            .output = args.output,
                            .png = args.png});
  }
  if (!args.layer.empty() || !args.png.empty())
    throw Error("--layer and --png are for grad-cam, grad-cam-plus-plus and score-cam");
  if (args.method == "attention-rollout" || args.model == "demo") {
    if (args.method != "attention-rollout")
      throw Error("--model demo is explained by --method attention-rollout");
    if (args.evaluate || !args.background.empty() || !args.neighbourhood.empty())
      throw Error("attention-rollout takes no --evaluate, --background or --save-neighbourhood");
    return run_attention_explain({.model = args.model,
                                  .input = args.input,
                                  .target = args.target,
                                  .fusion = args.head_fusion,
                                  .discard_ratio = args.discard_ratio,
                                  .delimiter = args.delimiter,
                                  .html = args.attention_html,
                                  .png = args.attention_png,
                                  .output = args.output});
  }
  if (!args.attention_html.empty() || !args.attention_png.empty())
    throw Error("--attention-html and --attention-png are for --method attention-rollout");
  Input input = read_input(args.input);
  torch::TorchModel model = [&] {
    try {
      return torch::load_torchscript(args.model, input.shape);
    } catch (const Error&) {
      // A .npy of [1, 8, 8] is a batch of one [8, 8] example or one example of one channel: when
      // the model refuses the first reading, it gets the second; when it refuses both, the first
      // error is the one to read.
      if (!input.dropped_one) throw;
      std::vector<std::int64_t> kept = input.shape;
      kept.insert(kept.begin(), 1);
      try {
        torch::TorchModel channel = torch::load_torchscript(args.model, kept);
        input.shape = std::move(kept);
        return channel;
      } catch (const Error&) {
      }
      throw;
    }
  }();
  const auto numel = static_cast<std::int64_t>(input.values.size());
  std::vector<float> background =
      args.background.empty() ? std::vector<float>() : read_rows(args.background, numel, "--background");
  // --background-kmeans K: the SHAP methods' background as k weighted centroids (shap.kmeans).
  std::vector<double> background_weights;
  std::optional<interpret::BackgroundSummary> summary;
  if (args.background_kmeans) {
    if (args.method != "shap-exact" && args.method != "shap-permutation" && args.method != "kernel-shap")
      throw Error("--background-kmeans is for the SHAP methods (shap-exact, shap-permutation, kernel-shap)");
    if (background.empty()) throw Error("--background-kmeans needs --background rows to summarise");
    if (*args.background_kmeans < 1)
      throw Error("--background-kmeans: k must be at least 1, got " +
                  std::to_string(*args.background_kmeans));
    summary = interpret::kmeans_background(background, numel, *args.background_kmeans, args.seed);
    background = summary->centroids;
    background_weights = summary->weights;
  }

  // The target: as asked, or the model's top output at the input.
  std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
  std::vector<std::int64_t> shape = input.shape;
  shape.insert(shape.begin(), 1);
  model.forward(TensorView(input.values.data(), DType::f32, shape), outputs);
  const bool chosen = args.target >= 0;
  const std::int64_t target =
      chosen ? args.target
             : static_cast<std::int64_t>(std::max_element(outputs.begin(), outputs.end()) - outputs.begin());
  if (target >= model.output_size()) {
    throw Error("--target " + std::to_string(target) + ": the model has " +
                std::to_string(model.output_size()) + " outputs (0.." +
                std::to_string(model.output_size() - 1) + ")");
  }
  if (args.method == "dice" || args.method == "wachter") {
    CounterfactualRequest r;
    r.method = args.method;
    r.model = args.model;
    r.x = input.values;
    r.outputs = outputs;
    r.training = background;
    r.count = args.count;
    r.wanted_class = args.wanted_class;
    r.immutable = args.immutable;
    r.categorical = args.categorical;
    r.seed = args.seed;
    r.names = split_names(args.feature_names.empty() ? input.header : args.feature_names);
    r.output = args.output;
    return print_counterfactuals(model, r);
  }
  if (!args.path.empty() && args.method != "path-integrated-gradients")
    throw Error("--path is for --method path-integrated-gradients");
  std::optional<interpret::LimeAttribution> lime;
  if (args.method == "lime") {
    lime = run_lime(model, args, input.values, target, background, !args.neighbourhood.empty(), input.tokens);
    if (!args.neighbourhood.empty()) write_neighbourhood(args.neighbourhood, *lime);
  } else if (!args.neighbourhood.empty()) {
    throw Error("--save-neighbourhood is for --method lime");
  }
  const interpret::Attribution a =
      lime ? *lime : explain(model, args, input.values, target, background, background_weights);

  // --evaluate: how faithful and how stable these attributions are (docs/interpretability.md).
  struct Evaluation {
    double infidelity = 0, infidelity_normalized = 0, sensitivity = 0;
    interpret::Curve deletion, insertion;
  } e;
  if (args.evaluate) {
    interpret::InfidelityOptions io;
    io.seed = args.seed;
    io.max_batch = args.max_batch;
    e.infidelity = interpret::infidelity(model, input.values, target, a.values, io);
    io.normalize = true;
    e.infidelity_normalized = interpret::infidelity(model, input.values, target, a.values, io);
    interpret::SensitivityOptions so;
    so.seed = args.seed;
    e.sensitivity = interpret::sensitivity_max(
        [&](std::span<const float> at) {
          return explain(model, args, at, target, background, background_weights).values;
        },
        input.values, so);
    interpret::CurveOptions co;
    co.max_batch = args.max_batch;
    e.deletion = interpret::deletion_curve(model, input.values, target, a.values, co);
    e.insertion = interpret::insertion_curve(model, input.values, target, a.values, co);
  }

  // Names as given, else a CSV input's header when it names every value.
  std::vector<std::string> names = split_names(args.feature_names);
  if (names.empty()) {
    names = split_names(input.header);
    if (names.size() != input.values.size()) names.clear();
  }
  if (args.output.wanted()) {
    nlohmann::json out = {{"method", a.method},
                          {"model", args.model},
                          {"target", target},
                          {"target_chosen", chosen ? "given" : "top output"},
                          {"outputs", outputs},
                          {"output", json_number(a.output)},
                          {"reference_output", json_number(a.reference_output)},
                          {"delta", json_number(a.delta)},
                          {"sum", json_number(a.sum())},
                          {"evaluations", a.evaluations},
                          {"shape", input.shape}};
    std::size_t at = 0;
    out["attributions"] = nested(a.values, input.shape, 0, at);
    if (!a.variance.empty()) {
      at = 0;
      out["variance"] = nested(a.variance, input.shape, 0, at);
    }
    if (summary) {
      out["background"] = {{"summary", "kmeans"},
                           {"rows", summary->rows},
                           {"clusters", static_cast<std::int64_t>(summary->weights.size())},
                           {"weights", summary->weights},
                           {"centroids", centroid_rows(summary->centroids, numel)},
                           {"iterations", summary->iterations},
                           {"converged", summary->converged}};
    } else if (!background.empty()) {
      out["background"] = {{"summary", "none"},
                           {"rows", static_cast<std::int64_t>(background.size()) / numel}};
    }
    if (lime) {
      out["surrogate"] = {{"intercept", json_number(lime->intercept)},
                          {"r2", json_number(lime->r2)},
                          {"local_prediction", json_number(lime->local_prediction)}};
    }
    if (args.evaluate) {
      out["evaluation"] = {{"infidelity", json_number(e.infidelity)},
                           {"infidelity_normalized", json_number(e.infidelity_normalized)},
                           {"sensitivity_max", json_number(e.sensitivity)},
                           {"deletion_auc", json_number(e.deletion.area)},
                           {"insertion_auc", json_number(e.insertion.area)},
                           {"deletion", e.deletion.output},
                           {"insertion", e.insertion.output}};
    }
    at = 0;
    nlohmann::json extra = {
        {"input", nested(std::vector<double>(input.values.begin(), input.values.end()), input.shape, 0, at)}};
    if (!names.empty()) extra["feature_names"] = names;
    if (input.tokens) extra["tokens"] = input.values;
    args.output.emit("explain", a.method + " of output " + std::to_string(target) + " of " + args.model, out,
                     {}, extra);
    if (args.output.json) return 0;
  }
  const bool colour = use_colour(stdout);
  std::printf("%s of output %lld (%s) of %s\n", paint(a.method, Tone::bold, colour).c_str(),
              static_cast<long long>(target), chosen ? "--target" : "the model's top output",
              terminal_safe(args.model).c_str());
  KeyValueTable facts;
  facts.add("output", format_number(a.output));
  if (!std::isnan(a.reference_output)) {
    // Integrated Gradients compares with its baseline; the others with the background's rows.
    const bool over_background = a.method != "integrated-gradients" &&
                                 a.method != "path-integrated-gradients" && a.method != "deeplift" &&
                                 !background.empty();
    facts.add(over_background ? "mean over the background" : "at the baseline",
              format_number(a.reference_output));
  }
  facts.add("sum of attributions", format_number(a.sum()));
  if (!std::isnan(a.delta)) facts.add("completeness delta", format_number(a.delta));
  facts.add("model evaluations", format_count(a.evaluations));
  if (summary) {
    facts.add("background", "k-means: " + std::to_string(summary->weights.size()) + " centroids of " +
                                std::to_string(summary->rows) + " rows, weighted by cluster size (" +
                                std::to_string(summary->iterations) + " Lloyd iterations)");
  }
  if (lime) {
    facts.add("surrogate", "intercept " + format_number(lime->intercept) + ", weighted R² " +
                               format_number(lime->r2) + ", at x " + format_number(lime->local_prediction));
  }
  if (args.evaluate) {
    facts.add("infidelity", format_number(e.infidelity) + " (normalised " +
                                format_number(e.infidelity_normalized) + "; 0 is perfect)");
    facts.add("sensitivity max", format_number(e.sensitivity) + " (radius 0.02; 0 is stable)");
    facts.add("deletion AUC", format_number(e.deletion.area) + " (lower: the top features matter)");
    facts.add("insertion AUC", format_number(e.insertion.area) + " (higher: the top features suffice)");
  }
  facts.print(stdout);

  std::vector<std::int64_t> order(a.values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) {
    return std::fabs(a.values[static_cast<std::size_t>(i)]) >
           std::fabs(a.values[static_cast<std::size_t>(j)]);
  });
  const std::size_t shown = std::min(args.top, order.size());
  double largest = 0;
  for (const double v : a.values) largest = std::max(largest, std::fabs(v));
  std::printf("\n%s\n", paint("the " + plural(static_cast<std::int64_t>(shown), "feature") +
                                  " with the largest |attribution|",
                              Tone::bold, colour)
                            .c_str());
  using Align = Table::Align;
  Table table({{.header = "feature", .elidable = true, .minimum = 12},
               {.header = "value", .align = Align::right},
               {.header = "attribution", .align = Align::right},
               {.header = "", .droppable = true}});
  for (std::size_t k = 0; k < shown; ++k) {
    const auto i = static_cast<std::size_t>(order[k]);
    const double v = a.values[i];
    std::string label = index_text(static_cast<std::int64_t>(i), input.shape);
    if (i < names.size()) label += " " + terminal_safe(names[i]);
    const int bar = largest > 0 ? static_cast<int>(std::lround(20 * std::fabs(v) / largest)) : 0;
    std::string bars;
    bars.assign(static_cast<std::size_t>(bar), v < 0 ? '-' : '+');
    table.add({label, format_number(input.values[i]), format_number(v), bars},
              v < 0 ? Tone::warn : Tone::plain);
  }
  table.print(stdout, terminal_columns(stdout), colour);
  return 0;
}

}  // namespace

void register_explain(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ExplainArgs>();
  std::string methods = "Attribution method:";
  for (const MethodInfo& m : kMethods) methods.append("\n  ").append(m.name).append(": ").append(m.what);
  CLI::App* cmd = app.add_subcommand(
      "explain", "Why did the model give this output? Attributions of one input (docs/interpretability.md)");
  cmd->add_option(
         "--model", args->model,
         "A TorchScript file (torch.jit.script(model).save(path)), or demo: tfdebug demo's model, "
         "trained here for a few seconds (--method attention-rollout; --input its token ids: \"3 5 0 3\")")
      ->required();
  cmd->add_option(
         "--input", args->input,
         "The input: a .npy file (one example), a CSV file of one row, the row itself: 5.1,3.5,1.4,0.2, "
         "or token ids: tok:3,5,1")
      ->required();
  cmd->add_option("--method", args->method, methods)->capture_default_str();
  cmd->add_option("--target", args->target,
                  "The output to explain (default: the model's top output at the input)");
  cmd->add_option("--background", args->background,
                  "Rows of the data (.npy [n, ...] or CSV): the SHAP methods' background, Gradient SHAP's "
                  "baselines, Expected Gradients' distribution, tabular LIME's training data, dice's and "
                  "wachter's MADs");
  cmd->add_option("--background-kmeans", args->background_kmeans,
                  "shap-exact, shap-permutation, kernel-shap: summarise --background as K k-means centroids "
                  "weighted by cluster size (seeded k-means++ with --seed, then Lloyd), so a coalition costs "
                  "K model rows instead of one per background row");
  cmd->add_option("--baseline", args->baseline,
                  "integrated-gradients, deeplift: zero, mean (of --background), or a .npy / CSV file of one "
                  "example")
      ->capture_default_str();
  cmd->add_option("--path", args->path,
                  "path-integrated-gradients: the points the path passes between --baseline and x, in order "
                  "(rows like --background: .npy [k, ...] or CSV); x ends it");
  cmd->add_option("--steps", args->steps, "integrated-gradients: quadrature nodes")->capture_default_str();
  cmd->add_option("--quadrature", args->quadrature,
                  "integrated-gradients: gauss-legendre, riemann-left, riemann-right, riemann-middle")
      ->capture_default_str();
  cmd->add_option("--samples", args->samples,
                  "Samples (smoothgrad 5, gradient-shap 5, expected-gradients 200), evaluations "
                  "(shap-permutation 500) or coalitions (kernel-shap 2M+2048)");
  cmd->add_option("--stdev", args->stdev,
                  "smoothgrad (1.0) and gradient-shap (0): the noise's sigma, absolute");
  cmd->add_option("--lrp-rule", args->lrp_rule,
                  "lrp: the rule of every linear layer: epsilon, gamma, alpha1-beta0")
      ->capture_default_str();
  cmd->add_option("--lrp-epsilon", args->lrp_epsilon, "lrp: the stabiliser of the denominators")
      ->capture_default_str();
  cmd->add_option("--lrp-gamma", args->lrp_gamma, "lrp --lrp-rule gamma: w + gamma w+")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of every random draw (same seed, same answer)")
      ->capture_default_str();
  cmd->add_option("--max-batch", args->max_batch, "Examples per model call: memory is bounded by this")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_option("--top", args->top, "Features shown, the largest |attribution| first")
      ->capture_default_str();
  cmd->add_option("--feature-names", args->feature_names,
                  "Names of the input's values, comma-separated (default: a CSV input's header)");
  cmd->add_option(
      "--save-neighbourhood", args->neighbourhood,
      "lime: also write the samples the surrogate was fitted to as CSV (weight, output, features)");
  cmd->add_option("--layer", args->layer,
                  "grad-cam, grad-cam-plus-plus, score-cam: the layer, by module path (conv2, features.3)");
  cmd->add_option("--png", args->png,
                  "grad-cam, grad-cam-plus-plus, score-cam: draw the input and the map as a PNG");
  cmd->add_option("--attention-html", args->attention_html,
                  "attention-rollout: also write the attention as one HTML page (head view, model view)");
  cmd->add_option("--attention-png", args->attention_png,
                  "attention-rollout: also draw every layer and head's attention and the rollout as a PNG");
  cmd->add_option("--head-fusion", args->head_fusion, "attention-rollout: mean, max or min of the heads")
      ->check(CLI::IsMember({"mean", "max", "min"}))
      ->capture_default_str();
  cmd->add_option(
         "--discard-ratio", args->discard_ratio,
         "attention-rollout: the fraction of each layer's smallest weights dropped (vit-explain: 0.9)")
      ->capture_default_str();
  cmd->add_option("--delimiter", args->delimiter, "attention-rollout: the token id of the delimiter role")
      ->capture_default_str();
  cmd->add_option("--token-masking", args->token_masking,
                  "lime on a token input (tok:3,5,1): replace hidden tokens by --mask-token, or remove them "
                  "(the rest close up, --mask-token pads)")
      ->capture_default_str();
  cmd->add_flag("--bow", args->bow,
                "lime on a token input: one feature per token type, every occurrence hidden together "
                "(lime's bow=True); each position gets its token's weight");
  cmd->add_option("--mask-token", args->mask_token, "lime on a token input: the mask / padding token id")
      ->capture_default_str();
  cmd->add_option("--hide", args->hide, "lime on an image: hidden superpixels take their mean, or zero")
      ->capture_default_str();
  cmd->add_option("--count", args->count, "dice: counterfactuals in the set")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100}));
  cmd->add_option(
      "--wanted-class", args->wanted_class,
      "dice, wachter: the class the counterfactuals must get (default: the runner-up at the input)");
  cmd->add_option("--immutable", args->immutable,
                  "dice, wachter: features never changed, comma-separated indices");
  cmd->add_option("--categorical", args->categorical,
                  "dice: categorical features, comma-separated indices: set only to values the --background "
                  "rows have, 1 per mismatch in proximity and diversity");
  cmd->add_flag("--evaluate", args->evaluate,
                "Also measure the attributions: infidelity, sensitivity-max (the method run 10 more times), "
                "deletion and insertion curves with their AUC (20 steps, towards zeros)");
  add_analysis_options(cmd, &args->output);
  cmd->add_flag("--json", args->output.json,
                "One JSON object: method, target, output, reference_output, delta, evaluations, attributions "
                "(in the input's shape)");
  cmd->callback([args, &exit_code] { exit_code = run_explain(*args); });
}

}  // namespace tfdebug::cli
