#include "cli_main.hpp"

#include <cstdio>
#include <exception>

#include "tfdebug/core/error.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug::cli {

void describe_app(CLI::App& app) {
  app.description("tfdebug " TFDEBUG_VERSION_STRING
                  " - debugging and understanding transformer models.\n"
                  "Finds NaN/Inf, dead and saturated values, range problems for f16/bf16/fp8, and more.");
  app.name("tfdebug");
  app.set_version_flag("--version", "tfdebug " TFDEBUG_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  tfdebug inspect model.safetensors --target-dtype f16 --fail-on error\n"
      "  tfdebug diff before.safetensors after.safetensors --rtol 1e-3\n"
      "  tfdebug stats weights.bin --dtype bf16 --shape 4096,4096 --target-dtype f8-e4m3\n"
      "  tfdebug trace step.json -o step.speedscope.json\n"
      "  tfdebug regress baseline.json current.json --threshold 5\n"
      "  tfdebug demo --fault log --steps 100 --out runs/log\n"
      "  tfdebug report runs/log --xlsx runs/log.xlsx\n"
      "  tfdebug doctor\n"
      "Exit codes: 0 success, 1 findings (--fail-on), differences (diff) or slowdowns (regress),\n"
      "2 bad input.");
}

int run_cli(CLI::App& app, int argc, char** argv, const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const tfdebug::Error& e) {
    std::fprintf(stderr, "tfdebug: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tfdebug: unexpected failure: %s\n", e.what());
    return 3;
  }
  std::fflush(stdout);
  return exit_code;
}

}  // namespace tfdebug::cli
