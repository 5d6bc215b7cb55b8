// libFuzzer: the run configuration reader (RunConfig::from_text) on arbitrary bytes, as TOML and as
// JSON. It must either throw tfdebug::Error or return a configuration that validates, and whose
// keys all read back (RunConfig::entries), every registered rule's included.
#include <cstdint>
#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"fuzz/tfdebug.toml", "fuzz/tfdebug.json"}) {
    try {
      const tfdebug::RunConfig config = tfdebug::RunConfig::from_text(text, name);
      config.validate();  // what from_text returned has been validated: this must not throw
      (void)config.entries();
    } catch (const tfdebug::Error&) {
    }
  }
  return 0;
}
