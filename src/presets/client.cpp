// Client presets: retry policies (docs/presets.md).
#include "loopcast/presets.hpp"

#include "presets/readers.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loopcast::detail::preset {

namespace {

void read_retry_after(const node& ra, retry_policy& p) {
  ra.expect_keys({"honour", "cap_s", "over_cap"});
  p.honour_retry_after = ra.at("honour").boolean();
  if (p.honour_retry_after) {
    const auto cap = ra.at("cap_s");
    p.retry_after_cap_s = cap.is_null() ? inf : cap.number_in(0, 1e7);
    if (cap.is_null()) {
      if (ra.has("over_cap")) ra.at("over_cap").fail("over_cap needs a finite cap_s");
    } else {
      p.over_cap = read_enum<over_cap_action>(ra.at("over_cap"));
    }
  } else if (ra.has("cap_s") || ra.has("over_cap")) {
    ra.fail("cap_s and over_cap apply only when honour is true");
  }
}

} // namespace

retry_policy read_client(const node& root) {
  check_kind(root, preset_kind::client);
  // Each part is read even after another failed; the check across parts waits until all were read.
  problems found(root.file());
  found.gather([&] {
    root.expect_keys({LOOPCAST_HEADER_KEYS, "max_retries", "retry_after", "backoff", "give_up_above_s", "agent"});
  });
  retry_policy p;
  found.gather([&] { p.name = read_name(root); });
  found.gather([&] { (void)read_provenance(root); });
  found.gather([&] {
    const auto mr = root.at("max_retries");
    if (mr.is_string()) {
      if (mr.string() != "unbounded") mr.fail(fmt::format("expected a whole number or \"unbounded\", found \"{}\"", mr.string()));
      p.max_retries = -1;
    } else {
      p.max_retries = static_cast<int>(mr.integer(0, 1'000'000));
    }
  });
  found.gather([&] { read_retry_after(root.at("retry_after"), p); });
  found.gather([&] {
    const auto bo = root.at("backoff");
    bo.expect_keys({"base_s", "multiplier", "max_s", "jitter"});
    p.base_s = bo.at("base_s").number_in(0, 1e6);
    p.multiplier = bo.at("multiplier").number_in(1, 100);
    p.max_s = bo.at("max_s").number_in(0, 1e7);
    p.jitter = read_enum<jitter_kind>(bo.at("jitter"));
  });
  found.gather([&] {
    if (auto g = root.find("give_up_above_s")) p.give_up_above_s = g->number_in(0, 1e7);
  });
  found.gather([&] {
    if (auto a = root.find("agent")) {
      a->expect_keys({"max_tokens", "compact_at", "compact_reserve_tokens"});
      if (auto m = a->find("max_tokens")) p.agent_max_tokens = m->integer(1, max_tokens_value);
      if (auto c = a->find("compact_at")) p.agent_compact_at = c->number_in(0.05, 1);
      if (auto r = a->find("compact_reserve_tokens")) p.agent_compact_reserve_tokens = r->integer(1, 100'000'000);
    }
  });
  found.throw_if_any();
  if (p.max_retries < 0 && !p.honour_retry_after && p.give_up_above_s == inf && p.base_s == 0)
    root.fail("this client retries forever without waiting: set max_retries, give_up_above_s or base_s > 0");
  return p;
}

} // namespace loopcast::detail::preset
