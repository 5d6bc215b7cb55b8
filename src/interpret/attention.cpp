// Attention-pattern analysis (attention.hpp) and the checks of AttentionMaps (attention_model.hpp).
#include "tfdebug/interpret/attention.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

std::string where(const AttentionMaps& maps, std::int64_t layer, std::int64_t head, std::int64_t query) {
  const std::string name = layer < maps.layer_count() ? maps.layers[static_cast<std::size_t>(layer)] : "?";
  return "attention layer " + std::to_string(layer) + " (" + name + "), head " + std::to_string(head) +
         ", query " + std::to_string(query);
}

}  // namespace

void check_attention(const AttentionMaps& maps) {
  if (maps.heads <= 0 || maps.tokens <= 0 || maps.layers.empty())
    throw Error("attention maps: no layers, heads or tokens");
  const auto expected = static_cast<std::size_t>(maps.layer_count() * maps.heads * maps.tokens * maps.tokens);
  if (maps.weights.size() != expected) {
    throw Error("attention maps: " + std::to_string(maps.weights.size()) + " weights for " +
                std::to_string(maps.layer_count()) + " layers x " + std::to_string(maps.heads) + " heads x " +
                std::to_string(maps.tokens) + "^2 tokens");
  }
  for (std::int64_t l = 0; l < maps.layer_count(); ++l) {
    for (std::int64_t h = 0; h < maps.heads; ++h) {
      for (std::int64_t i = 0; i < maps.tokens; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < maps.tokens; ++j) {
          const double w = maps.at(l, h, i, j);
          if (!(w >= 0 && w <= 1 + 1e-6))
            throw Error(where(maps, l, h, i) + ": weight " + std::to_string(w) + " is not in [0, 1]");
          sum += w;
        }
        if (std::fabs(sum - 1) > 1e-3)
          throw Error(where(maps, l, h, i) + ": the weights sum to " + std::to_string(sum) + ", not 1");
      }
    }
  }
}

std::string_view role_name(HeadRole role) {
  constexpr std::array<std::string_view, 7> kNames = {"self",      "previous", "next", "first",
                                                      "delimiter", "broad",    "mixed"};
  return kNames[static_cast<std::size_t>(role)];
}

std::vector<HeadStats> head_stats(const AttentionMaps& maps, std::span<const std::int64_t> tokens,
                                  const HeadRoleOptions& options) {
  check_attention(maps);
  const std::int64_t n = maps.tokens;
  if (!tokens.empty() && static_cast<std::int64_t>(tokens.size()) != n) {
    throw Error("head_stats: " + std::to_string(tokens.size()) + " token ids for attention over " +
                std::to_string(n) + " tokens");
  }
  const double ln_n = std::log(static_cast<double>(n));
  std::vector<HeadStats> out;
  for (std::int64_t l = 0; l < maps.layer_count(); ++l) {
    for (std::int64_t h = 0; h < maps.heads; ++h) {
      HeadStats s;
      s.layer = l;
      s.head = h;
      std::int64_t self = 0, previous = 0, next = 0, first = 0, delimiter = 0, broad = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        double entropy = 0, distance = 0, top = -1;
        std::int64_t argmax = 0, keys = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const double p = maps.at(l, h, i, j);
          if (p > 0) {
            entropy -= p * std::log(p);
            ++keys;
          }
          distance += p * static_cast<double>(std::abs(i - j));
          if (p > top) {  // the first of equal largest weights
            top = p;
            argmax = j;
          }
          if (options.delimiter && !tokens.empty() &&
              tokens[static_cast<std::size_t>(j)] == *options.delimiter)
            s.weight_delimiter += p;
        }
        s.entropy += entropy;
        s.mean_distance += distance;
        s.confidence += top;
        s.weight_self += maps.at(l, h, i, i);
        if (i > 0) s.weight_previous += maps.at(l, h, i, i - 1);
        if (i + 1 < n) s.weight_next += maps.at(l, h, i, i + 1);
        s.weight_first += maps.at(l, h, i, 0);
        // A broad query's argmax says nothing (a uniform row's is its first key): it counts as
        // broad only.
        if (keys > 1 && entropy >= options.broad_entropy * std::log(static_cast<double>(keys))) {
          ++broad;
          continue;
        }
        self += argmax == i;
        previous += i > 0 && argmax == i - 1;
        next += i + 1 < n && argmax == i + 1;
        first += argmax == 0;
        if (options.delimiter && !tokens.empty())
          delimiter += tokens[static_cast<std::size_t>(argmax)] == *options.delimiter;
      }
      const auto per = [](double total, std::int64_t count) {
        return count > 0 ? total / static_cast<double>(count) : 0.0;
      };
      s.entropy = per(s.entropy, n);
      s.entropy_relative = n > 1 ? s.entropy / ln_n : 0;
      s.mean_distance = per(s.mean_distance, n);
      s.confidence = per(s.confidence, n);
      s.weight_self = per(s.weight_self, n);
      s.weight_previous = per(s.weight_previous, n - 1);
      s.weight_next = per(s.weight_next, n - 1);
      s.weight_first = per(s.weight_first, n);
      s.weight_delimiter = per(s.weight_delimiter, n);
      s.fraction_self = per(static_cast<double>(self), n);
      s.fraction_previous = per(static_cast<double>(previous), n - 1);
      s.fraction_next = per(static_cast<double>(next), n - 1);
      s.fraction_first = per(static_cast<double>(first), n);
      s.fraction_delimiter = per(static_cast<double>(delimiter), n);
      s.fraction_broad = per(static_cast<double>(broad), n);
      // Positional roles first: they are the more specific explanation when two tie (query 0's
      // argmax on itself is also on the first token).
      const std::array<std::pair<HeadRole, double>, 6> roles = {{{HeadRole::previous, s.fraction_previous},
                                                                 {HeadRole::next, s.fraction_next},
                                                                 {HeadRole::self, s.fraction_self},
                                                                 {HeadRole::first, s.fraction_first},
                                                                 {HeadRole::delimiter, s.fraction_delimiter},
                                                                 {HeadRole::broad, s.fraction_broad}}};
      auto best = roles.front();
      for (const auto& r : roles) {
        if (r.second > best.second) best = r;
      }
      s.role = best.second >= options.role_fraction ? best.first : HeadRole::mixed;
      s.role_fraction = best.second;
      out.push_back(s);
    }
  }
  return out;
}

