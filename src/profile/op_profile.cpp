// Module totals and the bottleneck table of an op profile (tfdebug/profile/op_profile.hpp).
#include "tfdebug/profile/op_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

namespace tfdebug::profile {

std::int64_t OpProfile::total_step_ns() const {
  std::int64_t sum = 0;
  for (auto ns : step_ns) sum += ns;
  return sum;
}

double OpProfile::total_flops() const {
  double sum = 0;
  for (const auto& row : ops) sum += row.flops;
  return sum;
}

std::vector<ModuleStats> module_totals(const std::vector<OpStats>& ops) {
  std::map<std::string, ModuleStats> by_module;
  for (const auto& row : ops) {
    auto& m = by_module[row.module];
    m.module = row.module;
    m.self_ns += row.self_ns;
    m.self_flops += row.flops;
    m.calls += row.calls;
  }
  // Every ancestor path of a module gets a row too ("blocks.0" for "blocks.0.mlp.fc1").
  std::vector<std::string> paths;
  paths.reserve(by_module.size());
  for (const auto& [path, m] : by_module) paths.push_back(path);
  for (const auto& path : paths) {
    for (auto dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
      auto& parent = by_module[path.substr(0, dot)];
      parent.module = path.substr(0, dot);
    }
  }
  for (auto& [path, m] : by_module) {
    for (const auto& [other, o] : by_module) {
      const bool inside = path.empty() || other == path ||
                          (other.size() > path.size() && other.compare(0, path.size(), path) == 0 &&
                           other[path.size()] == '.');
      if (!inside) continue;
      m.total_ns += o.self_ns;
      m.total_flops += o.self_flops;
    }
  }
  std::vector<ModuleStats> out;
  out.reserve(by_module.size());
  for (auto& [path, m] : by_module) out.push_back(m);
  std::stable_sort(out.begin(), out.end(),
                   [](const ModuleStats& a, const ModuleStats& b) { return a.total_ns > b.total_ns; });
  return out;
}

namespace {

bool is_matrix_product(std::string_view op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::baddbmm" ||
         op == "aten::matmul" || op == "aten::linear";
}

bool is_view(std::string_view op) {
  return op == "aten::select" || op == "aten::slice" || op == "aten::view" || op == "aten::as_strided" ||
         op == "aten::transpose" || op == "aten::t" || op == "aten::expand" || op == "aten::unsqueeze" ||
         op == "aten::squeeze" || op == "aten::permute" || op == "aten::_reshape_alias" ||
         op == "aten::alias" || op == "aten::detach" || op == "aten::narrow" || op == "aten::reshape" ||
         op == "aten::_unsafe_view";
}

bool is_data_movement(std::string_view op) {
  return op == "aten::copy_" || op == "aten::contiguous" || op == "aten::clone" || op == "aten::cat" ||
         op == "aten::_to_copy" || op == "aten::index_select" || op == "aten::stack" ||
         op == "aten::embedding" || op == "aten::zero_" || op == "aten::fill_" || op == "aten::to";
}

std::string rate(double flops_per_s) {
  char buf[32];
  if (flops_per_s >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GFLOP/s", flops_per_s / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MFLOP/s", flops_per_s / 1e6);
  }
  return buf;
}

std::string advice(const OpStats& row, double flops_per_s, double best_matmul_rate, std::size_t steps) {
  char buf[512];
  const double per_call_us = double(row.self_ns) / double(std::max<std::uint64_t>(1, row.calls)) / 1e3;
  const double calls_per_step = double(row.calls) / double(std::max<std::size_t>(1, steps));
  if (row.op.substr(0, 6) != "aten::") {
    std::snprintf(
        buf, sizeof buf,
        "the autograd engine's own time around this node, outside the aten ops it ran (%.0f calls/step, "
        "%.1f us each): fewer, larger autograd nodes (fewer small ops in forward) reduce it",
        calls_per_step, per_call_us);
    return buf;
  }
  if (!row.formula) {
    std::snprintf(
        buf, sizeof buf,
        "no FLOP formula for this op, so its arithmetic is unknown; %.0f calls/step at %.1f us each",
        calls_per_step, per_call_us);
    return buf;
  }
  if (is_matrix_product(row.op)) {
    const double per_call = row.flops / double(std::max<std::uint64_t>(1, row.calls));
    if (best_matmul_rate > 0 && flops_per_s < 0.5 * best_matmul_rate) {
      std::snprintf(
          buf, sizeof buf,
          "%.0f kFLOP per call at %.1f us: %.0f%% of the best matrix product's rate here (%s); small "
          "or transposed operands ([%s]) leave the BLAS kernel overhead-bound: batch more rows per "
          "call or fuse this product with its neighbours",
          per_call / 1e3, per_call_us, 100 * flops_per_s / best_matmul_rate, rate(best_matmul_rate).c_str(),
          row.shapes.c_str());
    } else {
      std::snprintf(
          buf, sizeof buf,
          "compute-bound matrix product ([%s], %.0f kFLOP per call): the largest lever is fewer FLOPs "
          "(a smaller layer) or more threads (OMP_NUM_THREADS)",
          row.shapes.c_str(), per_call / 1e3);
    }
    return buf;
  }
  if (is_view(row.op)) {
    std::snprintf(
        buf, sizeof buf,
        "makes views without moving data (%.0f calls/step, %.1f us each), so the time is per-call "
        "dispatch: fewer, larger ops (one batched product instead of a loop over slices, as CPU bmm "
        "does for small batches) remove it",
        calls_per_step, per_call_us);
    return buf;
  }
  if (is_data_movement(row.op) || row.flops == 0) {
    std::snprintf(buf, sizeof buf,
                  "moves data without arithmetic (%.0f calls/step, %.1f us each): look for a .contiguous() "
                  "after a transpose or view, a concatenation or a copy that a different layout avoids",
                  calls_per_step, per_call_us);
    return buf;
  }
  if (row.phase == Phase::optimizer) {
    std::snprintf(
        buf, sizeof buf,
        "the optimizer runs this elementwise op once per parameter tensor (%.0f calls/step, %.1f us "
        "each): a fused or multi-tensor (foreach) optimizer step, or fewer and larger parameter "
        "tensors, removes most of the per-call cost",
        calls_per_step, per_call_us);
    return buf;
  }
  const double per_element_ns = row.flops > 0 ? double(row.self_ns) / row.flops : 0;
  std::snprintf(
      buf, sizeof buf,
      "memory-bound elementwise or normalisation work (%.2f ns per FLOP, %.0f calls/step): fuse it with "
      "the op before or after it, or run it on fewer, larger tensors",
      per_element_ns, calls_per_step);
  return buf;
}

}  // namespace

