// loopcast — energy and ownership cost of a local deployment (docs/model.md §6).
//
// A local run costs energy × price: the machine draws load_power_w while it serves a request and
// idle_power_w otherwise (set both to the whole machine's draw to charge the wall clock at one
// rate). Hardware can be amortised over its lifetime, per hour of wall clock.
#pragma once

namespace loopcast {

struct power_config {
  double load_power_w = 0;     ///< draw while serving requests, in watts
  double idle_power_w = 0;     ///< draw while waiting for tools or the user, in watts
  double usd_per_kwh = 0;      ///< electricity price, USD per kWh
  double hardware_usd = 0;     ///< purchase price to amortise (0 = none)
  double lifetime_hours = 0;   ///< hours over which the hardware is amortised
};

struct energy_cost {
  double energy_kwh = 0;
  double electricity_usd = 0;
  double amortisation_usd = 0;
  double total_usd() const noexcept { return electricity_usd + amortisation_usd; }
};

/// Energy and cost for `busy_s` seconds of serving within `wall_s` seconds of wall clock.
inline energy_cost local_cost(const power_config& p, double busy_s, double wall_s) noexcept {
  energy_cost c;
  const double idle_s = wall_s > busy_s ? wall_s - busy_s : 0.0;
  c.energy_kwh = (p.load_power_w * busy_s + p.idle_power_w * idle_s) / 3.6e6;
  c.electricity_usd = c.energy_kwh * p.usd_per_kwh;
  if (p.hardware_usd > 0 && p.lifetime_hours > 0)
    c.amortisation_usd = p.hardware_usd * (wall_s / 3600.0) / p.lifetime_hours;
  return c;
}

} // namespace loopcast
