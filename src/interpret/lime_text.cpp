#include "tfdebug/interpret/lime_text.hpp"

#include <numeric>
#include <vector>

#include "batching.hpp"
#include "lime_masks.hpp"

namespace tfdebug::interpret {

LimeAttribution lime_text(ForwardModel& model, std::span<const float> tokens, std::int64_t target,
                          const LimeTextOptions& o) {
  detail::check_example(model, tokens, target);
  const std::size_t t = tokens.size();
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
  s.build = [&](std::span<const double> z, std::span<float> row) {
    if (o.masking == TokenMasking::replace) {
      for (std::size_t j = 0; j < t; ++j) row[j] = z[j] != 0 ? tokens[j] : o.mask_token;
      return;
    }
    std::size_t at = 0;
    for (std::size_t j = 0; j < t; ++j)
      if (z[j] != 0) row[at++] = tokens[j];
    for (; at < t; ++at) row[at] = o.mask_token;
  };
  LimeAttribution a = detail::lime_masks(model, target, s);
  a.method = "lime";
  a.shape = model.input_shape();
  return a;
}

}  // namespace tfdebug::interpret
