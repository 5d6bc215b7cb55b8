#include "tfdebug/interpret/lime_text.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "batching.hpp"
#include "lime_masks.hpp"

namespace tfdebug::interpret {

LimeTextAttribution lime_text(ForwardModel& model, std::span<const float> tokens, std::int64_t target,
                              const LimeTextOptions& o) {
  detail::check_example(model, tokens, target);
  // The features: the positions, or (bow) the distinct tokens; feature_of[j]: position j's.
  std::vector<float> words;
  std::vector<std::size_t> feature_of(tokens.size());
  for (std::size_t j = 0; j < tokens.size(); ++j) {
    if (!o.bow) {
      feature_of[j] = j;
      continue;
    }
    const auto seen = std::find(words.begin(), words.end(), tokens[j]);
    feature_of[j] = static_cast<std::size_t>(seen - words.begin());
    if (seen == words.end()) words.push_back(tokens[j]);
  }
  const std::size_t t = o.bow ? words.size() : tokens.size();
  detail::MaskSampling s;
  s.features = static_cast<std::int64_t>(t);
  s.samples = o.samples;
  s.distance_scale = 100;
  s.kernel_width = o.kernel_width;
  s.alpha = o.alpha;
  s.seed = o.seed;
  s.max_batch = o.max_batch;
  s.keep_neighbourhood = o.keep_neighbourhood;
  // Upstream: randint(1, tokens + 1) tokens hidden, chosen without replacement.
  s.draw = [t](detail::Stream& stream, std::span<double> z) {
    const std::size_t hidden = 1 + static_cast<std::size_t>(stream.below(t));
    std::vector<std::size_t> order(t);
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = 0; i < hidden; ++i) {  // the first `hidden` of a partial Fisher-Yates shuffle
      const std::size_t j = i + static_cast<std::size_t>(stream.below(t - i));
      std::swap(order[i], order[j]);
      z[order[i]] = 0;
    }
  };
  const std::size_t length = tokens.size();
  s.build = [&](std::span<const double> z, std::span<float> row) {
    if (o.masking == TokenMasking::replace) {
      for (std::size_t j = 0; j < length; ++j) row[j] = z[feature_of[j]] != 0 ? tokens[j] : o.mask_token;
      return;
    }
    std::size_t at = 0;
    for (std::size_t j = 0; j < length; ++j)
      if (z[feature_of[j]] != 0) row[at++] = tokens[j];
    for (; at < length; ++at) row[at] = o.mask_token;
  };
  LimeTextAttribution a;
  static_cast<LimeAttribution&>(a) = detail::lime_masks(model, target, s);
  a.method = "lime";
  a.shape = model.input_shape();
  if (o.bow) {
    a.words = std::move(words);
    a.word_weights = a.values;
    a.values.resize(length);
    for (std::size_t j = 0; j < length; ++j) a.values[j] = a.word_weights[feature_of[j]];
  }
  return a;
}

}  // namespace tfdebug::interpret
