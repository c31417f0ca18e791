// kv-cache-tester trace JSON (callanjfox/kv-cache-tester, traces/trace_NNNN.json).
//
// Conventions converted here:
// - Per request: t (s from the trace start; a subagent's requests from the subagent's t), in
//   (prompt tokens), out (generated tokens, thinking included), hash_ids (one id per block_size
//   tokens of the prompt, the prefix structure), api_time (s), optional ttft (s), think_time (s).
//   Records without api_time (the proxy saw no response timing) keep their tokens but have no
//   end time.
// - Timing: t is the recorded send. think_time is measured from the end of the last request
//   that has an api_time, so after an untimed request it spans that request too; it is not used.
//   The agent time before a request is t − (previous t + previous api_time), or t − previous t
//   after an untimed request (whose duration is unknown and taken as 0 by `recorded` replays).
// - The recorded cache hit is not in the trace: cache_read is what an ideal cache (no expiry)
//   holds, the longest prefix of hash_ids that an earlier request already sent, in whole blocks.
// - The hash-id sequences form a trie; each branch becomes a lineage, so a replay's prefix cache
//   sees exactly which blocks two requests share.
// - Nested subagents are parallel sessions whose parent is the main session.
#include "import/common.hpp"
#include "import/simd.hpp"

#include <fmt/format.h>

#include <unordered_map>

namespace loopcast::detail {

namespace {

struct trie {
  static constexpr std::uint32_t none = UINT32_MAX;
  struct node {
    std::uint32_t lineage;
    std::uint32_t first_slot = none;   // the hash slot of its first child (none: a leaf)
    std::uint32_t first_child = none;  // that child; later children are in `children`
  };
  std::vector<node> nodes{{0}};  // node 0: the empty prefix
  std::unordered_map<std::uint64_t, std::uint32_t> children;  // (parent << 32 | hash slot) → a later child
  // Hash ids → dense slots: small ids (traces number their blocks 1, 2, 3, …) by index, others by map.
  static constexpr std::int64_t dense_ids = 1 << 22;
  std::vector<std::uint32_t> dense_slot;
  std::unordered_map<std::int64_t, std::uint32_t> sparse_slot;
  std::uint32_t slots = 0;
  std::uint32_t lineages = 0;

  std::uint32_t slot(std::int64_t h) {
    if (h >= 0 && h < dense_ids) {
      const auto i = static_cast<std::size_t>(h);
      if (i >= dense_slot.size()) dense_slot.resize(std::max(i + 1, 2 * dense_slot.size()), none);
      if (dense_slot[i] == none) dense_slot[i] = slots++;
      return dense_slot[i];
    }
    const auto [it, added] = sparse_slot.try_emplace(h, slots);
    if (added) ++slots;
    return it->second;
  }
  // The child of `parent` for hash h, created if new; `created` tells whether it was. Most walks
  // follow first children (a session extends its own prompt), which need no map lookup.
  std::uint32_t child(std::uint32_t parent, std::int64_t h, bool& created) {
    const std::uint32_t sl = slot(h);
    created = false;
    if (nodes[parent].first_slot == sl) return nodes[parent].first_child;
    const bool leaf = nodes[parent].first_slot == none;
    const std::uint64_t key = (static_cast<std::uint64_t>(parent) << 32) | sl;
    if (!leaf)
      if (auto it = children.find(key); it != children.end()) return it->second;
    created = true;
    // The first child continues its parent's lineage; a later one (a branch) starts a new one.
    const std::uint32_t lineage = parent != 0 && leaf ? nodes[parent].lineage : lineages++;
    const auto id = static_cast<std::uint32_t>(nodes.size());
    nodes.push_back({lineage});
    if (leaf) {
      nodes[parent].first_slot = sl;
      nodes[parent].first_child = id;
    } else {
      children.emplace(key, id);
    }
    return id;
  }
};

} // namespace

namespace {
bool recognises_kv_cache_tester(const nlohmann::json& j) { return j.contains("requests") && j.contains("block_size"); }
recorded_trace import_kv_cache_tester(const std::string& path);
} // namespace

const importer kv_cache_tester_importer{trace_format::kv_cache_tester, recognises_kv_cache_tester,
                                        import_kv_cache_tester};

namespace {

// The members of one object that the importer reads. Every member is visited once, and a key
// given twice keeps its last value, as the JSON reader of the other formats does.
struct members {
  std::optional<dom::element> t, in, out, api_time, ttft, hash_ids, model, type, requests, agent_id, block_size,
      output_types;

