// profile.json (profile_json.hpp).
#include "profile_json.hpp"

#include <algorithm>

namespace tfdebug::cli {
namespace {

double rate(double flops, std::int64_t ns) {
  return ns > 0 ? flops / (double(ns) / 1e9) : 0.0;
}

}  // namespace

nlohmann::json profile_to_json(const profile::OpProfile& p, std::size_t top_k) {
  using nlohmann::json;
  const auto steps = p.step_ns.size();
  const auto total_ns = p.total_step_ns();
  const double seconds = double(total_ns) / 1e9;
  json doc;
  doc["format"] = kProfileFormat;
  doc["version"] = 1;
  doc["steps"] = steps;
  doc["step_ns"] = p.step_ns;
  doc["flops_per_step"] = steps ? p.total_flops() / double(steps) : 0.0;
  doc["flops_per_s"] = rate(p.total_flops(), total_ns);
  doc["samples_per_step"] = p.samples_per_step;
  doc["tokens_per_step"] = p.tokens_per_step;
  doc["samples_per_s"] = seconds > 0 ? p.samples_per_step * double(steps) / seconds : 0.0;
  doc["tokens_per_s"] = seconds > 0 ? p.tokens_per_step * double(steps) / seconds : 0.0;
  doc["ops_seen"] = p.ops_seen;
  doc["rows_overflowed"] = p.rows_overflowed;
  doc["trace_evicted"] = p.trace_evicted;
  doc["callback_failures"] = p.callback_failures;
  json ops = json::array();
  for (const auto& r : p.ops) {
    ops.push_back({{"op", r.op},
                   {"module", r.module},
                   {"phase", std::string(phase_name(r.phase))},
                   {"shapes", r.shapes},
                   {"calls", r.calls},
                   {"self_ns", r.self_ns},
                   {"total_ns", r.total_ns},
                   {"flops", r.flops},
                   {"formula", r.formula},
                   {"flops_per_s", rate(r.flops, r.self_ns)},
                   {"alloc_bytes", r.alloc_bytes},
                   {"allocations", r.allocations}});
  }
  doc["ops"] = std::move(ops);
  json modules = json::array();
  for (const auto& m : p.modules) {
    modules.push_back({{"module", m.module},
                       {"self_ns", m.self_ns},
                       {"total_ns", m.total_ns},
                       {"self_flops", m.self_flops},
                       {"total_flops", m.total_flops},
                       {"flops_per_s", rate(m.total_flops, m.total_ns)},
                       {"calls", m.calls}});
  }
  doc["modules"] = std::move(modules);
  json uncounted = json::array();
  for (const auto& u : p.uncounted)
    uncounted.push_back({{"op", u.op}, {"calls", u.calls}, {"self_ns", u.self_ns}});
  doc["uncounted"] = std::move(uncounted);
  json series = json::array();
  for (const auto& s : p.series) series.push_back({{"op", s.op}, {"step_self_ns", s.step_self_ns}});
  doc["series"] = std::move(series);
  json bottlenecks = json::array();
  for (const auto& b : profile::bottlenecks(p, top_k)) {
    bottlenecks.push_back({{"op", b.row->op},
                           {"module", b.row->module},
                           {"phase", b.row->phase},
                           {"shapes", b.row->shapes},
                           {"share", b.share},
                           {"flops_per_s", b.flops_per_s},
                           {"text", b.text}});
  }
  doc["bottlenecks"] = std::move(bottlenecks);
  const auto& m = p.memory;
  json timeline = json::array();
  for (const auto& point : m.timeline) timeline.push_back({point.ts_ns, point.live_bytes});
  json alive = json::array();
  for (const auto& a : m.alive_at_step_end) {
    alive.push_back(
        {{"step", a.step}, {"op", a.op}, {"module", a.module}, {"count", a.count}, {"bytes", a.bytes}});
  }
  doc["memory"] = {{"reported", m.reported},
                   {"allocations", m.allocations},
                   {"frees", m.frees},
                   {"allocated_bytes", m.allocated_bytes},
                   {"peak_bytes", m.peak_bytes},
                   {"peak_ts_ns", m.peak_ts_ns},
                   {"peak_step", m.peak_step},
                   {"peak_op", m.peak_op},
                   {"peak_module", m.peak_module},
                   {"peak_phase", std::string(phase_name(m.peak_phase))},
                   {"end_bytes", m.end_bytes},
                   {"timeline", std::move(timeline)},
                   {"alive_at_step_end", std::move(alive)},
                   {"rss_bytes", m.rss_bytes},
                   {"malloc_in_use_bytes", m.malloc_in_use_bytes},
                   {"malloc_mmap_bytes", m.malloc_mmap_bytes}};
  return doc;
}

bool is_profile_json(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("format") && doc["format"] == kProfileFormat;
}

}  // namespace tfdebug::cli
