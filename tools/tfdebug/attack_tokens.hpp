// tfdebug attack --model demo: HotFlip token substitution on the demo language model's token
// sequences (attack_tokens.cpp; docs/robustness.md, "The demo model: token sequences").
// cmd_attack.cpp dispatches here.
#pragma once

#include <cstdint>
#include <string>

#include "analysis_output.hpp"

namespace tfdebug::cli {

struct TokenAttackArgs {
  std::string input;             // sequences: a file of one a line, or "3 5 0 3; 2 4 0 2"
  std::int64_t max_changes = 3;  // the L0 budget
  std::int64_t candidates = 10;  // substitutions the model checks per step
  std::int64_t max_batch = 64;
  std::string out;        // the adversarial sequences, one a line
  AnalysisOutput output;  // --json, --run-dir, --html
};

int run_token_attack(const TokenAttackArgs& args);

}  // namespace tfdebug::cli