  explicit members(dom::element e) {
    dom::object o;
    if (e.get_object().get(o)) return;  // not an object: every member absent
    for (const auto field : o) {
      const std::string_view k = field.key;
      auto* slot = k == "t"           ? &t
                   : k == "in"        ? &in
                   : k == "out"       ? &out
                   : k == "hash_ids"  ? &hash_ids
                   : k == "api_time"  ? &api_time
                   : k == "ttft"      ? &ttft
                   : k == "model"     ? &model
                   : k == "type"      ? &type
                   : k == "requests"  ? &requests
                   : k == "agent_id"  ? &agent_id
                   : k == "block_size" ? &block_size
                   : k == "output_types" ? &output_types
                                       : nullptr;
      if (slot) *slot = field.value;
    }
  }
};

// What the response held, from output_types (["thinking", "text", "tool_use"]; others ignored).
std::uint8_t output_kinds_of(const std::optional<dom::element>& types) {
  dom::array a;
  if (!types || types->get_array().get(a)) return 0;
  std::uint8_t kinds = 0;
  for (const dom::element e : a) {
    const auto k = string_of(e);
    if (!k) continue;
    if (*k == "thinking") kinds |= output_thinking;
    else if (*k == "text") kinds |= output_text;
    else if (*k == "tool_use") kinds |= output_tool_use;
  }
  return kinds;
}

recorded_trace import_kv_cache_tester(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::kv_cache_tester;
  t.has_prefix = true;
  issue_log log(t.summary, path);
  thread_local document_reader rd;
  const members doc(rd.parse(path));
  dom::array requests;
  if (!doc.requests || doc.requests->get_array().get(requests))
    throw trace_error(path, 0, "not a kv-cache-tester trace (no \"requests\" array)");
  const auto block = count_of(doc.block_size);
  if (!block || *block == 0 || *block > max_block_tokens)
    throw trace_error(path, 0, fmt::format("missing or invalid \"block_size\" (a whole number of tokens from 1 to {})",
                                           max_block_tokens));
  const std::int64_t B = *block;
  trie tr;

  auto add_request = [&](const members& r, double t0, recorded_session& s, std::int64_t index) {
    ++t.summary.records_read;
    const auto at = number_of(r.t), api = number_of(r.api_time);
    const auto in = count_of(r.in), out = count_of(r.out);
    if (!at || !in || !out) return log.skip(index, "missing or invalid usage field", "t, in or out");
    if (api && *api < 0) return log.skip(index, "negative api_time");
    dom::array hashes;
    if (!r.hash_ids || r.hash_ids->get_array().get(hashes)) return log.skip(index, "missing hash_ids");
    recorded_request q;
    q.t_send = t0 + *at;
    // Some records carry no response timing (no api_time): tokens count, durations do not.
    q.t_end = api ? q.t_send + *api : unknown_time;
    if (auto ttft = number_of(r.ttft); api && ttft && *ttft >= 0 && *ttft <= *api) q.t_first_token = q.t_send + *ttft;
    // think_time is not used: after a request without api_time the trace measures it from the end
    // of the last *timed* request, so it would count the untimed request's time twice. The agent
    // time is derived from t instead (docs/trace-format.md, "kv-cache-tester timing").
    q.model = model_index(t, string_of(r.model).value_or("unknown"));
    q.source_line = index;
    q.output_kinds = output_kinds_of(r.output_types);
    // Walk the trie: the blocks already present are the ideal cache's hit.
    std::uint32_t node = 0;
    std::int64_t hit_blocks = 0, blocks = 0;
    bool missed = false;
    q.runs_begin = static_cast<std::uint32_t>(t.runs.size());
    for (const dom::element h : hashes) {
      std::int64_t id = 0;
      if (h.is_int64()) id = h.get_int64().value_unsafe();
      else if (h.is_uint64()) id = static_cast<std::int64_t>(h.get_uint64().value_unsafe());  // wraps, as the JSON reader does
      else {
        log.note(index, "non-integer hash id; the prefix ends there");
        break;
      }
      bool created = false;
      node = tr.child(node, id, created);
      missed = missed || created;
      if (!missed) ++hit_blocks;
      const auto lineage = tr.nodes[node].lineage;
      if (t.runs.size() > q.runs_begin && t.runs.back().lineage == lineage) t.runs.back().end_tokens = (blocks + 1) * B;
      else t.runs.push_back({lineage, (blocks + 1) * B});
      ++blocks;
    }
    if (t.runs.size() > q.runs_begin) t.runs.back().end_tokens = std::max(t.runs.back().end_tokens, *in);
    q.runs_count = static_cast<std::uint32_t>(t.runs.size() - q.runs_begin);
    const std::int64_t cached = std::min(hit_blocks * B, *in);
    q.tokens = {*in - cached, cached, 0, *out, 0};
    s.requests.push_back(q);
  };

  recorded_session main;
  main.id = std::filesystem::path(path).stem().string();
  main.file = path;
  t.sessions.push_back(main);
  std::int64_t index = 0;
  for (const dom::element e : requests) {
    ++index;
    if (!e.is_object()) {
      log.skip(index, "request is not an object");
      continue;
    }
    const members r(e);
    if (string_of(r.type) == "subagent") {
      const auto t0 = number_of(r.t);
      dom::array sub;
      if (!t0 || !r.requests || r.requests->get_array().get(sub)) {
        log.skip(index, "subagent without t or requests");
        continue;
      }
      recorded_session s;
      const auto agent = string_of(r.agent_id);
      s.id = fmt::format("{}/{}", main.id, agent ? std::string(*agent) : std::to_string(index));
      s.file = path;
      s.parent = 0;
      std::int64_t k = 0;
      for (const dom::element q : sub) add_request(members(q), *t0, s, index * 1000 + ++k);
      t.sessions.push_back(std::move(s));
      continue;
    }
    add_request(r, 0.0, t.sessions[0], index);
  }
  t.lineages = tr.lineages;
  rd.release_if_large();
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
