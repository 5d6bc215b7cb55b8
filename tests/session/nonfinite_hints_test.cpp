// Note [What the op says] (src/session/rules/nonfinite_hints.cpp): the reason a producer's name
// and what it made give, and nothing where they give none.
#include "rules/nonfinite_hints.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "session_test_util.hpp"

namespace tfdebug::detail {
namespace {

constexpr MadeValues kNaN{1, 0, 0};
constexpr MadeValues kPosInf{0, 1, 0};
constexpr MadeValues kNegInf{0, 0, 1};

bool says(const std::string& hint, const std::string& words) {
  return hint.find(words) != std::string::npos;
}

TEST(NonfiniteHints, WhatEachOpMadeSaysWhy) {
  EXPECT_TRUE(says(producer_hint("aten::log", Phase::forward, kNegInf, false), "log of 0"));
  EXPECT_TRUE(says(producer_hint("aten::log", Phase::forward, kNegInf, false), "take log_softmax"));
  EXPECT_TRUE(says(producer_hint("aten::log_", Phase::forward, kNaN, false), "log of a negative value"));
  EXPECT_TRUE(says(producer_hint("aten::log2.out", Phase::forward, kNaN, false), "log of a negative value"));
  EXPECT_TRUE(says(producer_hint("aten::sqrt", Phase::forward, kNaN, false), "sqrt of a negative value"));
  EXPECT_TRUE(says(producer_hint("aten::rsqrt", Phase::forward, kPosInf, false), "rsqrt of 0"));
  EXPECT_TRUE(says(producer_hint("aten::div", Phase::forward, kNaN, false), "0 / 0"));
  EXPECT_TRUE(says(producer_hint("aten::div.Tensor", Phase::forward, kPosInf, false), "division by 0"));
  EXPECT_TRUE(says(producer_hint("aten::exp", Phase::forward, kPosInf, false), "exp overflowed"));
  EXPECT_TRUE(says(producer_hint("aten::acos", Phase::forward, kNaN, false), "outside [-1, 1]"));
  EXPECT_TRUE(says(producer_hint("aten::cross_entropy_loss", Phase::forward, kNaN, false), "ignore_index"));
  EXPECT_TRUE(says(producer_hint("aten::mean", Phase::forward, kNaN, false), "a mean over no values"));
  EXPECT_TRUE(says(producer_hint("aten::layer_norm", Phase::forward, kNaN, false), "an epsilon of 0"));
  EXPECT_TRUE(says(producer_hint("aten::native_batch_norm", Phase::forward, kNaN, false), "an epsilon of 0"));
  // In backward, a division's NaN or Inf from finite values is an infinite derivative.
  EXPECT_TRUE(
      says(producer_hint("aten::div", Phase::backward, kNaN, false), "a derivative that is infinite"));
  EXPECT_TRUE(
      says(producer_hint("aten::pow", Phase::backward, kPosInf, false), "a derivative that is infinite"));
  // Note [The node says which derivative]: the node names the forward op whose derivative it is.
  EXPECT_TRUE(says(producer_hint("aten::div", Phase::backward, kNegInf, false, "SqrtBackward0"),
                   "the derivative of sqrt at 0"));
  EXPECT_TRUE(says(producer_hint("aten::mul", Phase::backward, kPosInf, false, "LogBackward0"),
                   "the derivative of log at 0"));
  EXPECT_TRUE(
      says(producer_hint("aten::mul", Phase::backward, kPosInf, false, "PowBackward1"), "exponent below 1"));
  EXPECT_TRUE(says(producer_hint("aten::div", Phase::backward, kNegInf, false, "AcosBackward0"),
                   "the derivative of acos at +-1"));
  // A node that names no forward op of those: the backward advice by the op, as without one.
  EXPECT_TRUE(says(producer_hint("aten::div", Phase::backward, kNaN, false, "torch::autograd::CppNode<Clip>"),
                   "a derivative that is infinite"));
  EXPECT_TRUE(says(producer_hint("aten::div", Phase::backward, kNaN, false, "MyBackward"),
                   "a derivative that is infinite"));
  // From infinities: the masked softmax row, 0 * inf, inf - inf.
  EXPECT_TRUE(says(producer_hint("aten::_softmax", Phase::forward, kNaN, true), "every entry is masked"));
  EXPECT_TRUE(says(producer_hint("aten::mul", Phase::forward, kNaN, true), "0 * inf"));
  EXPECT_TRUE(says(producer_hint("aten::sub", Phase::forward, kNaN, true), "inf - inf"));
}

TEST(NonfiniteHints, NothingWhereTheOpSaysNothingMore) {
  EXPECT_EQ(producer_hint("aten::mm", Phase::forward, kPosInf, false), "");   // an overflow: no reason
  EXPECT_EQ(producer_hint("aten::mm", Phase::backward, kPosInf, false), "");  // f16 overflow in backward
  EXPECT_EQ(producer_hint("aten::exp", Phase::forward, kNaN, false), "");     // not what exp makes
  EXPECT_EQ(producer_hint("aten::layer_norm", Phase::forward, kPosInf, false), "");  // an overflow
  EXPECT_EQ(producer_hint("aten::sqrt", Phase::forward, kPosInf, false), "");  // sqrt of +Inf: no producer
  EXPECT_EQ(producer_hint("aten::cross_entropy_loss", Phase::forward, kPosInf, false), "");
  EXPECT_EQ(producer_hint("aten::matmul", Phase::forward, kNaN, true), "");
  EXPECT_EQ(producer_hint("mylib::logits", Phase::forward, kNaN, false), "");  // "log" is not a prefix match
  // A node says nothing of an op in the forward, nor of a NaN made from infinities.
  EXPECT_EQ(producer_hint("aten::mm", Phase::forward, kPosInf, false, "SqrtBackward0"), "");
  EXPECT_EQ(producer_hint("aten::matmul", Phase::backward, kNaN, true, "SqrtBackward0"), "");
  EXPECT_EQ(producer_hint("aten::mm", Phase::backward, kPosInf, false, "MmBackward0"), "");
}

// A producer that names a backward op's autograd node when asked (Observation::node).
class NodeNamingInputs final : public InputsCheck {
 public:
  std::optional<bool> inputs_finite() const override { return true; }
  std::string autograd_node() const override {
    ++asked;
    return "SqrtBackward0";
  }
  mutable int asked = 0;
};

// Through the Session: a non-finite backward output's node is asked for once and named in the
// message, its evidence and its suggestion; a finite output's node is never asked for.
TEST(NonfiniteHints, ABackwardProducerIsNamedWithItsNode) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> made{-inf, -inf};
  const std::vector<float> finite{1.0f, 2.0f};
  Session session(testing::quiet_config());
  const NodeNamingInputs inputs;
  session.begin_step(3);
  for (const auto* values : {&finite, &made}) {
    Observation o = testing::output(3, "", "aten::div", *values, {}, std::nullopt);
    o.phase = Phase::backward;
    o.inputs = &inputs;
    session.observe(o);
  }
  session.end_step(3, 1.0);
  EXPECT_EQ(inputs.asked, 1);
  const auto nonfinite = testing::with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].message,
            "aten::div (SqrtBackward0) produced 2 -Inf of 2 values from finite inputs (backward, step 3)");
  EXPECT_TRUE(says(nonfinite[0].suggestion, "the derivative of sqrt at 0")) << nonfinite[0].suggestion;
  const EvidenceValue* node = nonfinite[0].find_evidence("autograd_node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(std::get<std::string>(*node), "SqrtBackward0");
}

// Through the Session: the rule gives the op's reason as its suggestion, and the general advice
// for an op that has none.
TEST(NonfiniteHints, TheProducersSuggestion) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logged{0.5f, -inf};
  const std::vector<float> multiplied{inf, 1.0f};
  for (const bool with_log : {true, false}) {
    Session session(testing::quiet_config());
    session.begin_step(0);
    session.observe(with_log
                        ? testing::output(0, "head", "aten::log", logged, {}, /*inputs_finite=*/true)
                        : testing::output(0, "body", "aten::mm", multiplied, {}, /*inputs_finite=*/true));
    session.end_step(0, std::numeric_limits<double>::infinity());
    const auto nonfinite = testing::with_rule(session.findings(), "nonfinite");
    ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
    EXPECT_TRUE(says(nonfinite[0].suggestion, with_log ? "log of 0" : "check this op's inputs"))
        << nonfinite[0].suggestion;
  }
}

}  // namespace
}  // namespace tfdebug::detail