std::vector<Bottleneck> bottlenecks(const OpProfile& profile, std::size_t k) {
  const double total = double(std::max<std::int64_t>(1, profile.total_step_ns()));
  double best_matmul = 0;
  for (const auto& row : profile.ops) {
    if (is_matrix_product(row.op) && row.self_ns > 0 && row.flops > 0)
      best_matmul = std::max(best_matmul, row.flops / (double(row.self_ns) / 1e9));
  }
  std::vector<const OpStats*> rows;
  for (const auto& row : profile.ops) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const OpStats* a, const OpStats* b) { return a->self_ns > b->self_ns; });
  std::vector<Bottleneck> out;
  for (std::size_t i = 0; i < rows.size() && i < k; ++i) {
    Bottleneck b;
    b.row = rows[i];
    b.share = double(b.row->self_ns) / total;
    b.flops_per_s = b.row->self_ns > 0 ? b.row->flops / (double(b.row->self_ns) / 1e9) : 0;
    char head[256];
    const std::string where = b.row->module.empty() ? std::string("(no module)") : b.row->module;
    if (b.row->flops > 0) {
      std::snprintf(head, sizeof head, "%s in %s (%s): %.1f%% of step, %s: ", b.row->op.c_str(),
                    where.c_str(), std::string(phase_name(b.row->phase)).c_str(), 100 * b.share,
                    rate(b.flops_per_s).c_str());
    } else {
      std::snprintf(head, sizeof head, "%s in %s (%s): %.1f%% of step: ", b.row->op.c_str(), where.c_str(),
                    std::string(phase_name(b.row->phase)).c_str(), 100 * b.share);
    }
    b.text = head + advice(*b.row, b.flops_per_s, best_matmul, profile.step_ns.size());
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace tfdebug::profile
