// The adapter's dispatcher fallback (Note [Interception] in interception.cpp). Private to
// tfdebug::torch.
#pragma once

#include <torch/library.h>

namespace tfdebug::torch::detail {

// Registers the boxed fallback, the view fallthroughs and the unboxed hot ops for kModeKey, once
// per process. Throws tfdebug::Error when the key is taken.
void register_fallback();
// The unboxed kernels of the hottest ops (unboxed_ops.cpp, Note [Unboxed hot ops]).
void register_hot_ops(::torch::Library& library);

}  // namespace tfdebug::torch::detail
