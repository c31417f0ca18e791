// The logs a command reads: those named, each machine's copy, or this machine's default places —
// one rule for all of them (cli.hpp, read_logs).
#include "cli/cli.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace loopcast::cli {

void add_log_options(CLI::App* cmd, log_args& a, const std::string& formats, bool defaults) {
  auto* logs = cmd->add_option("logs", a.logs,
                               defaults ? "Log files or directories (default: ~/.claude/projects, ~/.codex/sessions, "
                                          "opencode's data; docs/trace-format.md)"
                                        : "Log files or directories");
  if (!defaults) logs->required(false);
  cmd->add_option("--machine", a.machines,
                  "NAME=DIR: the logs copied from another machine (its ~/.claude and ~/.codex, e.g. by rsync); "
                  "repeatable; each response counts once across machines")
      ->type_name("NAME=DIR");
  cmd->add_option("--format", a.format, "Log format (default: detected): " + formats);
  cmd->add_flag("--verbose", a.verbose, "List each file's import too (requests, records, skipped lines)");
}

namespace {
// "NAME=DIR" → (NAME, DIR); a name may not be empty, nor the folder.
std::pair<std::string, std::string> machine_of(const std::string& s) {
  const auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    throw std::invalid_argument(fmt::format("--machine \"{}\": expected NAME=DIR (e.g. laptop=~/copies/laptop)", s));
  return {s.substr(0, eq), s.substr(eq + 1)};
}
} // namespace

logs_read read_logs(const log_args& a, bool defaults) {
  logs_read r;
  r.listing.each_file = a.verbose;
  const auto format = format_of(a.format);
  if (a.logs.empty() && a.machines.empty()) {
    if (!defaults) throw std::invalid_argument("give LOG files or directories (or --machine NAME=DIR)");
    // The front door: every log in the agents' default places.
    const auto places = default_log_locations();
    if (places.empty())
      throw std::invalid_argument("no LOG given, and no agent logs in the default places (~/.config/claude/projects, "
                                  "~/.claude/projects or $CLAUDE_CONFIG_DIR/projects; ~/.codex/sessions or "
                                  "$CODEX_HOME/sessions; ~/.local/share/opencode or $XDG_DATA_HOME/opencode)");
    for (const auto& p : places) r.places.push_back(fmt::format("{} logs in {}", p.agent, p.path.string()));
    r.traces = import_default_logs(places, &r.listing.notes);
    if (r.traces.empty()) throw std::invalid_argument("the default places hold no log with a usable request");
    return r;
  }
  // Each root is a machine: a --machine by its name, a bare LOG by the path given.
  std::vector<machine_root> roots;
  for (const auto& l : a.logs) roots.push_back({l, l});
  for (const auto& m : a.machines) {
    auto [name, dir] = machine_of(m);
    roots.push_back({name, dir});
  }
  r.traces = import_machines(roots, format, &r.listing.notes);
  return r;
}

} // namespace loopcast::cli
