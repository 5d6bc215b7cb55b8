// HotFlip-style greedy token substitution (token_attack.hpp).
#include "tfdebug/robust/token_attack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

struct Scored {
  std::int64_t argmax = 0;
  double probability = 0;  // softmax of the label
  double loss = 0;         // cross-entropy of the label
};

Scored score(std::span<const float> logits, std::int64_t label) {
  Scored s;
  s.argmax = std::max_element(logits.begin(), logits.end()) - logits.begin();
  const double top = logits[static_cast<std::size_t>(s.argmax)];
  double sum = 0;
  for (const float z : logits) sum += std::exp(z - top);
  const double log_p = logits[static_cast<std::size_t>(label)] - top - std::log(sum);
  s.probability = std::exp(log_p);
  s.loss = -log_p;
  return s;
}

struct Candidate {
  double gain = 0;  // first-order change of the loss
  std::int64_t position = 0, id = 0;
};

// Evaluates the candidate sequences in batches of at most max_batch; returns their scores.
std::vector<Scored> evaluate(TokenModel& model, const std::vector<std::int64_t>& base, std::int64_t length,
                             std::span<const Candidate> candidates, std::int64_t label,
                             std::int64_t max_batch) {
  std::vector<Scored> out;
  const auto k = model.output_size();
  for (std::size_t begin = 0; begin < candidates.size(); begin += static_cast<std::size_t>(max_batch)) {
    const std::size_t end = std::min(candidates.size(), begin + static_cast<std::size_t>(max_batch));
    std::vector<std::int64_t> batch;
    batch.reserve((end - begin) * static_cast<std::size_t>(length));
    for (std::size_t c = begin; c < end; ++c) {
      const std::size_t at = batch.size();
      batch.insert(batch.end(), base.begin(), base.end());
      batch[at + static_cast<std::size_t>(candidates[c].position)] = candidates[c].id;
    }
    std::vector<float> logits((end - begin) * static_cast<std::size_t>(k));
    model.forward(batch, length, logits);
    for (std::size_t c = 0; c < end - begin; ++c)
      out.push_back(score(std::span<const float>(logits).subspan(c * static_cast<std::size_t>(k),
                                                                 static_cast<std::size_t>(k)),
                          label));
  }
  return out;
}

}  // namespace

