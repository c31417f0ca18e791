// Simulates a target built in code with the installed header-only core (loopcast::core) alone.
#include <loopcast/core.hpp>

#include <iostream>
#include <vector>

int main() {
  loopcast::target t;
  t.name = "hand";
  loopcast::bucket_config rpm;
  rpm.name = "rpm";
  rpm.unit = loopcast::bucket_unit::requests;
  rpm.limit = 1;
  rpm.period_s = 60;
  t.limits.push_back(rpm);
  t.speed.decode = loopcast::constant_curve{0.01};
  loopcast::session_script s;
  s.source = "two requests";
  s.requests.resize(2);
  for (auto& r : s.requests) r.output_tokens = 100;
  const std::vector<loopcast::session_plan> plans{{&s, 0.0, 1, 0}};
  // One request per minute: the second, sent at 1 s, waits until 60 s.
  const auto r = loopcast::simulate(t, loopcast::retry_policy{}, plans);
  std::cout << "first 429 on " << r.first_429->bucket_name << " at " << r.first_429->time_s << " s, ends at "
            << r.sessions.at(0).end_s << " s\n";
  return 0;
}