double js_divergence(std::span<const double> p, std::span<const double> q) {
  TFDEBUG_ASSERT(p.size() == q.size(), "js_divergence of distributions of different sizes");
  double js = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double m = 0.5 * (p[k] + q[k]);
    if (p[k] > 0) js += 0.5 * p[k] * std::log(p[k] / m);
    if (q[k] > 0) js += 0.5 * q[k] * std::log(q[k] / m);
  }
  return std::max(js, 0.0);  // rounding can leave -1e-17 for equal rows
}

double head_js_divergence(std::span<const double> a, std::span<const double> b, std::int64_t tokens) {
  const auto n = static_cast<std::size_t>(tokens);
  TFDEBUG_ASSERT(a.size() == n * n && b.size() == n * n, "head_js_divergence of heads of different sizes");
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += js_divergence(a.subspan(i * n, n), b.subspan(i * n, n));
  return tokens > 0 ? sum / static_cast<double>(tokens) : 0;
}

std::vector<double> head_divergences(const AttentionMaps& maps) {
  check_attention(maps);
  const std::int64_t all = maps.layer_count() * maps.heads;
  std::vector<double> d(static_cast<std::size_t>(all * all), 0.0);
  for (std::int64_t a = 0; a < all; ++a) {
    for (std::int64_t b = a + 1; b < all; ++b) {
      const double v = head_js_divergence(maps.head(a / maps.heads, a % maps.heads),
                                          maps.head(b / maps.heads, b % maps.heads), maps.tokens);
      d[static_cast<std::size_t>(a * all + b)] = v;
      d[static_cast<std::size_t>(b * all + a)] = v;
    }
  }
  return d;
}

HeadImportance head_importance(AttentionModel& model, std::span<const float> x, std::int64_t target) {
  if (target < 0 || target >= model.output_size()) {
    throw Error("head_importance: target " + std::to_string(target) + " is not one of the model's " +
                std::to_string(model.output_size()) + " outputs");
  }
  const AttentionMaps maps = model.attention(x);
  HeadImportance r;
  r.layers = maps.layer_count();
  r.heads = maps.heads;
  std::vector<float> scale(static_cast<std::size_t>(r.layers * r.heads), 1.0f);
  std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
  model.forward_with_heads(x, scale, outputs);
  r.output = outputs[static_cast<std::size_t>(target)];
  r.importance.resize(scale.size());
  for (std::size_t k = 0; k < scale.size(); ++k) {
    scale[k] = 0;
    model.forward_with_heads(x, scale, outputs);
    r.importance[k] = r.output - outputs[static_cast<std::size_t>(target)];
    scale[k] = 1;
  }
  return r;
}

}  // namespace tfdebug::interpret
