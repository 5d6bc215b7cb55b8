// Attention Rollout and Attention Flow (attention_rollout.hpp).
#include "tfdebug/interpret/attention_rollout.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// Dense n x n product c = a·b.
std::vector<double> multiply(std::span<const double> a, std::span<const double> b, std::size_t n) {
  std::vector<double> c(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k) {
      const double aik = a[i * n + k];
      if (aik == 0) continue;
      for (std::size_t j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
  }
  return c;
}

}  // namespace

std::vector<double> residual_attention(const AttentionMaps& maps, const RolloutOptions& options) {
  check_attention(maps);
  if (!(options.discard_ratio >= 0 && options.discard_ratio < 1))
    throw Error("rollout: discard ratio " + std::to_string(options.discard_ratio) + " is not in [0, 1)");
  const auto n = static_cast<std::size_t>(maps.tokens);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(maps.layer_count()) * n * n);
  std::vector<double> fused(n * n);
  std::vector<std::size_t> order(n * n);
  for (std::int64_t l = 0; l < maps.layer_count(); ++l) {
    for (std::size_t k = 0; k < n * n; ++k) {
      double v = options.fusion == HeadFusion::mean ? 0.0 : maps.head(l, 0)[k];
      for (std::int64_t h = 0; h < maps.heads; ++h) {
        const double w = maps.head(l, h)[k];
        switch (options.fusion) {
          case HeadFusion::mean:
            v += w / static_cast<double>(maps.heads);
            break;
          case HeadFusion::max:
            v = std::max(v, w);
            break;
          case HeadFusion::min:
            v = std::min(v, w);
            break;
        }
      }
      fused[k] = v;
    }
    // The smallest weights of the layer, in index order among equals (a stable answer).
    const auto drop =
        static_cast<std::size_t>(std::floor(options.discard_ratio * static_cast<double>(n * n)));
    if (drop > 0) {
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return fused[a] < fused[b]; });
      for (std::size_t k = 0; k < drop; ++k) fused[order[k]] = 0;
    }
    // Â = rownorm(A + I): each row divided by its own sum (Note in the header: not vit-explain's axis).
    for (std::size_t i = 0; i < n; ++i) {
      fused[i * n + i] += 1;
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += fused[i * n + j];
      for (std::size_t j = 0; j < n; ++j) out.push_back(fused[i * n + j] / sum);
    }
  }
  return out;
}

std::vector<double> attention_rollout(const AttentionMaps& maps, const RolloutOptions& options) {
  const std::vector<double> a = residual_attention(maps, options);
  const auto n = static_cast<std::size_t>(maps.tokens);
  std::vector<double> r(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n * n));
  for (std::int64_t l = 1; l < maps.layer_count(); ++l)
    r = multiply(std::span<const double>(a).subspan(static_cast<std::size_t>(l) * n * n, n * n), r, n);
  return r;
}

double max_flow(std::span<const double> capacity, std::int64_t nodes, std::int64_t source,
                std::int64_t sink) {
  const auto v = static_cast<std::size_t>(nodes);
  if (capacity.size() != v * v) throw Error("max_flow: the capacities are not nodes x nodes");
  if (source < 0 || sink < 0 || source >= nodes || sink >= nodes)
    throw Error("max_flow: no such source or sink");
  if (source == sink) return 0;
  std::vector<double> residual(capacity.begin(), capacity.end());
  std::vector<std::int64_t> parent(v);
  double flow = 0;
  for (;;) {
    // Breadth-first: the shortest augmenting path (Edmonds-Karp), so that it ends in O(V E^2).
    std::fill(parent.begin(), parent.end(), -1);
    parent[static_cast<std::size_t>(source)] = source;
    std::deque<std::size_t> queue{static_cast<std::size_t>(source)};
    while (!queue.empty() && parent[static_cast<std::size_t>(sink)] < 0) {
      const std::size_t u = queue.front();
      queue.pop_front();
      for (std::size_t w = 0; w < v; ++w) {
        if (parent[w] < 0 && residual[u * v + w] > 1e-15) {
          parent[w] = static_cast<std::int64_t>(u);
          queue.push_back(w);
        }
      }
    }
    if (parent[static_cast<std::size_t>(sink)] < 0) return flow;
    double bottleneck = std::numeric_limits<double>::infinity();
    for (auto w = static_cast<std::size_t>(sink); w != static_cast<std::size_t>(source);) {
      const auto u = static_cast<std::size_t>(parent[w]);
      bottleneck = std::min(bottleneck, residual[u * v + w]);
      w = u;
    }
    for (auto w = static_cast<std::size_t>(sink); w != static_cast<std::size_t>(source);) {
      const auto u = static_cast<std::size_t>(parent[w]);
      residual[u * v + w] -= bottleneck;
      residual[w * v + u] += bottleneck;
      w = u;
    }
    flow += bottleneck;
  }
}

std::vector<double> attention_flow(const AttentionMaps& maps, const RolloutOptions& options) {
  const std::vector<double> a = residual_attention(maps, options);
  const auto n = static_cast<std::size_t>(maps.tokens);
  const auto layers = static_cast<std::size_t>(maps.layer_count());
  // Node l * n + i: token i after layer l (l = 0: the input). Edges (l, i) -> (l - 1, j).
  const std::size_t v = (layers + 1) * n;
  std::vector<double> capacity(v * v, 0.0);
  for (std::size_t l = 1; l <= layers; ++l) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j)
        capacity[(l * n + i) * v + (l - 1) * n + j] = a[((l - 1) * n + i) * n + j];
    }
  }
  std::vector<double> flow(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      flow[i * n + j] = max_flow(capacity, static_cast<std::int64_t>(v),
                                 static_cast<std::int64_t>(layers * n + i), static_cast<std::int64_t>(j));
    }
  }
  return flow;
}

Attribution rollout_attribution(AttentionModel& model, std::span<const float> x,
                                const RolloutAttributionOptions& options) {
  const std::int64_t numel = example_size(model);
  if (static_cast<std::int64_t>(x.size()) != numel) {
    throw Error("attention-rollout: the input has " + std::to_string(x.size()) + " values; the model takes " +
                std::to_string(numel));
  }
  std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
  std::vector<std::int64_t> shape = model.input_shape();
  std::vector<std::int64_t> batch = shape;
  batch.insert(batch.begin(), 1);
  model.forward(TensorView(x.data(), DType::f32, batch), outputs);
  const std::int64_t target =
      options.target >= 0
          ? options.target
          : static_cast<std::int64_t>(std::max_element(outputs.begin(), outputs.end()) - outputs.begin());
  if (target >= model.output_size())
    throw Error("attention-rollout: target " + std::to_string(target) + " is not one of the model's outputs");
  const AttentionMaps maps = model.attention(x);
  if (maps.tokens != numel) {
    throw Error("attention-rollout: attention over " + std::to_string(maps.tokens) +
                " tokens for an input of " + std::to_string(numel) + " tokens");
  }
  const std::int64_t query = options.query < 0 ? maps.tokens - 1 : options.query;
  if (query >= maps.tokens)
    throw Error("attention-rollout: query " + std::to_string(query) + " is past the last token");
  const std::vector<double> r = attention_rollout(maps, options.rollout);
  Attribution a;
  a.method = "attention-rollout";
  a.shape = shape;
  a.values.assign(r.begin() + query * maps.tokens, r.begin() + (query + 1) * maps.tokens);
  a.output = outputs[static_cast<std::size_t>(target)];
  a.evaluations = 2;
  return a;
}

}  // namespace tfdebug::interpret
