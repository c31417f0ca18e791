// The simulation's event queue (a 4-ary heap on (time bits, sequence number)): events come out by
// time, ties by sequence number, through push, pop and replace_top.
#include "loopcast/detail/event_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
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
