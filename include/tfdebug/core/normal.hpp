// The standard normal distribution's CDF and quantile, shared by the statistics that need them
// (profile's regression tests: confidence intervals) and the samplers (interpret's LIME:
// truncated normals by inverting the CDF).
//
//   const double z = tfdebug::normal_quantile(0.975, /*refine=*/true);  // 1.959963984540054
#pragma once

namespace tfdebug {

// P(Z <= z).
double normal_cdf(double z);

// The p-quantile, p in (0, 1) (clamped to it): Acklam's rational approximation, relative error
// below 1.2e-9 and a few multiplications in the body of the distribution; `refine` adds one
// Halley step on erfc (about 1e-15 relative, an erfc and an exp more).
double normal_quantile(double p, bool refine);

}  // namespace tfdebug
