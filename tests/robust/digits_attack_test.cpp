// The attacks on a real model: an MLP trained on the shipped digits by python3-torch
// (tests/robust/make_digits_model.py), loaded from TorchScript. Clean accuracy is above 90%;
// accuracy under FGSM and PGD falls monotonically as eps grows, PGD never above FGSM; CW and
// DeepFool fool every correctly classified example, CW with the smaller median L2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/robust/carlini_wagner.hpp"
#include "tfdebug/robust/deepfool.hpp"
#include "tfdebug/robust/gradient_attacks.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace tfdebug::robust {
namespace {

std::string fixture(const std::string& name) {
  const char* root = std::getenv("TFDEBUG_IO_FIXTURES");
  return std::string(root != nullptr ? root : TFDEBUG_FIXTURES_DIR) + "/digits_mlp/" + name;
}

template <class T>
std::vector<T> npy(const std::string& path, DType dtype) {
  const io::ModelFile file = io::ModelFile::open(path);
  const Tensor t = Tensor::copy_of(file.tensors().front().view, dtype);
  return {t.values<T>().begin(), t.values<T>().end()};
}

class Digits : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = npy<float>(fixture("test_x.npy"), DType::f32);
    y_ = npy<std::int64_t>(fixture("test_y.npy"), DType::i64);
  }
  torch::TorchModel model_ = torch::load_torchscript(fixture("digits_mlp.pt"), {64});
  std::vector<float> x_;
  std::vector<std::int64_t> y_;
  const AttackSettings settings_{.clip_min = 0, .clip_max = 1, .max_batch = 100, .seed = 3};
};

TEST_F(Digits, AccuracyFallsMonotonicallyInEps) {
  ASSERT_EQ(y_.size(), 300u);
  double fgsm_before = 2, pgd_before = 2;
  for (const double eps : {0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3}) {
    const double f = eps == 0 ? -1 : summarize(fgsm(model_, x_, y_, settings_, {.eps = eps})).robust_accuracy;
    const auto p =
        eps == 0 ? AttackSummary{}
                 : summarize(pgd(model_, x_, y_, settings_, {.eps = eps, .step_size = eps / 8, .steps = 20}));
    if (eps == 0) {
      const auto clean = summarize(fgsm(model_, x_, y_, settings_, {.eps = 1e-9}));
      EXPECT_GT(clean.clean_accuracy, 0.9);
      fgsm_before = pgd_before = clean.clean_accuracy;
      continue;
    }
    EXPECT_LE(f, fgsm_before) << "FGSM at eps " << eps;
    EXPECT_LE(p.robust_accuracy, pgd_before) << "PGD at eps " << eps;
    EXPECT_LE(p.robust_accuracy, f) << "PGD is at least as strong as FGSM at eps " << eps;
    fgsm_before = f;
    pgd_before = p.robust_accuracy;
  }
  EXPECT_LT(pgd_before, 0.1) << "eps 0.3 in [0, 1] pixels breaks an undefended MLP";
}

TEST_F(Digits, CarliniWagnerAndDeepFoolFoolTheCorrectlyClassified) {
  const std::vector<float> x(x_.begin(), x_.begin() + 24 * 64);
  const std::vector<std::int64_t> y(y_.begin(), y_.begin() + 24);
  const auto cw = carlini_wagner_l2(model_, x, y, settings_,
                                    {.binary_search_steps = 6, .steps = 200, .learning_rate = 0.05});
  const auto df = deepfool(model_, x, y, settings_, {});
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (cw.predicted_before[i] != y[i]) continue;
    EXPECT_EQ(cw.success[i], 1) << i;
    EXPECT_EQ(df.success[i], 1) << i;
    EXPECT_NE(cw.predicted_after[i], y[i]);
  }
  EXPECT_LE(summarize(cw).l2.median, summarize(df).l2.median * 1.05);
}

}  // namespace
}  // namespace tfdebug::robust
