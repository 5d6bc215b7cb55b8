#include "json_output.hpp"

#include <cmath>

namespace tfdebug::cli {

nlohmann::json json_number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json to_json(const TargetFit& fit) {
  return {{"dtype", std::string(dtype_name(fit.dtype))},
          {"range_used", json_number(fit.range_used)},
          {"overflow", fit.overflow},
          {"underflow", fit.underflow},
          {"subnormal", fit.subnormal},
          {"overflow_fraction", json_number(fit.overflow_fraction)},
          {"underflow_fraction", json_number(fit.underflow_fraction)}};
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
                      {"min", json_number(s.min)},
                      {"max", json_number(s.max)},
                      {"abs_max", json_number(s.abs_max)},
                      {"min_abs_nonzero", json_number(s.min_abs_nonzero)},
                      {"mean", json_number(s.mean)},
                      {"variance", json_number(s.variance)},
                      {"std", json_number(s.std)},
                      {"l1", json_number(s.l1)},
                      {"l2", json_number(s.l2)},
                      {"range_used", json_number(s.range_used)}};
  if (s.target) j["target"] = to_json(*s.target);
  return j;
}

nlohmann::json to_json(const EvidenceValue& value) {
  if (const double* x = std::get_if<double>(&value)) {
    if (std::isfinite(*x) && std::trunc(*x) == *x && std::abs(*x) < 9007199254740992.0)
      return static_cast<std::int64_t>(*x);
    return json_number(*x);
  }
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) return *list;
  return std::get<std::string>(value);
}

nlohmann::json to_json(const Histogram& h) {
  nlohmann::json edges = nlohmann::json::array();
  for (double e : h.edges) edges.push_back(json_number(e));
  return {{"edges", edges}, {"counts", h.counts},   {"below", h.below},    {"above", h.above},
          {"nan", h.nan},   {"pos_inf", h.pos_inf}, {"neg_inf", h.neg_inf}};
}

}  // namespace tfdebug::cli
