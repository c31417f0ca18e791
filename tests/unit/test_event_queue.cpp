// The simulation's event queue (a 4-ary heap on (time bits, sequence number)): events come out by
// time, ties by sequence number, through push, pop and replace_top; and the herd's retry queue.
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

using loopcast::detail::event;
using loopcast::detail::event_kind;
using loopcast::detail::event_queue;

TEST(EventQueue, TiesComeOutBySequenceNumber) {
  event_queue q;
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

// Against an ordered set on (time, sequence number): random pushes, pops and replace_tops with
// times on a coarse grid (many ties, so the sequence number decides often), checking top(),
// second() and the size at every step.
TEST(EventQueue, AgreesWithAnOrderedSet) {
  event_queue q;
  std::set<std::pair<double, std::uint64_t>> ref;  // (t, seq); the session is the sequence number
  std::mt19937_64 g(15);
  std::uint64_t seq = 0;
  double now = 0;
  auto make = [&](double t) { return event{t, seq, static_cast<std::uint32_t>(seq), event_kind::send}; };
  for (int step = 0; step < 20000; ++step) {
    const int op = static_cast<int>(g() % 3);
    const double t = now + static_cast<double>(g() % 4) * 0.5;  // never before the current time
    if (op == 0 || ref.empty()) {
      q.push(make(t));
      ref.emplace(t, seq++);
      continue;
    }
    ASSERT_EQ(q.top().seq, ref.begin()->second) << "step " << step;
    ASSERT_EQ(q.top().t, ref.begin()->first);
    const event* second = q.second();
    ASSERT_EQ(second != nullptr, ref.size() > 1);
    if (second) {
      ASSERT_EQ(second->seq, std::next(ref.begin())->second) << "step " << step;
    }
    now = ref.begin()->first;
    ref.erase(ref.begin());
    if (op == 1) {
      q.pop();
    } else {
      const double t2 = now + static_cast<double>(g() % 4) * 0.5;
      q.replace_top(make(t2));
      ref.emplace(t2, seq++);
    }
    ASSERT_EQ(q.size(), ref.size());
  }
  while (!ref.empty()) {
    ASSERT_EQ(q.top().seq, ref.begin()->second);
    ref.erase(ref.begin());
    q.pop();
  }
  EXPECT_TRUE(q.empty());
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
