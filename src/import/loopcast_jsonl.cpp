// loopcast's own JSONL trace (docs/trace-format.md): a header line, then one request per line.
#include "import/common.hpp"

#include <fmt/format.h>

#include <map>
#include <ostream>

namespace loopcast::detail {

namespace {
bool recognises_loopcast_jsonl(const nlohmann::json& j) { return j.contains("loopcast_trace"); }
recorded_trace import_loopcast_jsonl(const std::string& path);
} // namespace

const importer loopcast_jsonl_importer{trace_format::loopcast, recognises_loopcast_jsonl, import_loopcast_jsonl};

namespace {
recorded_trace import_loopcast_jsonl(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::loopcast;
  issue_log log(t.summary, path);
  std::map<std::string, std::size_t> session_index;
  std::vector<std::string> parents;
  bool header = false;
  std::uint64_t used_lineages = 0;
  for_each_line(path, log, [&](std::int64_t n, std::string_view text) {
    auto parsed = parse_line(text, n, log);
    if (!parsed) return;
    const auto& j = *parsed;
    if (!header) {
      if (!j.is_object() || count_at(j, "loopcast_trace") != 1)
        throw trace_error(path, n, "not a loopcast trace: the first line must be {\"loopcast_trace\": 1, …}");
      header = true;
      for (const char* key : {"absolute_clock", "has_prefix"})
        if (j.contains(key) && !j[key].is_boolean()) throw trace_error(path, n, fmt::format("header: \"{}\" must be true or false", key));
      t.absolute_clock = bool_at(j, "absolute_clock").value_or(false);
      t.has_prefix = bool_at(j, "has_prefix").value_or(false);
      if (j.contains("lineages")) {
        const auto l = count_at(j, "lineages");
        if (!l || *l > 100'000'000) throw trace_error(path, n, "header: \"lineages\" must be a whole number up to 10^8");
        t.lineages = static_cast<std::uint32_t>(*l);
      }
      return;
    }
    ++t.summary.records_read;
    const auto session = string_at(j, "session");
    const auto ts = number_at(j, "t_send");
    const auto te = j.contains("t_end") && j["t_end"].is_null() ? std::optional<double>(unknown_time) : number_at(j, "t_end");
    const auto in = count_at(j, "input"), cr = count_at(j, "cache_read"), cw = count_at(j, "cache_write");
    const auto out = count_at(j, "output"), rs = count_at(j, "reasoning");
    if (!session || !ts || !te) return log.skip(n, "missing field", "session, t_send or t_end");
    if (!in || !cr || !cw || !out || !rs) return log.skip(n, "missing or invalid usage field", "input, cache_read, cache_write, output or reasoning");
    auto [it, fresh] = session_index.try_emplace(*session, t.sessions.size());
    if (fresh) {
      recorded_session s;
      s.id = *session;
      s.file = path;
      t.sessions.push_back(s);
      parents.push_back(string_at(j, "parent").value_or(""));
    }
    recorded_request q;
    q.t_send = *ts;
    q.t_end = *te;
    if (auto tf = number_at(j, "t_first_token")) q.t_first_token = *tf;
    std::int64_t cw_1h = 0;  // optional: 1-hour cache writes
    if (j.contains("cache_write_1h")) {
      const auto c = count_at(j, "cache_write_1h");
      if (!c) return log.skip(n, "missing or invalid usage field", "cache_write_1h");
      cw_1h = *c;
    }
    q.tokens = {*in, *cr, *cw, *out, *rs, cw_1h};
    q.model = model_index(t, string_at(j, "model").value_or("unknown"));
    for (const char* key : {"compaction", "new_context"})
      if (j.contains(key) && !j[key].is_boolean()) return log.skip(n, "invalid field", fmt::format("{} must be true or false", key));
    q.compaction = bool_at(j, "compaction").value_or(false);
    q.new_context = bool_at(j, "new_context").value_or(false);
    if (auto c = number_at(j, "cost_usd")) q.cost_usd = *c;
    if (auto d = number_at(j, "delay_before_s")) q.delay_before_s = *d;
    q.source_line = n;
    if (t.has_prefix) {
      const auto prefix = j.find("prefix");
      if (prefix == j.end() || !prefix->is_array()) return log.skip(n, "missing prefix (the header says has_prefix)");
      for (const auto& r : *prefix)
        if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() ||
            r[0].get<std::uint64_t>() >= t.lineages || r[1].get<std::uint64_t>() > static_cast<std::uint64_t>(max_token_count))
          return log.skip(n, "malformed prefix run", r.dump().substr(0, 160));
      q.runs_begin = static_cast<std::uint32_t>(t.runs.size());
      for (const auto& r : *prefix) {
        t.runs.push_back({r[0].get<std::uint32_t>(), r[1].get<std::int64_t>()});
        used_lineages = std::max<std::uint64_t>(used_lineages, r[0].get<std::uint64_t>() + 1);
      }
      q.runs_count = static_cast<std::uint32_t>(t.runs.size() - q.runs_begin);
    }
    t.sessions[it->second].requests.push_back(q);
  });
  if (!header) throw trace_error(path, 0, "empty file");
  // Lineages no run uses cost memory in every replay: keep the ones the runs need.
  if (t.has_prefix) t.lineages = static_cast<std::uint32_t>(used_lineages);
  for (std::size_t i = 0; i < t.sessions.size(); ++i)
    if (auto it = session_index.find(parents[i]); it != session_index.end())
      t.sessions[i].parent = static_cast<std::int32_t>(it->second);
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
