#include "tfdebug/robust/recommendations.hpp"

#include <algorithm>
#include <cstdio>

namespace tfdebug::robust {
namespace {

std::string percent(double fraction) {
  return format_measure(100 * fraction) + "%";
}

std::string feature_label(const Measurements& m, std::int64_t j) {
  std::string s = "feature " + std::to_string(j);
  if (j >= 0 && static_cast<std::size_t>(j) < m.feature_names.size())
    s += " (" + m.feature_names[static_cast<std::size_t>(j)] + ")";
  return s;
}

void certification(const Measurements& m, std::vector<Recommendation>& out) {
  const CertificationSummary& c = *m.certification;
  Recommendation r{"certified",
                   "",
                   {{"sigma", c.sigma},
                    {"median_radius", c.median_radius},
                    {"abstain_rate", c.abstain_rate},
                    {"certified_accuracy", c.certified_accuracy}}};
  r.text = "Randomized smoothing at sigma=" + format_measure(c.sigma) + ": median certified L2 radius " +
           format_measure(c.median_radius) + ", abstains on " + percent(c.abstain_rate) + " of " +
           std::to_string(c.inputs) + " inputs, certified accuracy " + percent(c.certified_accuracy) + ". ";
  if (c.abstain_rate > 0.2) {
    r.text +=
        "Abstentions are frequent: the base model is not stable under this noise; lower sigma, or train it "
        "with Gaussian noise augmentation at sigma=" +
        format_measure(c.sigma) + " (Cohen et al.'s recipe).";
  } else {
    r.text +=
        "Inputs perturbed by less than " + format_measure(c.median_radius) +
        " in L2 cannot change the smoothed answer for half of them; a larger sigma certifies larger radii "
        "at some cost in accuracy.";
  }
  out.push_back(std::move(r));
}

void perturbation(const Measurements& m, const PerturbationReport& p, std::vector<Recommendation>& out) {
  const char* kind = perturbation_name(p.kind);
  // The smallest intensity flipping at least 10% of predictions, or the largest tried.
  const PerturbationPoint* at = &p.points.back();
  for (const auto& q : p.points)
    if (q.flip_rate >= 0.1) {
      at = &q;
      break;
    }
  Recommendation r{"perturbation",
                   "",
                   {{"intensity", at->intensity},
                    {"flip_rate", at->flip_rate},
                    {"accuracy", at->accuracy},
                    {"score", p.score}}};
  r.text = std::string(kind) + " at intensity " + format_measure(at->intensity) + " flips " +
           percent(at->flip_rate) + " of predictions (accuracy " + percent(at->accuracy) +
           "; robustness score " + format_measure(p.score) + "). ";
  if (at->flip_rate >= 0.1) {
    r.text += "Train with " + std::string(kind) + " augmentation up to intensity " +
              format_measure(at->intensity) + ", or reject inputs corrupted this much.";
  } else {
    r.text += "Predictions are stable over the intensities tried; test larger ones to find where they break.";
  }
  out.push_back(std::move(r));
  if (!p.hotspots.empty() && p.hotspots.front().flip_rate > 0) {
    const Hotspot& h = p.hotspots.front();
    const std::string unit = p.tokens ? "token " + std::to_string(h.unit) : feature_label(m, h.unit);
    Recommendation s{"hotspot",
                     "",
                     {{"unit", static_cast<double>(h.unit)},
                      {"flip_rate", h.flip_rate},
                      {"intensity", p.points.back().intensity}}};
    s.text = unit + " perturbed alone (" + kind + ", intensity " + format_measure(p.points.back().intensity) +
             ") flips " + percent(h.flip_rate) + " of predictions, the most of any " +
             (p.tokens ? "token" : "feature") +
             ": validate its range at input time, and check whether the model "
             "should depend on it this much.";
    out.push_back(std::move(s));
  }
}

void sweep(const Measurements& m, const FeatureSweep& s, std::vector<Recommendation>& out) {
  if (s.flips.empty()) return;
  const DecisionFlip& f = s.flips.front();
  Recommendation r{"what-if",
                   "",
                   {{"feature", static_cast<double>(s.feature)},
                    {"at", f.at},
                    {"from", static_cast<double>(f.from)},
                    {"to", static_cast<double>(f.to)}}};
  r.text = feature_label(m, s.feature) + " at " + format_measure(f.at) + " changes the decision from class " +
           std::to_string(f.from) + " to " + std::to_string(f.to) + " (" + std::to_string(s.flips.size()) +
           " change" + (s.flips.size() > 1 ? "s" : "") +
           " over the sweep): inputs near this value are decided by it.";
  out.push_back(std::move(r));
}

void edge_cases(const EdgeCaseReport& e, std::vector<Recommendation>& out) {
  const auto n = static_cast<double>(e.margins.size());
  std::int64_t ood = 0;
  for (const double d : e.mahalanobis) ood += d > e.ood_threshold;
  Recommendation r{
      "edge-cases",
      "",
      {{"risky", static_cast<double>(e.risky.size())}, {"inputs", n}, {"margin_cut", e.margin_cut}}};
  r.text = std::to_string(e.risky.size()) + " of " + std::to_string(e.margins.size()) +
           " inputs are flagged risky; the lowest-margin tenth has margins at or below " +
           format_measure(e.margin_cut);
  if (!e.mahalanobis.empty()) {
    r.numbers.emplace_back("out_of_distribution", static_cast<double>(ood));
    r.numbers.emplace_back("ood_threshold", e.ood_threshold);
    r.text += ", and " + std::to_string(ood) + " lie beyond the training rows' Mahalanobis threshold " +
              format_measure(e.ood_threshold) + " on the " + e.distance_space;
  }
  r.text += ". Review the ranked cases first; add data like them to training, or route them to a fallback.";
  out.push_back(std::move(r));
}

}  // namespace

std::string format_measure(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

std::vector<Recommendation> recommend(const Measurements& m) {
  std::vector<Recommendation> out;
  if (m.certification) certification(m, out);
  for (const auto& p : m.perturbations) perturbation(m, p, out);
  for (const auto& s : m.sweeps) sweep(m, s, out);
  if (m.edge_cases) edge_cases(*m.edge_cases, out);
  return out;
}

}  // namespace tfdebug::robust
