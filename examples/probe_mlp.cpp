// Debugging a hand-written training loop with the probe API: a 2-layer MLP in plain C++ arrays
// (no framework) learns four Gaussian blobs, and tfdebug watches every step. A planted fault is
// diagnosed by the same rules the LibTorch adapter feeds:
//
//   probe_mlp none [run_dir]   trains cleanly: no error-level finding
//   probe_mlp log  [run_dir]   "log1p(relu(x))" written as relu(log(1 + x)): NaN once x < -1
//   probe_mlp dead [run_dir]   layer 1's bias initialised to -20: every ReLU unit is dead
//
// The program checks tfdebug's diagnosis against what it knows about its own fault (the step at
// which 1 + x first went negative, the layer it killed) and exits 0 when they agree.
#include <tfdebug/core/error.hpp>
#include <tfdebug/session/probe.hpp>
#include <tfdebug/session/session.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kSamples = 256, kInputs = 8, kHidden = 32, kClasses = 4, kSteps = 200;
constexpr float kLearningRate = 1.0f;

using Matrix = std::vector<float>;  // row-major

tfdebug::TensorView view(const Matrix& m, std::int64_t rows, std::int64_t cols) {
  return tfdebug::TensorView(m.data(), tfdebug::DType::f32, {rows, cols});
}

// out[n, o] = sum_i in[n, i] * w[o, i] + b[o]
void linear(const Matrix& in, const Matrix& w, const Matrix& b, int n_in, int n_out, Matrix& out) {
  out.assign(std::size_t(kSamples) * std::size_t(n_out), 0.0f);
  for (int n = 0; n < kSamples; ++n)
    for (int o = 0; o < n_out; ++o) {
      float sum = b[std::size_t(o)];
      for (int i = 0; i < n_in; ++i) sum += in[std::size_t(n * n_in + i)] * w[std::size_t(o * n_in + i)];
      out[std::size_t(n * n_out + o)] = sum;
    }
}

struct Mlp {
  Matrix w1, b1, w2, b2;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string fault = argc > 1 ? argv[1] : "log";
  if (fault != "none" && fault != "log" && fault != "dead") {
    std::fprintf(stderr, "usage: probe_mlp none|log|dead [run_dir]\n");
    return 2;
  }
  // Data: four blobs around 3 * e_c in 8 dimensions.
  std::mt19937 rng(42);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  Matrix x(std::size_t(kSamples * kInputs));
  std::vector<int> label(kSamples);
  for (int n = 0; n < kSamples; ++n) {
    label[std::size_t(n)] = n % kClasses;
    for (int i = 0; i < kInputs; ++i)
      x[std::size_t(n * kInputs + i)] = noise(rng) + (i == label[std::size_t(n)] ? 3.0f : 0.0f);
  }
  Mlp p;
  p.w1.resize(std::size_t(kHidden * kInputs));
  p.w2.resize(std::size_t(kClasses * kHidden));
  for (float& w : p.w1) w = 0.05f * noise(rng);
  for (float& w : p.w2) w = noise(rng) / std::sqrt(float(kHidden));
  p.b1.assign(kHidden, fault == "dead" ? -20.0f : 0.0f);
  p.b2.assign(kClasses, 0.0f);

  tfdebug::RunConfig config;
  if (argc > 2) config.run_dir = argv[2];
  config.console = true;  // findings on stderr as they happen, a summary at the end
  config.stop_on_error = true;
  config.rules.get<tfdebug::DeadUnitsRule>().window = 20;
  tfdebug::Session session(config);
  tfdebug::Probe probe(session);

