#include "cli_main.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "safe_text.hpp"
#include "suggest.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug::cli {
namespace {

// Every error is one line on stderr, its text terminal-safe (Note [Terminal-safe text]): a
// message may quote a tensor name or a path from the command line.
void report_error(const std::string& message) {
  std::fprintf(stderr, "tfdebug: error: %s\n", terminal_safe(message).c_str());
}

// The subcommand the command line chose, or nullptr.
const CLI::App* chosen_subcommand(const CLI::App& app) {
  const auto chosen = app.get_subcommands();
  return chosen.empty() ? nullptr : chosen.front();
}

std::string command_name(const CLI::App& app) {
  const CLI::App* sub = chosen_subcommand(app);
  return sub == nullptr ? "tfdebug" : "tfdebug " + sub->get_name();
}

// The first argument that is not an option, when it names no subcommand: `tfdebug inspec f`.
// The top-level app's one option with a value is --color (skipped with its value).
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return {};
    if (arg == "--color" || arg == "--colour") {
      ++i;
      continue;
    }
    if (arg.starts_with('-')) continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->check_name(arg)) return {};
      names.push_back(sub->get_name());
    }
    std::string message = "unknown subcommand '" + arg + "'";
    if (const auto near = closest_name(arg, names)) return message + " \u2014 did you mean '" + *near + "'?";
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return message + "; the subcommands are " + list + " (tfdebug --help)";
  }
  return {};
}

// One line for the first argument CLI11 could not place: a mistyped option (with the nearest
// real one), a file whose name starts with '-', or an argument too many.
std::string extras_message(const CLI::App& app) {
  const std::vector<std::string> extras = app.remaining(true);
  const CLI::App* sub = chosen_subcommand(app);
  const std::string command = command_name(app);
  if (extras.empty()) return "unexpected arguments (" + command + " --help)";
  const std::string& arg = extras.front();
  if (!arg.starts_with('-') || arg == "-") {
    return "unexpected argument '" + arg + "' (" + command + " --help lists what it takes)";
  }
  std::vector<std::string> long_names = {"help"};
  const CLI::App& owner = sub == nullptr ? app : *sub;
  for (const CLI::Option* option : owner.get_options()) {
    for (const std::string& name : option->get_lnames()) long_names.push_back(name);
  }
  if (&owner != &app) {  // the top-level options (--color) are taken after a subcommand too
    for (const CLI::Option* option : app.get_options()) {
      for (const std::string& name : option->get_lnames()) long_names.push_back(name);
    }
  }
  std::string message = "unknown option '" + arg + "'";
  if (arg.starts_with("--")) {
    const std::string name =
        arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    if (const auto near = closest_name(name, long_names))
      return message + " \u2014 did you mean '--" + *near + "'?";
  }
  std::error_code ec;
  const bool looks_like_file = std::filesystem::exists(arg, ec) || arg.find('.') != std::string::npos ||
                               arg.find('/') != std::string::npos;
  if (looks_like_file) {
    return message + "; to open a file whose name starts with '-', write `-- " + arg + "` or `./" + arg + "`";
  }
  return message + " (" + command + " --help lists the options)";
}

// Note [Lost output]: a command whose output could not be written (a full disk, a closed pipe
// reader that does not kill us, a quota) must not exit 0: its caller would take the missing
// report for an empty one. Standard output is flushed and checked once, at the end, as the
// commands write it through stdio (std::cout shares its buffer: sync_with_stdio).
bool standard_output_written() {
  // stdio first: std::cout.flush() flushes stdout too, and a second fflush after a failed one
  // reports success with the reason lost.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  std::cout.flush();
  if (flushed && std::ferror(stdout) == 0 && !std::cout.fail()) return true;
  std::fprintf(stderr, "tfdebug: error: cannot write to standard output: %s\n",
               error != 0 ? std::strerror(error) : "write error");
  return false;
}

int finish(int code) {
  return standard_output_written() ? code : 2;
}

// --help and --version through stdio, as the commands print: CLI11 would end them with
// std::endl, whose flush would lose the reason of a failed write (Note [Lost output]).
int print_and_finish(CLI::App& app, const CLI::Error& e) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = app.exit(e, out, err);
  std::fputs(out.str().c_str(), stdout);
  std::fputs(err.str().c_str(), stderr);
  return finish(code);
}

}  // namespace

void describe_app(CLI::App& app) {
  app.description("tfdebug " TFDEBUG_VERSION_STRING
                  " - debugging and understanding transformer models.\n"
                  "Finds NaN/Inf, dead and saturated values, range problems for f16/bf16/fp8, and more.");
  app.name("tfdebug");
  app.set_version_flag("--version", "tfdebug " TFDEBUG_VERSION_STRING);
  app.require_subcommand(1);
  // Before or after the subcommand (fallthrough): `tfdebug --color never inspect f`,
  // `tfdebug inspect f --color never`. Set while parsing, before any command runs.
  app.fallthrough();
  app.add_option_function<std::string>(
         "--color,--colour", [](const std::string& word) { set_colour_choice(parse_colour_choice(word)); },
         "Escape codes for colour: auto (a terminal, TERM not dumb, NO_COLOR unset), always, never")
      ->type_name("WHEN")
      ->default_str("auto");
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
      "2 bad input (or output that could not be written), 3 an internal error (please report it).");
}

int run_cli(CLI::App& app, int argc, char** argv, const int& exit_code) {
  if (argc <= 1) {  // no subcommand: the usage, on stderr, as a usage error
    std::fputs(app.help().c_str(), stderr);
    report_error("a subcommand is required");
    return 2;
  }
  if (const std::string message = unknown_subcommand(app, argc, argv); !message.empty()) {
    report_error(message);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return print_and_finish(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return print_and_finish(app, e);
  } catch (const CLI::CallForVersion& e) {
    return print_and_finish(app, e);
  } catch (const CLI::ExtrasError&) {
    report_error(extras_message(app));
    return 2;
  } catch (const CLI::ParseError& e) {
    // An argument CLI11 could not place (`-weird.safetensors` taken for an option) is the
    // likelier cause than what it then missed ("path is required").
    if (!app.remaining(true).empty()) {
      report_error(extras_message(app));
    } else {
      report_error(std::string(e.what()) + " (" + command_name(app) + " --help)");
    }
    return 2;
  } catch (const tfdebug::Error& e) {
    report_error(e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    report_error(command_name(app) +
                 ": out of memory (an input or option asks for more than this machine has)");
    return 2;
  } catch (const std::system_error& e) {  // filesystem errors name the path; threads, files
    report_error(command_name(app) + ": " + e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tfdebug: internal error in '%s': %s (please report this)\n",
                 terminal_safe(command_name(app)).c_str(), terminal_safe(e.what()).c_str());
    return 3;
  }
  return finish(exit_code);
}

}  // namespace tfdebug::cli
