// Spectral health of a weight matrix by power iteration: the largest singular value and the
// stable rank, cheap enough to run every few steps (no SVD).
//
//   tfdebug::SpectralEstimate e = tfdebug::estimate_spectral_norm(weight_view);
//   e.spectral_norm;   // sigma_max, agrees with numpy.linalg.norm(W, 2) to ~1e-6 relative
//   e.stable_rank;     // ||W||_F^2 / sigma_max^2, in [1, min(rows, cols)]
//
// A view of rank > 2 is treated as [shape(0), product of the rest] (PyTorch's convention for
// convolution weights). Any floating dtype; strided views are copied to f32 first.
#pragma once

#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct SpectralOptions {
  int max_iterations = 100;
  double tolerance = 1e-6;  // stop when sigma changes by less than this, relatively
  // Start vector (length = columns); empty or of the wrong length: a fixed pseudo-random one.
  std::vector<double> start;
};

struct SpectralEstimate {
  double spectral_norm = 0;
  double frobenius_norm = 0;
  double stable_rank = 0;  // 0 for an all-zero matrix
  int iterations = 0;
  bool converged = false;
  std::vector<double> right_vector;  // the last right singular vector estimate (warm start)
};

// Throws tfdebug::Error for a rank < 2 view, a non-floating dtype or non-finite values.
SpectralEstimate estimate_spectral_norm(TensorView matrix, const SpectralOptions& options = {});

}  // namespace tfdebug
