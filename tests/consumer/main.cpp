// Runs the installed reference scenario from the installed presets (argv[1] = models directory).
#include <loopcast/loopcast.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer MODELS_DIR\n";
    return 2;
  }
  try {
    const loopcast::preset_library lib({argv[1]});
    const auto scn = lib.load_scenario("reference");
    const auto res = loopcast::run_scenario(scn);
    const auto& cloud = res.options.at(0);
    std::cout << "options " << res.options.size() << "\n";
    std::cout << "first 429 bucket " << cloud.sim.first_429->bucket_name
              << "\n";
    std::cout << "outcome " << loopcast::to_string(cloud.sim.sessions.at(0).outcome) << "\n";
  } catch (const loopcast::error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
