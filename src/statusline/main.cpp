// loopcast-statusline: Claude Code's statusline command on its own, a small static program that
// starts in about the time of /bin/true (`loopcast statusline` does the same from the whole tool,
// which takes longer to load). Settings: "statusLine": {"type": "command", "command":
// "loopcast-statusline"} (docs/plans.md, "Statusline snapshots").
#include "statusline/statusline.hpp"
#include "loopcast/version.hpp"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  loopcast::detail::statusline_call call;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-log") {
      call.no_log = true;
    } else if (a == "--log" && i + 1 < argc) {
      call.log = argv[++i];
    } else if (a.rfind("--log=", 0) == 0) {
      call.log = a.substr(6);
    } else if (a == "--version") {
      std::printf("loopcast-statusline %s\n", loopcast::version_string);
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::printf("Usage: loopcast-statusline [--log FILE | --no-log]\n"
                  "Claude Code statusline command: prints the plan's windows read on stdin (rate_limits) and appends\n"
                  "them to FILE (default: $LOOPCAST_STATUSLINE_LOG, else ~/.claude/loopcast-statusline.jsonl).\n");
      return 0;
    } else {
      std::fprintf(stderr, "loopcast-statusline: unknown argument \"%s\" (expected --log FILE or --no-log)\n", argv[i]);
      return 2;
    }
  }
  return loopcast::detail::run_statusline(call, 0, 1, 2);
}
