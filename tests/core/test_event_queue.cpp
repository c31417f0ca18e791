// The simulation's event queue (a calendar queue on (time, sequence number), one event per session):
// events come out by time, ties by sequence number, through push, pop and replace_top; and the
// herd's retry queue.
#include "loopcast/detail/calendar_queue.hpp"
#include "loopcast/detail/event_queue.hpp"
#include "loopcast/detail/retry_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <utility>
#include <vector>

using loopcast::detail::calendar_queue;
using loopcast::detail::event;
using loopcast::detail::event_kind;

TEST(EventQueue, TiesComeOutBySequenceNumber) {
  calendar_queue q;
  q.reserve(10);
  q.push(event{2.0, 0, 7, event_kind::complete});
  q.push(event{1.0, 1, 5, event_kind::send});
  q.push(event{2.0, 2, 3, event_kind::send});
  q.push(event{0.0, 4, 4, event_kind::send});
  q.push(event{0.0, 3, 9, event_kind::decode_start});
  std::vector<std::pair<std::uint32_t, event_kind>> out;
  while (!q.empty()) {
    out.emplace_back(q.top().session, q.top().kind);
    q.pop();
  }
  const std::vector<std::pair<std::uint32_t, event_kind>> want{{9, event_kind::decode_start},
                                                               {4, event_kind::send},
                                                               {5, event_kind::send},
                                                               {7, event_kind::complete},
                                                               {3, event_kind::send}};
  EXPECT_EQ(out, want);
}

// The herd's retries (detail::retry_queue): added one at a time or handed back sorted after a
// batch, they come out of settle() in key order, against an ordered set, with many ties in time.
TEST(RetryQueue, AgreesWithAnOrderedSet) {
  struct payload {
    int value;
  };
  using queue = loopcast::detail::retry_queue<payload>;
  constexpr std::uint32_t sessions = 64;
  queue q;
  q.reserve(sessions, 2);
  std::set<std::pair<double, std::uint64_t>> ref;  // (t, seq)
  std::vector<std::uint32_t> session_of_seq;
  std::vector<bool> waiting(sessions, false);
  std::mt19937_64 g(16);
  std::uint64_t seq = 0;
  double now = 0;
  std::vector<queue::entry> later;
  int batches = 0;
  for (int step = 0; step < 20000; ++step) {
    if (g() % 3 == 0) {  // one session's first 429
      const std::uint32_t s = static_cast<std::uint32_t>(g() % sessions);
      if (waiting[s]) continue;
      const double t = now + static_cast<double>(g() % 8) * 0.25;
      const auto numbers = q.push(t, seq, s, payload{static_cast<int>(seq)});
      ASSERT_EQ(numbers.size(), 2u);
      numbers[0] = t;
      ref.emplace(t, seq);
      session_of_seq.push_back(s);
      ++seq;
      waiting[s] = true;
      continue;
    }
    if (ref.empty()) continue;
    ASSERT_EQ(q.earliest_key(), loopcast::detail::order_key(ref.begin()->first, ref.begin()->second)) << "step " << step;
    // A batch: the first few retries, each scheduled again later (sorted before they go back), up
    // to the first that comes after one of those (as the simulation's batch stops there).
    const auto run = q.settle();
    ASSERT_EQ(run.size(), ref.size());
    std::size_t n = std::min<std::size_t>(run.size(), 1 + g() % 6);
    later.clear();
    double earliest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < n; ++k) {
      if (run[k].time() > earliest) {
        n = k;
        break;
      }
      ASSERT_EQ(run[k].seq, ref.begin()->second) << "step " << step;
      ASSERT_EQ(q.payload(run[k].session).value, static_cast<int>(run[k].seq));
      ASSERT_EQ(q.numbers(run[k].session)[0], run[k].time());
      now = run[k].time();
      ref.erase(ref.begin());
      if (g() % 4 == 0) {  // admitted: it leaves
        waiting[run[k].session] = false;
        continue;
      }
      const double t = now + static_cast<double>(g() % 8) * 0.25;
      earliest = std::min(earliest, t);
      later.push_back(queue::make_entry(t, seq, run[k].session));
      q.payload(run[k].session).value = static_cast<int>(seq);
      q.numbers_of(run[k].session)[0] = t;
      ref.emplace(t, seq);
      ++seq;
    }
    std::sort(later.begin(), later.end(), queue::by_key);
    q.advance(n, later);
    ++batches;
  }
  EXPECT_GT(batches, 5000);
  const auto rest = q.settle();
  ASSERT_EQ(rest.size(), ref.size());
  for (const auto& e : rest) {
    EXPECT_EQ(e.seq, ref.begin()->second);
    ref.erase(ref.begin());
  }
}

