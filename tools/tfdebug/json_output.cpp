#include "json_output.hpp"

#include <cmath>

namespace tfdebug::cli {
namespace {

nlohmann::json number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const TargetFit& fit) {
  return {{"dtype", std::string(dtype_name(fit.dtype))},
          {"headroom", number(fit.headroom)},
          {"overflow", fit.overflow},
          {"underflow", fit.underflow},
          {"subnormal", fit.subnormal},
          {"overflow_fraction", number(fit.overflow_fraction)},
          {"underflow_fraction", number(fit.underflow_fraction)}};
}

nlohmann::json to_json(const Stats& s) {
  nlohmann::json j = {{"count", s.count},
                      {"nan", s.nan},
                      {"pos_inf", s.pos_inf},
                      {"neg_inf", s.neg_inf},
                      {"zero", s.zero},
                      {"subnormal", s.subnormal},
                      {"negative", s.negative},
                      {"positive", s.positive},
                      {"min", number(s.min)},
                      {"max", number(s.max)},
                      {"abs_max", number(s.abs_max)},
                      {"min_abs_nonzero", number(s.min_abs_nonzero)},
                      {"mean", number(s.mean)},
                      {"variance", number(s.variance)},
                      {"std", number(s.std)},
                      {"l1", number(s.l1)},
                      {"l2", number(s.l2)},
                      {"headroom", number(s.headroom)}};
  if (s.target) j["target"] = to_json(*s.target);
  return j;
}

nlohmann::json to_json(const Histogram& h) {
  nlohmann::json edges = nlohmann::json::array();
  for (double e : h.edges) edges.push_back(number(e));
  return {{"edges", edges}, {"counts", h.counts},   {"below", h.below},    {"above", h.above},
          {"nan", h.nan},   {"pos_inf", h.pos_inf}, {"neg_inf", h.neg_inf}};
}

}  // namespace tfdebug::cli
