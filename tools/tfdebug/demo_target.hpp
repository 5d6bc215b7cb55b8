// The demo language model as the subject of `tfdebug robust --model demo` and `tfdebug attack
// --model demo` (docs/robustness.md, "The demo model: token sequences"): trained here exactly as
// `tfdebug explain --model demo` trains it (same steps, same seed, so the same model), its token
// sequences read and checked, the copy task's right answer for each, and the model seen as a
// ForwardModel over token ids and as a robust::TokenModel (with one-hot gradients).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/robust/token_attack.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace tfdebug::cli {

// Training steps and seed of the demo model that explain, robust and attack examine: ~2-5 s on
// one core, enough for it to learn the copy.
inline constexpr std::int64_t kDemoTrainSteps = 300;
inline constexpr std::uint64_t kDemoSeed = 1;

// "3 5 1 0 3 5", "3,5,1,0,3,5" or "tok:3,5,1" -> token ids; for the demo (`demo` not null) each
// checked against its vocabulary and the sequence against its length. tfdebug::Error otherwise.
std::vector<std::int64_t> parse_tokens(std::string text, const demo::DemoConfig* demo);

// Sequences of the same length for the demo: `input` is a file of one sequence a line (blank
// lines and lines starting with # skipped) or sequences separated by ';' ("3 5 1 0 3; 2 2 4 0 2").
struct DemoSequences {
  std::vector<std::int64_t> ids;  // count x length, row-major
  std::int64_t count = 0, length = 0;
  // The copy task's next token for each sequence "s_1 .. s_m 0 s_1 .. s_k" (k < m, no 0 in s):
  // s_{k+1}; empty unless every sequence has that form.
  std::vector<std::int64_t> answers;
  // Per sequence, 1 where an attack may change a token: everywhere except the separator and
  // the token the answer copies (changing those changes the right answer); all 1 without answers.
  std::vector<std::uint8_t> changeable;
};
DemoSequences read_demo_sequences(const std::string& input, const demo::DemoConfig& config);

// The trained demo.
struct TrainedDemo {
  demo::DemoConfig config;
  std::unique_ptr<demo::DemoTrainer> trainer;
  double loss = 0, copy_accuracy = 0, seconds = 0;
};
TrainedDemo train_demo();

// The next-token logits at the last position for a batch of ids given as floats [n, length].
torch::TorchModel demo_forward_model(demo::DemoTrainer& trainer, std::int64_t length);

// The same as a TokenModel: the one-hot gradient of the cross-entropy is E g for g the gradient
// with respect to the token embeddings e = onehot E (one forward and one backward pass).
class DemoTokenModel : public robust::TokenModel {
 public:
  DemoTokenModel(demo::DemoTrainer& trainer, std::int64_t vocab) : trainer_(trainer), vocab_(vocab) {}
  std::int64_t vocabulary() const override { return vocab_; }
  std::int64_t output_size() const override { return vocab_; }
  void forward(std::span<const std::int64_t> ids, std::int64_t length, std::span<float> logits) override;
  void one_hot_gradient(std::span<const std::int64_t> ids, std::int64_t label, std::span<float> logits,
                        std::span<float> gradient) override;

 private:
  demo::DemoTrainer& trainer_;
  std::int64_t vocab_;
};

}  // namespace tfdebug::cli
