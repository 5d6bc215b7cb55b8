// LIME for text ([F], tfdebug/interpret/model.hpp; after the upstream `lime` package's
// LimeTextExplainer): which tokens of one input moved an output. The model takes token ids as
// f32 values, one example = [tokens].
//
//   tfdebug::interpret::LimeTextOptions o;
//   o.masking = tfdebug::interpret::TokenMasking::replace;
//   o.mask_token = 103;  // [MASK]
//   o.seed = 7;          // the same seed gives the same explanation, bit for bit, whatever max_batch
//   const auto e = tfdebug::interpret::lime_text(model, token_ids, /*target=*/1, o);
//   // e.values[t]: token t's coefficient; e.intercept, e.r2, e.local_prediction
//
// Upstream's defaults: 5,000 samples; the features are the tokens (by position, as upstream's
// bow=False); sample 0 is the input, each other one hides a number of tokens drawn uniformly from
// 1..tokens, at positions drawn without replacement; the kernel exp(-d^2 / (2 w^2)), w = 25, on
// the cosine distance of the sample's mask to the all-on mask x 100; Ridge(alpha = 1) with an
// intercept, fitted with the kernel weights, and its weighted R^2. A hidden token is replaced by
// `mask_token` (the length stays), or removed (the kept tokens close up and `mask_token` pads the
// end, as the model's input length is fixed).
//
// bow = true groups the features by token type, as upstream's bow=True: each distinct token id
// is one feature (in order of first appearance), and hiding it hides every occurrence; the
// number hidden is drawn from 1..distinct tokens. `values` then gives each position its token's
// coefficient (a token that occurs twice has one weight, at both places), `words` and
// `word_weights` the tokens and their coefficients as the surrogate fitted them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/lime.hpp"

namespace tfdebug::interpret {

enum class TokenMasking { replace, remove };

struct LimeTextOptions {
  std::int64_t samples = 5000;
  double kernel_width = 25;
  TokenMasking masking = TokenMasking::replace;
  float mask_token = 0;  // replace: a hidden token's stand-in; remove: the padding after the kept ones
  double alpha = 1;      // the ridge penalty
  std::uint64_t seed = 0;
  std::int64_t max_batch = 256;
  bool keep_neighbourhood = false;  // fill LimeAttribution's data (the masks), weights and outputs
  bool bow = false;                 // one feature per token type, not per position
};

struct LimeTextAttribution : LimeAttribution {
  std::vector<float> words;          // bow: the distinct tokens, in order of first appearance
  std::vector<double> word_weights;  // bow: the surrogate's coefficient of each
};

LimeTextAttribution lime_text(ForwardModel& model, std::span<const float> tokens, std::int64_t target,
                              const LimeTextOptions& options);

}  // namespace tfdebug::interpret
