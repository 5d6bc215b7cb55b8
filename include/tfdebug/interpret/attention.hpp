// Attention-pattern analysis of one example's attention maps (attention_model.hpp): what each
// head does, after Clark et al. 2019 ("What does BERT look at?") and Voita et al. 2019, and how
// much each head matters to an output (Michel et al. 2019, by masking).
//
//   const auto maps = model.attention(x);
//   for (const HeadStats& s : head_stats(maps, tokens, {.delimiter = 0}))
//     std::printf("%s head %lld: %s, entropy %.2f of ln n\n", maps.layers[s.layer].c_str(),
//                 (long long)s.head, role_name(s.role).data(), s.entropy_relative);
//   const auto importance = head_importance(model, x, /*target=*/3);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tfdebug/interpret/attention_model.hpp"

namespace tfdebug::interpret {

// What a head mostly attends to: its argmax key for most queries is the query itself, the token
// before, the token after, the first token, a delimiter token; or it spreads its weight (broad);
// or none of these reaches half the queries (mixed).
enum class HeadRole : std::uint8_t { self, previous, next, first, delimiter, broad, mixed };
std::string_view role_name(HeadRole role);

struct HeadRoleOptions {
  std::optional<std::int64_t> delimiter{};  // a token id ([SEP], the demo's separator 0); none: no such role
  double broad_entropy = 0.9;  // a query is broad when its entropy is >= this times ln(keys it sees)
  double role_fraction = 0.5;  // a head takes the role of most queries when at least this fraction
};

struct HeadStats {
  std::int64_t layer = 0, head = 0;
  double entropy = 0;           // mean over queries of -sum_j p_j ln p_j, nats
  double entropy_relative = 0;  // entropy / ln(tokens): 1 for a uniform head
  double mean_distance = 0;     // mean over queries of sum_j p_j |i - j|, in tokens
  double confidence = 0;        // mean over queries of the largest weight (Voita et al.)
  // Mean weight each query puts on itself, its neighbours, the first token, delimiters.
  double weight_self = 0, weight_previous = 0, weight_next = 0, weight_first = 0, weight_delimiter = 0;
  // Fraction of queries that are broad, or whose largest weight is on that key (previous: of
  // the queries that have a previous token; next: of those with a next one). A broad query
  // counts as broad only: its largest weight is chance.
  double fraction_self = 0, fraction_previous = 0, fraction_next = 0, fraction_first = 0,
         fraction_delimiter = 0, fraction_broad = 0;
  HeadRole role = HeadRole::mixed;
  double role_fraction = 0;  // the fraction of the role (mixed: the largest one)
};

// Every head of `maps`, layer by layer. `tokens`: the example's token ids (for the delimiter
// role; empty when there is no delimiter). A query's keys are those with a weight above 0 (a
// causal mask's softmax gives exactly 0 to the future); a query that sees one key is not broad.
std::vector<HeadStats> head_stats(const AttentionMaps& maps, std::span<const std::int64_t> tokens = {},
                                  const HeadRoleOptions& options = {});

// Jensen-Shannon divergence of two distributions (natural log): 0 for equal ones, at most ln 2.
double js_divergence(std::span<const double> p, std::span<const double> q);
// Of two heads: the mean over queries of the JS divergence of their rows.
double head_js_divergence(std::span<const double> a, std::span<const double> b, std::int64_t tokens);
// Of every pair of heads: [layers * heads][layers * heads], head (l, h) at l * heads + h
// (Clark et al. cluster heads by this).
std::vector<double> head_divergences(const AttentionMaps& maps);

// How much each head matters to output `target` of x: the drop f(x) - f(x with the head masked),
// at l * heads + h, by one model call per head through forward_with_heads. A negative value: the
// output rises without the head.
struct HeadImportance {
  std::int64_t layers = 0, heads = 0;
  double output = 0;               // f(x), nothing masked
  std::vector<double> importance;  // [layers * heads]
};
HeadImportance head_importance(AttentionModel& model, std::span<const float> x, std::int64_t target);

}  // namespace tfdebug::interpret
