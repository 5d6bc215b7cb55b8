// Per feature, what one unit of distance is for the counterfactual methods (Wachter, DiCE): its
// median absolute deviation over the training rows, else its standard deviation, else 1.
//
// Note [MAD fallback]: a feature that most rows share one value of has MAD 0; dividing by it is
// what makes DiCE fail (DiCE#227). Its standard deviation still says how far the data spreads;
// only a feature constant over the data falls back to 1.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tfdebug::interpret::detail {

// training: rows of `features` values (row-major); empty gives every scale 1.
std::vector<double> mad_scales(std::span<const float> training, std::size_t features);

}  // namespace tfdebug::interpret::detail