TokenAttackResult hotflip(TokenModel& model, std::span<const std::int64_t> ids, std::int64_t length,
                          std::span<const std::int64_t> labels, const TokenAttackOptions& options) {
  const std::int64_t vocab = model.vocabulary();
  const std::int64_t classes = model.output_size();
  if (length < 1 || ids.empty() || ids.size() % static_cast<std::size_t>(length) != 0)
    throw Error("hotflip: " + std::to_string(ids.size()) + " ids are not whole sequences of length " +
                std::to_string(length));
  const auto n = static_cast<std::int64_t>(ids.size()) / length;
  if (static_cast<std::int64_t>(labels.size()) != n)
    throw Error("hotflip: " + std::to_string(labels.size()) + " labels for " + std::to_string(n) +
                " sequences");
  for (const auto id : ids)
    if (id < 0 || id >= vocab)
      throw Error("hotflip: token id " + std::to_string(id) + " outside the vocabulary 0.." +
                  std::to_string(vocab - 1));
  for (const auto l : labels)
    if (l < 0 || l >= classes)
      throw Error("hotflip: label " + std::to_string(l) + " is not an output (0.." +
                  std::to_string(classes - 1) + ")");
  if (options.max_changes < 1 || options.candidates < 1 || options.max_batch < 1)
    throw Error("hotflip: max_changes, candidates and max_batch must be at least 1");
  if (options.first_id < 0 || options.first_id >= vocab)
    throw Error("hotflip: first_id " + std::to_string(options.first_id) + " outside the vocabulary");
  if (!options.changeable.empty() && options.changeable.size() != ids.size())
    throw Error("hotflip: " + std::to_string(options.changeable.size()) + " changeable flags for " +
                std::to_string(ids.size()) + " tokens");

  TokenAttackResult result;
  std::int64_t correct_before = 0, correct_after = 0, successes = 0;
  std::vector<float> logits(static_cast<std::size_t>(classes));
  std::vector<float> gradient(static_cast<std::size_t>(length * vocab));
  for (std::int64_t e = 0; e < n; ++e) {
    const auto offset = static_cast<std::size_t>(e * length);
    std::vector<std::int64_t> x(
        ids.begin() + static_cast<std::ptrdiff_t>(offset),
        ids.begin() + static_cast<std::ptrdiff_t>(offset + static_cast<std::size_t>(length)));
    std::vector<std::uint8_t> open(static_cast<std::size_t>(length), 1);
    if (!options.changeable.empty())
      std::copy_n(options.changeable.begin() + static_cast<std::ptrdiff_t>(offset), length, open.begin());
    const std::int64_t label = labels[static_cast<std::size_t>(e)];
    TokenAttackExample ex;
    model.forward(x, length, logits);
    ++ex.queries;
    Scored now = score(logits, label);
    ex.predicted_before = now.argmax;
    ex.confidence_before = now.probability;
    correct_before += now.argmax == label;
    for (std::int64_t step = 0; step < options.max_changes && now.argmax == label; ++step) {
      model.one_hot_gradient(x, label, logits, gradient);
      ++ex.queries;
      std::vector<Candidate> candidates;
      for (std::int64_t i = 0; i < length; ++i) {
        if (!open[static_cast<std::size_t>(i)]) continue;
        const float* g = gradient.data() + i * vocab;
        const double here = g[x[static_cast<std::size_t>(i)]];
        for (std::int64_t v = options.first_id; v < vocab; ++v)
          if (v != x[static_cast<std::size_t>(i)]) candidates.push_back({g[v] - here, i, v});
      }
      if (candidates.empty()) break;
      const auto keep =
          std::min<std::size_t>(candidates.size(), static_cast<std::size_t>(options.candidates));
      // Ties broken by position then id, so that the attack is deterministic.
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep),
                        candidates.end(), [](const Candidate& a, const Candidate& b) {
                          if (a.gain != b.gain) return a.gain > b.gain;
                          return a.position != b.position ? a.position < b.position : a.id < b.id;
                        });
      candidates.resize(keep);
      const std::vector<Scored> scored = evaluate(model, x, length, candidates, label, options.max_batch);
      ex.queries += static_cast<std::int64_t>(keep);
      // A substitution that misclassifies wins; among those (or among all, when none does), the
      // highest loss.
      std::size_t best = 0;
      for (std::size_t c = 1; c < keep; ++c) {
        const bool flips = scored[c].argmax != label, best_flips = scored[best].argmax != label;
        if (flips != best_flips ? flips : scored[c].loss > scored[best].loss) best = c;
      }
      x[static_cast<std::size_t>(candidates[best].position)] = candidates[best].id;
      open[static_cast<std::size_t>(candidates[best].position)] = 0;
      ex.positions.push_back(candidates[best].position);
      now = scored[best];
    }
    ex.predicted_after = now.argmax;
    ex.confidence_after = now.probability;
    ex.success = now.argmax != label;
    for (std::int64_t i = 0; i < length; ++i)
      ex.changed += x[static_cast<std::size_t>(i)] != ids[offset + static_cast<std::size_t>(i)];
    ex.adversarial = std::move(x);
    correct_after += !ex.success;
    successes += ex.success;
    result.queries += ex.queries;
    result.examples.push_back(std::move(ex));
  }
  result.success_rate = static_cast<double>(successes) / static_cast<double>(n);
  result.clean_accuracy = static_cast<double>(correct_before) / static_cast<double>(n);
  result.robust_accuracy = static_cast<double>(correct_after) / static_cast<double>(n);
  return result;
}

}  // namespace tfdebug::robust
