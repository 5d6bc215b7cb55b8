// tfdebug explain --model demo --method attention-rollout: the demo language model's attention
// for one token sequence (explain_attention.cpp); cmd_explain.cpp dispatches here.
#pragma once

#include <cstdint>
#include <string>

#include "analysis_output.hpp"

namespace tfdebug::cli {

struct AttentionExplainArgs {
  std::string model{};          // "demo"
  std::string input{};          // token ids: "3 5 1 0 3 5" (spaces or commas)
  std::int64_t target = -1;     // the next-token logit explained; -1: the model's top one
  std::string fusion = "mean";  // mean, max, min
  double discard_ratio = 0;
  std::int64_t delimiter = 0;  // the demo's separator token
  std::string html{};          // --attention-html
  std::string png{};           // --attention-png
  AnalysisOutput output;       // --json, --run-dir, --html
};

int run_attention_explain(const AttentionExplainArgs& args);

}  // namespace tfdebug::cli
