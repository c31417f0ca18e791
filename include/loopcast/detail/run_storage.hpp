// The state the event loop keeps per session and per held charge, and the storage one run leaves
// for the next (sim_options::storage): a run's buffers — its sessions' states and charges, its
// event queue, its prefix cache, its charge logs and its buckets — are sized by the plans, and a
// caller that runs thousands of runs one after another (Monte Carlo, sweeps, solve, a planning
// tool's loop) hands them from one run to the next instead of allocating them each time. Internal
// to loopcast; simulation.hpp uses it.
#pragma once

#include "loopcast/detail/calendar_queue.hpp"
#include "loopcast/limits/bucket.hpp"
#include "loopcast/prefix_cache.hpp"
#include "loopcast/results.hpp"
#include "loopcast/session.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace loopcast::detail {

// A session's state, hot fields first: what a send and a 429 touch lie in its first two cache lines
// (the pointers, the request's index and attempt, its last prompt split in line 0; its counts and
// stall, `res`, in line 1). The loop reads the current request through `reqs` and `runs` (copied
// from the script, so that no event goes through the script object itself). Its current request's
// charges on each bucket are kept apart (held_charge).
struct session_state {
  const request_spec* reqs = nullptr;  // the script's requests
  const prefix_run* runs = nullptr;    // the script's prefix runs
  std::uint32_t next = 0;              // index of the request being sent
  std::int32_t attempt = 0;            // attempts of the current request so far
  // The current request's last prompt split: its cached tokens (-1: none yet), on which target, and
  // how long that answer holds (prefix_cache::lookup).
  std::int64_t split_tokens = -1;
  cache_hold split_hold;
  std::uint32_t nreq = 0;              // requests in the script
  std::uint8_t on = 0;                 // the route target of the current attempt (always 0 on one target)
  bool spilled = false;                // its next send stays on `on` (a spill), instead of picking afresh
  std::uint8_t split_on = 0;
  bool open_last_run = false;          // the script's (session_script::open_last_run)
  std::uint32_t shared_lineages = 0;   // the script's lineage ids below this are its family's
  std::uint32_t shared_base = 0;       // global id of the script's lineage 0
  std::uint32_t private_base = 0;      // global id of the script's first private lineage
  session_result res;                  // (its counts and stall are what a 429 updates)
  // The request in flight.
  double t_admit = 0, t_first = 0;
  token_counts tokens;
  double cost = 0;
  std::size_t op_row = 0;          // bucket_ops index of its admission charge to bucket 0
  std::size_t attempt_row = 0;     // its timeline row
  // Engine: the single-request prefill and decode times, the KV tokens reserved.
  double prefill_s = 0, decode_work_s = 0;
  std::int64_t kv_tokens = 0;
  std::int64_t spill_cached = 0;   // route: most prompt tokens a refused attempt of the request had cached,
  std::uint8_t cached_from = 0;    // on this target

  const request_spec& request() const noexcept { return reqs[next]; }
};
static_assert(offsetof(session_state, split_on) < 64 && offsetof(session_state, res) + offsetof(session_result, stall_s) < 128,
              "a send's and a 429's fields stay in the first two cache lines");

// A session's request on one bucket: what it is charged at admission and at its end (a refund when
// negative) — worked out at a send and kept while its retries can only repeat them — and, once it
// is in flight, the bucket's ticket for it and where its admission charge sits in the charge log.
// Kept beside the sessions, one per bucket (simulation::held_), so that a session's state stays small.
struct held_charge {
  double at_admission = 0;
  double at_completion = 0;
  std::uint64_t ticket = 0;
  std::size_t log_index = 0;
};

/// What a run leaves for the next one that is given it (sim_options::storage): buffers only, emptied
/// and refilled by each run (what they held before is never read). A run of a route hands back its
/// first target's cache, logs and buckets.
struct run_storage {
  std::vector<session_state> sessions;
  std::vector<held_charge> held;
  std::vector<prefix_run> runs;               // the current request's runs
  std::vector<std::uint32_t> family_base;     // plan_layout's
  std::vector<std::uint64_t> family_shared;   // check_simulation's
  prefix_cache cache;
  calendar_queue queue;
  std::vector<std::vector<charge_event>> log;
  std::vector<bucket> buckets;                // simulate()'s, for its own buckets
};

} // namespace loopcast::detail
