// The demo language model for robust and attack (demo_target.hpp).
#include "demo_target.hpp"

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/matmul.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_input.hpp"
#include "safe_text.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::cli {

std::vector<std::int64_t> parse_tokens(std::string text, const demo::DemoConfig* demo) {
  if (text.starts_with("tok:")) text.erase(0, 4);
  constexpr std::int64_t kMaxTokens = 4096;
  std::vector<std::int64_t> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == ',' || text[i] == '\t' || text[i] == '\r') {
      ++i;
      continue;
    }
    std::size_t end = text.find_first_of(" ,\t\r", i);
    if (end == std::string::npos) end = text.size();
    std::int64_t id = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, id);
    if (ec != std::errc() || ptr != text.data() + end || id < 0 || (demo != nullptr && id >= demo->vocab)) {
      throw Error("--input: '" + terminal_safe(text.substr(i, end - i)) + "' is not a token id" +
                  (demo != nullptr
                       ? " of the demo (0.." + std::to_string(demo->vocab - 1) + "; 0 is the separator)"
                       : std::string(" (an integer >= 0)")));
    }
    tokens.push_back(id);
    i = end;
  }
  const std::int64_t most = demo != nullptr ? 2 * demo->length : kMaxTokens;
  if (tokens.empty() || static_cast<std::int64_t>(tokens.size()) > most) {
    throw Error("--input: " + std::to_string(tokens.size()) + " tokens; " +
                (demo != nullptr ? "the demo takes 1 to " + std::to_string(most) +
                                       " (e.g. \"3 5 1 7 0 3 5\": tokens, the separator 0, their copy)"
                                 : "expected 1 to " + std::to_string(most) + " token ids (\"3 5 1 7\")"));
  }
  return tokens;
}

namespace {

// The copy task's answer for s_1 .. s_m 0 s_1 .. s_k, and the positions an attack must keep.
struct CopyForm {
  std::int64_t answer = -1;
  std::int64_t separator = -1, copied = -1;  // positions
};

CopyForm copy_form(std::span<const std::int64_t> s) {
  const auto sep = std::find(s.begin(), s.end(), 0);
  if (sep == s.end()) return {};
  const auto m = sep - s.begin();
  const auto k = static_cast<std::int64_t>(s.size()) - m - 1;
  if (m < 1 || k >= m || std::find(sep + 1, s.end(), 0) != s.end()) return {};
  if (!std::equal(sep + 1, s.end(), s.begin())) return {};
  return {.answer = s[static_cast<std::size_t>(k)], .separator = m, .copied = k};
}

}  // namespace

DemoSequences read_demo_sequences(const std::string& input, const demo::DemoConfig& config) {
  std::vector<std::string> lines;
  std::error_code ec;
  if (std::filesystem::is_regular_file(input, ec)) {
    std::string text = read_text(input);
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      const auto first = line.find_first_not_of(" \t\r");
      if (first != std::string::npos && line[first] != '#') lines.push_back(line);
      start = end + 1;
    }
    if (lines.empty()) throw Error(input + ": no token sequences (one a line, e.g. \"3 5 1 7 0 3 5\")");
  } else {
    std::size_t start = 0;
    while (start <= input.size()) {
      std::size_t end = input.find(';', start);
      if (end == std::string::npos) end = input.size();
      lines.push_back(input.substr(start, end - start));
      start = end + 1;
    }
  }
  DemoSequences d;
  std::vector<CopyForm> forms;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::int64_t> s = parse_tokens(lines[i], &config);
    if (i == 0) d.length = static_cast<std::int64_t>(s.size());
    if (static_cast<std::int64_t>(s.size()) != d.length)
      throw Error("--input: sequence " + std::to_string(i + 1) + " has " + std::to_string(s.size()) +
                  " tokens, the first " + std::to_string(d.length) +
                  " (every sequence needs the same length)");
    d.ids.insert(d.ids.end(), s.begin(), s.end());
    forms.push_back(copy_form(s));
  }
  d.count = static_cast<std::int64_t>(lines.size());
  const bool all_copies =
      std::all_of(forms.begin(), forms.end(), [](const CopyForm& f) { return f.answer >= 0; });
  d.changeable.assign(d.ids.size(), 1);
  if (all_copies) {
    for (std::size_t i = 0; i < forms.size(); ++i) {
      d.answers.push_back(forms[i].answer);
      const std::size_t row = i * static_cast<std::size_t>(d.length);
      d.changeable[row + static_cast<std::size_t>(forms[i].separator)] = 0;
      d.changeable[row + static_cast<std::size_t>(forms[i].copied)] = 0;
    }
  }
  return d;
}

TrainedDemo train_demo() {
  TrainedDemo t;
  t.config.seed = kDemoSeed;
  const auto start = std::chrono::steady_clock::now();
  t.trainer = std::make_unique<demo::DemoTrainer>(t.config);
  for (std::int64_t step = 0; step < kDemoTrainSteps; ++step) t.loss = t.trainer->train_step();
  t.copy_accuracy = t.trainer->evaluate();
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return t;
}

torch::TorchModel demo_forward_model(demo::DemoTrainer& trainer, std::int64_t length) {
  return torch::TorchModel(
      [&trainer](const at::Tensor& batch) { return trainer.logits(batch.to(at::kLong)).select(1, -1); },
      std::vector<std::int64_t>{length});
}

void DemoTokenModel::forward(std::span<const std::int64_t> ids, std::int64_t length,
                             std::span<float> logits) {
  at::NoGradGuard no_grad;
  const auto n = static_cast<std::int64_t>(ids.size()) / length;
  const at::Tensor x =
      at::from_blob(const_cast<std::int64_t*>(ids.data()), {n, length}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor z = trainer_.logits(x).select(1, -1).to(at::kFloat).contiguous();
  std::copy_n(z.data_ptr<float>(), n * vocab_, logits.begin());
}

void DemoTokenModel::one_hot_gradient(std::span<const std::int64_t> ids, std::int64_t label,
                                      std::span<float> logits, std::span<float> gradient) {
  at::AutoGradMode grad(true);
  const auto length = static_cast<std::int64_t>(ids.size());
  const at::Tensor weight = trainer_.token_embedding_weight().detach();  // E [vocab, d_model]
  const at::Tensor x =
      at::from_blob(const_cast<std::int64_t*>(ids.data()), {length}, at::TensorOptions().dtype(at::kLong));
  // e = onehot(x) E, a leaf: d loss / d onehot[i][v] = E[v] . d loss / d e[i].
  at::Tensor embedded = weight.index_select(0, x).unsqueeze(0).clone().set_requires_grad(true);
  const at::Tensor z = trainer_.logits_from_embeddings(embedded).select(1, -1).squeeze(0);
  const at::Tensor loss = -at::log_softmax(z, 0)[label];
  loss.backward();
  const at::Tensor g = at::matmul(embedded.grad().squeeze(0), weight.t()).to(at::kFloat).contiguous();
  std::copy_n(g.data_ptr<float>(), length * vocab_, gradient.begin());
  const at::Tensor zf = z.detach().to(at::kFloat).contiguous();
  std::copy_n(zf.data_ptr<float>(), vocab_, logits.begin());
}

}  // namespace tfdebug::cli
