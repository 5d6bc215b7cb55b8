// Recommendations say the measured numbers: each one in the text, formatted as format_measure
// writes it, equals the value measured by the method it comes from.
#include "tfdebug/robust/recommendations.hpp"

#include <gtest/gtest.h>

#include "robust_test_models.hpp"

namespace tfdebug::robust {
namespace {

bool says(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Recommendations, TextStatesTheMeasuredNumbers) {
  auto model = testing::linear_classifier({0.0, 1.0}, -0.1);
  std::vector<float> rows;
  for (int i = 0; i < 20; ++i) {
    rows.push_back(static_cast<float>(i) / 20);
    rows.push_back(static_cast<float>(std::sin(i)));
  }
  PerturbationOptions o;
  o.intensities = {0, 0.1, 0.5};
  o.samples = 50;
  Measurements m;
  m.feature_names = {"a", "b"};
  m.perturbations.push_back(perturbation_test(model, rows, {}, o));
  m.sweeps.push_back(sweep_feature(model, std::span<const float>(rows).first(2), 1, {-1, 0, 1}));
  m.certification = CertificationSummary{0.25, 20, 0.05, 0.9, 0.123};
  const auto recs = recommend(m);
  ASSERT_EQ(recs.size(), 4u);  // certified, perturbation, hotspot, what-if

  EXPECT_EQ(recs[0].topic, "certified");
  EXPECT_TRUE(says(recs[0].text, "sigma=0.25")) << recs[0].text;
  EXPECT_TRUE(says(recs[0].text, "median certified L2 radius 0.123"));
  EXPECT_TRUE(says(recs[0].text, "abstains on 5% of 20 inputs"));

  const PerturbationReport& p = m.perturbations[0];
  const PerturbationPoint* at = &p.points.back();
  for (const auto& q : p.points)
    if (q.flip_rate >= 0.1) {
      at = &q;
      break;
    }
  EXPECT_EQ(recs[1].topic, "perturbation");
  EXPECT_TRUE(says(recs[1].text, "gaussian at intensity " + format_measure(at->intensity) + " flips " +
                                     format_measure(100 * at->flip_rate) + "%"))
      << recs[1].text;
  EXPECT_EQ(recs[1].numbers[1].second, at->flip_rate);
  EXPECT_TRUE(says(recs[1].text, "robustness score " + format_measure(p.score)));

  EXPECT_EQ(recs[2].topic, "hotspot");
  EXPECT_TRUE(says(recs[2].text, "feature 1 (b)")) << recs[2].text;
  EXPECT_TRUE(says(recs[2].text, format_measure(100 * p.hotspots[0].flip_rate) + "%"));
  EXPECT_EQ(recs[2].numbers[1].second, p.hotspots[0].flip_rate);

  EXPECT_EQ(recs[3].topic, "what-if");
  EXPECT_TRUE(says(recs[3].text, "at " + format_measure(m.sweeps[0].flips[0].at)));
  EXPECT_NEAR(m.sweeps[0].flips[0].at, 0.1, 1e-6);
}

}  // namespace
}  // namespace tfdebug::robust