// The calendar queue (the simulation's event queue: one event per session at most) against an
// ordered set: pushes, pops and replace_tops on 200 sessions, with times that bunch (ties on a
// grid), spread, jump far ahead (past a year of days) and thin out (the bins shrink), so that it
// rebuilds often; top() and second(), and the kind and hint each event was pushed with, checked at
// every step.
TEST(CalendarQueue, AgreesWithAnOrderedSet) {
  constexpr std::uint32_t sessions = 200;
  calendar_queue q;
  q.reserve(sessions);
  std::set<std::pair<double, std::uint64_t>> ref;  // (t, seq)
  std::vector<std::uint32_t> session_of;           // by seq
  std::vector<event_kind> kind_of_seq;             // by seq
  std::vector<bool> queued(sessions, false);
  const int marks[7] = {};
  auto hint = [&marks](std::uint64_t n) -> const void* { return &marks[n % 7]; };
  std::mt19937_64 g(17);
  std::uint64_t seq = 0;
  double now = 0;
  std::size_t largest_bins = 0, rebuilt_widths = 0;
  double last_width = q.width();
  auto gap = [&](int phase) {
    switch (phase) {
    case 0: return static_cast<double>(g() % 4) * 0.5;                    // a coarse grid: many ties
    case 1: return static_cast<double>(g() % 1000000) * 1e-6;             // spread over a second
    case 2: return static_cast<double>(g() % 8) * 1e4;                    // far ahead
    default: return static_cast<double>(g() % 1000) * 1e-3 + 1e-9 * static_cast<double>(g() % 3);
    }
  };
  for (int step = 0; step < 200000; ++step) {
    const int phase = (step / 5000) % 4;
    const bool fill = (step / 20000) % 2 == 0;  // grow to every session, then drain to a few
    const std::uint32_t s = static_cast<std::uint32_t>(g() % sessions);
    const int op = static_cast<int>(g() % 4);
    if ((op == 0 || ref.empty()) && !queued[s] && (fill || ref.size() < 3)) {
      const double t = now + gap(phase);
      q.push(loopcast::detail::event{t, seq, s, event_kind::send}, hint(seq));
      ref.emplace(t, seq);
      session_of.push_back(s);
      kind_of_seq.push_back(event_kind::send);
      queued[s] = true;
      ++seq;
    } else if (!ref.empty()) {
      const auto [t0, seq0] = *ref.begin();
      ASSERT_EQ(q.top().seq, seq0) << "step " << step;
      ASSERT_EQ(q.top().t, t0);
      ASSERT_EQ(q.top().session, session_of[seq0]);
      ASSERT_EQ(q.hint_of(q.top().session), hint(seq0));
      ASSERT_EQ(q.top().kind, kind_of_seq[seq0]);
      const std::uint32_t second = q.second();
      if (second != calendar_queue::none) {
        ASSERT_GT(ref.size(), 1u);
        const std::uint64_t seq1 = std::next(ref.begin())->second;
        ASSERT_EQ(second, session_of[seq1]) << "step " << step;
        ASSERT_EQ(q.hint_of(second), hint(seq1));
        ASSERT_EQ(q.kind_of(second), kind_of_seq[seq1]);
      }
      now = t0;
      ref.erase(ref.begin());
      const std::uint32_t top = session_of[seq0];
      if (op == 1 || (!fill && ref.size() > 3)) {
        q.pop();
        queued[top] = false;
      } else {  // the session schedules its next event
        const double t = now + gap(phase);
        q.replace_top(loopcast::detail::event{t, seq, top, event_kind::complete}, hint(seq));
        ref.emplace(t, seq);
        session_of.push_back(top);
        kind_of_seq.push_back(event_kind::complete);
        ++seq;
      }
    }
    ASSERT_EQ(q.size(), ref.size());
    largest_bins = std::max(largest_bins, q.bins());
    if (q.width() != last_width) {
      ++rebuilt_widths;
      last_width = q.width();
    }
  }
  EXPECT_GE(largest_bins, 128u);   // it grew with the queue ...
  EXPECT_GT(rebuilt_widths, 10u);  // ... and worked its width out again as the times changed
  while (!ref.empty()) {
    ASSERT_EQ(q.top().seq, ref.begin()->second);
    ref.erase(ref.begin());
    q.pop();
  }
  EXPECT_TRUE(q.empty());
}