  std::int64_t first_negative_step = -1;  // ground truth for the log fault
  Matrix pre1, feat, h, logits, prob, dlogits, dh, dfeat, dpre1;
  int step = 0;
  try {
    for (; step < kSteps; ++step) {
      probe.begin_step(step);
      // Forward.
      linear(x, p.w1, p.b1, kInputs, kHidden, pre1);
      probe.observe("layer1.linear", tfdebug::Phase::forward, view(pre1, kSamples, kHidden),
                    {view(x, kSamples, kInputs)});
      if (fault == "log") {
        feat.resize(pre1.size());
        for (std::size_t i = 0; i < pre1.size(); ++i) {
          if (1.0f + pre1[i] < 0 && first_negative_step < 0) first_negative_step = step;
          feat[i] = std::log(1.0f + pre1[i]);  // the bug: meant log1p(relu(x))
        }
        probe.observe("layer1.log", tfdebug::Phase::forward, view(feat, kSamples, kHidden),
                      {view(pre1, kSamples, kHidden)});
      } else {
        feat = pre1;
      }
      h.resize(feat.size());
      for (std::size_t i = 0; i < feat.size(); ++i)
        h[i] = feat[i] > 0 || std::isnan(feat[i]) ? feat[i] : 0.0f;
      probe.observe("layer1.relu", tfdebug::Phase::forward, view(h, kSamples, kHidden),
                    {view(feat, kSamples, kHidden)});
      linear(h, p.w2, p.b2, kHidden, kClasses, logits);
      probe.observe("layer2.linear", tfdebug::Phase::forward, view(logits, kSamples, kClasses),
                    {view(h, kSamples, kHidden)});
      // Softmax cross-entropy (mean over the batch) and its gradient.
      prob.resize(logits.size());
      double loss = 0;
      dlogits.resize(logits.size());
      for (int n = 0; n < kSamples; ++n) {
        const float* row = &logits[std::size_t(n * kClasses)];
        const float top = *std::max_element(row, row + kClasses);
        float sum = 0;
        for (int c = 0; c < kClasses; ++c) sum += std::exp(row[c] - top);
        for (int c = 0; c < kClasses; ++c) {
          const std::size_t k = std::size_t(n * kClasses + c);
          prob[k] = std::exp(row[c] - top) / sum;
          dlogits[k] = (prob[k] - (c == label[std::size_t(n)] ? 1.0f : 0.0f)) / float(kSamples);
        }
        loss -= std::log(prob[std::size_t(n * kClasses + label[std::size_t(n)])]) / kSamples;
      }
      // Backward, by hand.
      Matrix dw2(p.w2.size(), 0.0f), db2(p.b2.size(), 0.0f), dw1(p.w1.size(), 0.0f), db1(p.b1.size(), 0.0f);
      dh.assign(h.size(), 0.0f);
      for (int n = 0; n < kSamples; ++n)
        for (int c = 0; c < kClasses; ++c) {
          const float g = dlogits[std::size_t(n * kClasses + c)];
          db2[std::size_t(c)] += g;
          for (int j = 0; j < kHidden; ++j) {
            dw2[std::size_t(c * kHidden + j)] += g * h[std::size_t(n * kHidden + j)];
            dh[std::size_t(n * kHidden + j)] += g * p.w2[std::size_t(c * kHidden + j)];
          }
        }
      if (probe.diagnosing())  // op-level backward outputs only in the diagnose tier
        probe.observe("layer2.linear_backward", tfdebug::Phase::backward, view(dh, kSamples, kHidden),
                      {view(dlogits, kSamples, kClasses)});
      dpre1.resize(pre1.size());
      for (std::size_t i = 0; i < pre1.size(); ++i) {
        const float relu_grad = feat[i] > 0 ? dh[i] : 0.0f;
        dpre1[i] = fault == "log" ? relu_grad / (1.0f + pre1[i]) : relu_grad;
      }
      for (int n = 0; n < kSamples; ++n)
        for (int j = 0; j < kHidden; ++j) {
          const float g = dpre1[std::size_t(n * kHidden + j)];
          db1[std::size_t(j)] += g;
          for (int i = 0; i < kInputs; ++i)
            dw1[std::size_t(j * kInputs + i)] += g * x[std::size_t(n * kInputs + i)];
        }
      // Parameters, gradients and SGD updates.
      struct Param {
        const char* name;
        Matrix* value;
        Matrix* grad;
        std::int64_t rows, cols;
      };
      const Param params[] = {{"layer1.weight", &p.w1, &dw1, kHidden, kInputs},
                              {"layer1.bias", &p.b1, &db1, 1, kHidden},
                              {"layer2.weight", &p.w2, &dw2, kClasses, kHidden},
                              {"layer2.bias", &p.b2, &db2, 1, kClasses}};
      for (const Param& q : params) {
        Matrix update(q.value->size());
        for (std::size_t i = 0; i < update.size(); ++i) update[i] = -kLearningRate * (*q.grad)[i];
        const std::int64_t rank1 = q.rows == 1 ? 1 : 2;
        const tfdebug::TensorView grad_view =
            rank1 == 1 ? tfdebug::TensorView(q.grad->data(), tfdebug::DType::f32, {q.cols})
                       : view(*q.grad, q.rows, q.cols);
        const tfdebug::TensorView value_view =
            rank1 == 1 ? tfdebug::TensorView(q.value->data(), tfdebug::DType::f32, {q.cols})
                       : view(*q.value, q.rows, q.cols);
        probe.observe_parameter(q.name, value_view);
        probe.observe_gradient(q.name, grad_view);
        probe.observe_update(q.name, rank1 == 1
                                         ? tfdebug::TensorView(update.data(), tfdebug::DType::f32, {q.cols})
                                         : view(update, q.rows, q.cols));
        for (std::size_t i = 0; i < update.size(); ++i) (*q.value)[i] += update[i];
      }
      probe.end_step(loss);  // throws tfdebug::Error once an error was found (stop_on_error)
    }
  } catch (const tfdebug::Error& e) {
    std::printf("stopped: %s\n", e.what());
  }
  const tfdebug::RunSummary summary = session.finish();

