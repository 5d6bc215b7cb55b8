// libFuzzer: the .npz reader (libzip + read_npy) on arbitrary bytes. It must throw
// tfdebug::Error or return views into memory it owns, proven by a stats pass under ASan.
#include <cstdint>
#include <span>
#include <vector>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<tfdebug::io::NamedTensor> tensors;
  tfdebug::io::detail::OwnedBuffers owned;
  try {
    tfdebug::io::detail::read_npz("fuzz.npz", std::span(reinterpret_cast<const std::byte*>(data), size),
                                  tensors, owned);
  } catch (const tfdebug::Error&) {
    return 0;
  }
  for (const auto& t : tensors) (void)tfdebug::compute_stats(t.view);
  return 0;
}
