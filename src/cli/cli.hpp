// The loopcast command: shared helpers and the commands' registration. Internal to the CLI.
//
// Each commands_*.cpp adds its subcommands to the app and returns what to run when one of them
// was given; main.cpp parses, runs it and maps exceptions to exit codes.
#pragma once

#include "loopcast/presets.hpp"
#include "loopcast/report/logs.hpp"
#include "loopcast/trace.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

namespace loopcast::cli {

enum exit_code : int { ok = 0, sim_failed = 1, usage = 2, bad_input = 3, cannot_write = 4 };

/// An output file could not be written (exit code 4).
struct output_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Options every command sees.
struct globals {
  std::string models_dir;  ///< --models (empty: the default)
  bool quiet = false;      ///< --quiet: no progress line
  std::uint64_t attempt_budget = 0;  ///< --attempt-budget: each run's (0: the scenario's)
};

/// Draws the progress of long work on stderr when it is a terminal (and not `quiet`): count,
/// rate and ETA, once the work has run $LOOPCAST_PROGRESS_AFTER_S seconds (default 2).
void install_progress_bar(bool quiet);

/// A subcommand and what it does once parsed.
struct command {
  CLI::App* app;
  std::function<int()> run;
};

/// A finite number from lo to hi (CLI11's Range lets NaN through: every comparison with it is false).
CLI::Validator finite_range(double lo, double hi);
/// A time zone given on the command line: not empty (an empty one would mean the machine's silently).
CLI::Validator time_zone_given();
/// A whole number from 0 to 2^64 − 1 written in decimal digits (no sign, no wrap-around).
CLI::Validator seed_digits();
/// One of an enumeration's spellings (names.hpp).
template <named_enum E>
CLI::IsMember member_of() {
  const auto names = enum_spellings<E>();
  return CLI::IsMember(std::vector<std::string>(names.begin(), names.end()));
}

preset_library library(const globals& g);
/// A scenario, target, client or workload given as a preset name or a .json file.
/// A scenario file or preset name, with the command line's --attempt-budget applied.
scenario scenario_ref(const globals& g, const preset_library& lib, const std::string& ref);
target target_ref(const preset_library& lib, const std::string& ref);
retry_policy client_ref(const preset_library& lib, const std::string& ref);
workload workload_ref(const preset_library& lib, const std::string& ref);
/// Applies `--limit BUCKET=N` settings to the targets that have the bucket; a bucket that none of
/// them has, a malformed setting or a bad number is an invalid_argument naming it.
void set_bucket_limits(std::span<target* const> targets, const std::vector<std::string>& settings);
/// Refuses (invalid_argument) a target with a bucket whose limit is unpublished and still unset.
void check_limits_set(std::span<target* const> targets);
/// Writes text to a file, or to stdout for "-": never to one of `inputs` (check_not_an_input),
/// through a temporary file beside the target renamed over it (through symlinks to their target,
/// keeping its mode; a file with other hard links is rewritten in place after the copy; a device or
/// pipe is written in place), every write and the close checked. Throws output_error (exit code 4).
void write_output(const std::string& path, const std::string& text, const std::vector<std::string>& inputs = {});
/// The same, the text written to the stream as `write` produces it (a timeline of millions of rows
/// is never held as one string); `write` may be called twice (a file with other hard links).
void write_output(const std::string& path, const std::function<void(std::ostream&)>& write,
                  const std::vector<std::string>& inputs = {});
/// Throws output_error when `path` is the same file as one of `inputs` (files, or folders whose
/// files are all inputs: logs, --models).
void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs);
/// `inputs` and what every command may read besides: the presets' folder (--models or the
/// bundled one) and $LOOPCAST_PRICE_LIST.
std::vector<std::string> with_library_inputs(const globals& g, std::vector<std::string> inputs);

/// A --format value (empty: detect); invalid_argument naming the spellings for another.
trace_format format_of(const std::string& name);

/// What a command that reads logs is given: LOG paths, --machine NAME=DIR, --format, --verbose.
struct log_args {
  std::vector<std::string> logs, machines;
  std::string format;
  bool verbose = false;
};
/// Adds the `logs` positional (optional where `defaults`: this machine's default places) and
/// --machine, --format and --verbose.
void add_log_options(CLI::App* cmd, log_args& a, const std::string& formats, bool defaults);
/// The logs read, with what their reports say of them.
struct logs_read {
  std::vector<recorded_trace> traces;
  logs_listing listing;
  std::vector<std::string> places;  ///< the default places read ("claude-code logs in DIR"), when none was named
};
/// Reads the logs named and each machine's (a bare LOG is a machine named by its path), or, with
/// none and `defaults`, this machine's default places; every file by one rule (import_machines).
logs_read read_logs(const log_args& a, bool defaults);

std::vector<command> simulation_commands(CLI::App& app, const globals& g);  // run, montecarlo, sweep, solve
std::vector<command> log_commands(CLI::App& app, const globals& g);         // stats, replay, watch, fit, convert
/// `watch` and `watch --backtest` (commands_watch.cpp), registered among the log commands.
void add_watch_command(CLI::App& app, const globals& g, const std::string& formats, std::vector<command>& cmds);
std::vector<command> catalogue_commands(CLI::App& app, const globals& g);   // presets

} // namespace loopcast::cli
