// `loopcast presets`: what the models directory holds.
#include "cli.hpp"

#include "loopcast/presets.hpp"

#include <fmt/format.h>

namespace loopcast::cli {

std::vector<command> catalogue_commands(CLI::App& app, const globals& g) {
  std::vector<command> cmds;
  auto* presets = app.add_subcommand("presets", "List the presets in the models directory");
  cmds.push_back({presets, [&g] {
                    const auto lib = library(g);
                    fmt::print("presets in {}\n\n", g.models_dir.empty() ? default_models_dir().string() : g.models_dir);
                    fmt::print("{:<10} {:<36} {}\n", "kind", "name", "description");
                    for (const auto& e : lib.entries())
                      fmt::print("{:<10} {:<36} {}\n", to_string(e.kind), e.name, e.description);
                    return ok;
                  }});
  return cmds;
}

} // namespace loopcast::cli
