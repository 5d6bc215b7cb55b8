#include <tfdebug/core/stats.hpp>
#include <tfdebug/session/probe.hpp>
#include <tfdebug/session/session.hpp>
#include <tfdebug/version.hpp>

#include <cmath>
#include <cstdio>

int main() {
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f, NAN};
  const tfdebug::TensorView view(values, tfdebug::DType::f32, {5});
  const tfdebug::Stats s = tfdebug::compute_stats(view);
  // tfdebug::session: a probe reports the op that produced the NaN.
  tfdebug::Session session;
  tfdebug::Probe probe(session);
  probe.begin_step(0);
  probe.observe("model.log", tfdebug::Phase::forward, view, std::optional<bool>(true));
  probe.end_step();
  const auto findings = session.findings();
  std::printf("tfdebug %s count=%lld nan=%lld mean=%g finding=%s\n", TFDEBUG_VERSION_STRING,
              static_cast<long long>(s.count), static_cast<long long>(s.nan), s.mean,
              findings.empty() ? "none" : findings[0].rule.c_str());
  return s.count == 5 && s.nan == 1 && s.mean == 2.5 && findings.size() == 1 ? 0 : 1;
}
