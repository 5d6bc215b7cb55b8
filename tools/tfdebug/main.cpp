// tfdebug: the command-line tool. `tfdebug --help` lists the subcommands.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/version.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"tfdebug " TFDEBUG_VERSION_STRING
               " - debugging and understanding transformer models.\n"
               "Finds NaN/Inf, dead and saturated values, range problems for f16/bf16/fp8, and more.",
               "tfdebug"};
  app.set_version_flag("--version", "tfdebug " TFDEBUG_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  tfdebug inspect model.safetensors --target-dtype f16 --fail-on error\n"
      "  tfdebug diff before.safetensors after.safetensors --rtol 1e-3\n"
      "  tfdebug stats weights.bin --dtype bf16 --shape 4096,4096 --target-dtype f8-e4m3\n"
      "  tfdebug trace step.json -o step.speedscope.json\n"
      "  tfdebug regress baseline.json current.json --threshold 5\n"
      "  tfdebug doctor\n"
      "Exit codes: 0 success, 1 findings (--fail-on), differences (diff) or slowdowns (regress),\n"
      "2 bad input.");
  tfdebug::cli::register_inspect(app);
  tfdebug::cli::register_diff(app);
  tfdebug::cli::register_graph(app);
  tfdebug::cli::register_stats(app);
  tfdebug::cli::register_doctor(app);
  tfdebug::cli::register_dtypes(app);
#ifdef TFDEBUG_HAVE_TORCH
  tfdebug::cli::register_demo(app);
#endif
  tfdebug::cli::register_trace(app);
  tfdebug::cli::register_regress(app);
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
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    std::fputs("tfdebug: unexpected failure\n", stderr);
    return 3;
  }
}
