// loopcast — a subscription plan's walls as agent logs record them (docs/plans.md, "Walls"):
// every limit message read, its reset resolved to an instant, classified, and each wall counted
// once however many times it was written.
//
// Claude Code writes a wall as an assistant message of model `<synthetic>` (with "error":
// "rate_limit", "isApiErrorMessage": true and, from 2.1.21x, "apiErrorStatus": 429). The texts
// seen in real logs:
//   "Claude AI usage limit reached|1749924000"                  (legacy: the Unix time it reopens)
//   "You've hit your limit · resets 2pm (Asia/Shanghai)"        (a time: the next one after the message)
//   "You've hit your limit · resets Jan 22, 4pm (Asia/Shanghai)" (a date: a weekly wall)
//   "You've hit your session limit · resets 5:40pm (Europe/Madrid)"
//   "You've hit your weekly limit · resets Sep 17 at 10pm (…)"
//   "You're out of extra usage · resets …"                       (the paid overflow, not a window)
//   "You've hit your monthly spend limit"                        (a spend cap)
//   "5-hour limit reached ∙ resets 3pm", "Your limit will reset at 3pm (America/Bogota)."
// and Codex's "You've hit your usage limit … try again at Jun 18th, 2026 8:41 AM". "Extra usage
// is required for 1M context" is marked the same way but refuses a request for its size: no wall.
#pragma once

#include "loopcast/names.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

/// What a wall closes.
enum class wall_kind : std::uint8_t {
  five_hour,      ///< the 5-hour ("session") window
  weekly,         ///< the weekly window of all models
  weekly_scoped,  ///< a weekly pool of one model family ("Opus limit", "Sonnet limit")
  extra_usage,    ///< the paid overflow past the windows ran out
  spend_cap,      ///< a monthly spend cap (no window: it reopens at the month's turn)
  unknown         ///< a limit message whose window the text does not say
};
template <>
struct enum_names<wall_kind> {
  static constexpr std::array table{enum_entry{wall_kind::five_hour, "five_hour"},
                                    enum_entry{wall_kind::weekly, "weekly"},
                                    enum_entry{wall_kind::weekly_scoped, "weekly_scoped"},
                                    enum_entry{wall_kind::extra_usage, "extra_usage"},
                                    enum_entry{wall_kind::spend_cap, "spend_cap"},
                                    enum_entry{wall_kind::unknown, "unknown"}};
};
/// The length of the window a wall closes, s (0 for walls that close none).
constexpr double wall_period_s(wall_kind k) noexcept {
  return k == wall_kind::five_hour                               ? 5 * 3600.0
         : k == wall_kind::weekly || k == wall_kind::weekly_scoped ? 7 * 86400.0
                                                                  : 0.0;
}

/// One wall as a log wrote it: the request was refused, and (when the text says) the window
/// reopens at `resets_at_unix`.
struct plan_wall {
  double t = 0;  ///< when the message was written, s on the log's clock
  double resets_at_unix = std::numeric_limits<double>::quiet_NaN();  ///< when it reopens; NaN: not said
  wall_kind kind = wall_kind::unknown;
  std::string text;              ///< the message (its first 240 bytes)
  std::int64_t source_line = 0;  ///< line of the message in its log
  std::int32_t copies = 1;       ///< times it was written (dedupe_walls: sidechains, resumed files)

  /// The start of the window it closes: a 5-hour wall's is its reset − 5 h, on the whole hour
  /// (Claude opens windows at the hour); NaN when the reset is not known or it closes no window.
  double window_start() const noexcept;
};

/// A message that reads as a limit message, with why it could not be used (for the import's notes).
struct wall_reading {
  std::optional<plan_wall> wall;  ///< the wall, when the text is one and its reset can be placed
  std::string problem;            ///< otherwise, when it reads as a limit message: why not used
};
/// Reads one message text written at Unix time `t`: a wall (its reset resolved in the zone the
/// text names, else in `default_zone`, "" the machine's), a limit message whose reset cannot be
/// read (`problem`), or neither (both empty: not a limit message at all).
wall_reading read_wall_text(std::string_view text, double t, const std::string& default_zone = "");

/// The walls of one account, each once: walls of one kind whose resets lie within 90 s of each
/// other (or, without a reset, written within 5 minutes) are one wall, at its first writing, its
/// `copies` summed. Sorted by time.
std::vector<plan_wall> dedupe_walls(std::vector<plan_wall> walls);

} // namespace loopcast
