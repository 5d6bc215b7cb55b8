#include <tfdebug/core/stats.hpp>
#include <tfdebug/version.hpp>

#include <cmath>
#include <cstdio>

int main() {
  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f, NAN};
  const tfdebug::Stats s = tfdebug::compute_stats(tfdebug::TensorView(values, tfdebug::DType::f32, {5}));
  std::printf("tfdebug %s count=%lld nan=%lld mean=%g\n", TFDEBUG_VERSION_STRING,
              static_cast<long long>(s.count), static_cast<long long>(s.nan), s.mean);
  return s.count == 5 && s.nan == 1 && s.mean == 2.5 ? 0 : 1;
}