  // Check the diagnosis against the planted fault.
  auto find = [&](const std::string& rule) -> const tfdebug::Finding* {
    for (const tfdebug::Finding& f : summary.findings)
      if (f.rule == rule) return &f;
    return nullptr;
  };
  bool ok = false;
  if (fault == "log") {
    const tfdebug::Finding* f = find("nonfinite");
    ok = f != nullptr && f->module == "layer1" && f->op == "log" && f->phase == tfdebug::Phase::forward &&
         f->step == first_negative_step && f->evidence_value("producer") == 1;
    std::printf("planted: log(1 + x) with x < -1 first at step %lld\n",
                static_cast<long long>(first_negative_step));
    if (f != nullptr)
      std::printf("diagnosis: %s at step %lld: %s (%s), %g propagators\n", f->rule.c_str(),
                  static_cast<long long>(f->step), f->op.c_str(), f->module.c_str(),
                  f->evidence_value("propagators"));
  } else if (fault == "dead") {
    const tfdebug::Finding* f = find("dead_units");
    ok = f != nullptr && f->module == "layer1" && f->op == "relu" && f->evidence_value("fraction") == 1.0;
    if (f != nullptr)
      std::printf("diagnosis: %s at step %lld: %g of %g units of %s.%s dead\n", f->rule.c_str(),
                  static_cast<long long>(f->step), f->evidence_value("dead"), f->evidence_value("units"),
                  f->module.c_str(), f->op.c_str());
  } else {
    ok = std::none_of(summary.findings.begin(), summary.findings.end(),
                      [](const tfdebug::Finding& f) { return f.severity == tfdebug::Severity::error; });
    std::printf("diagnosis: %zu findings, none of them errors; final loss over %lld steps\n",
                summary.findings.size(), static_cast<long long>(summary.steps));
  }
  std::printf("%s\n", ok ? "diagnosis matches the planted fault" : "DIAGNOSIS DOES NOT MATCH");
  return ok ? 0 : 1;
}
