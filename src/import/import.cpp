// Format detection, dispatch to the importers, and the loopcast JSONL writer.
#include "common.hpp"

#include "../report_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <ostream>

namespace loopcast {

using namespace detail;

namespace {
constexpr std::array all_formats{trace_format::automatic, trace_format::claude_code, trace_format::codex,
                                 trace_format::opencode,  trace_format::kv_cache_tester, trace_format::swe_agent,
                                 trace_format::loopcast};

bool is_opencode_folder(const std::filesystem::path& p) {
  namespace fs = std::filesystem;
  return fs::is_directory(p / "storage" / "message") || (fs::is_directory(p / "message") && fs::is_directory(p / "part"));
}

// What a parsed first record says about its format.
std::optional<trace_format> classify(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  if (j.contains("loopcast_trace")) return trace_format::loopcast;
  if (j.contains("requests") && j.contains("block_size")) return trace_format::kv_cache_tester;
  if (j.contains("trajectory") || (j.contains("info") && j.contains("history"))) return trace_format::swe_agent;
  const auto type = string_at(j, "type");
  if (type && j.contains("payload") &&
      (*type == "session_meta" || *type == "response_item" || *type == "event_msg" || *type == "turn_context"))
    return trace_format::codex;
  if (type && (j.contains("sessionId") || j.contains("uuid") || *type == "file-history-snapshot" || *type == "summary"))
    return trace_format::claude_code;
  return std::nullopt;
}
} // namespace

std::string_view to_string(trace_format f) noexcept {
  switch (f) {
  case trace_format::automatic: return "auto";
  case trace_format::claude_code: return "claude-code";
  case trace_format::codex: return "codex";
  case trace_format::opencode: return "opencode";
  case trace_format::kv_cache_tester: return "kv-cache-tester";
  case trace_format::swe_agent: return "swe-agent";
  case trace_format::loopcast: return "loopcast";
  }
  return "?";
}

std::optional<trace_format> parse_trace_format(std::string_view s) noexcept {
  for (auto f : all_formats)
    if (to_string(f) == s) return f;
  return std::nullopt;
}

std::size_t recorded_trace::request_count() const noexcept {
  std::size_t n = 0;
  for (const auto& s : sessions) n += s.requests.size();
  return n;
}

trace_format detect_trace_format(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const auto file = path.string();
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (is_opencode_folder(path)) return trace_format::opencode;
    throw trace_error(file, 0, "a directory that is not an opencode storage folder (import its files one by one)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw trace_error(file, 0, "cannot open file");
  char magic[16] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == 0) throw trace_error(file, 0, "empty file");
  if (std::string_view(magic, static_cast<std::size_t>(in.gcount())).starts_with(std::string_view("SQLite format 3\0", 16)))
    return trace_format::opencode;
  // JSONL: the first record that parses tells; a multi-line JSON document is read whole.
  import_summary scratch;
  issue_log log(scratch, file);
  std::optional<trace_format> found;
  bool first_is_document = false;
  std::int64_t tried = 0;
  {
    for_each_line(file, log, [&](std::int64_t, std::string_view text) {
      if (found || first_is_document || tried >= 20) return;
      const auto start = text.find_first_not_of(" \t\r");
      if (start == std::string_view::npos) return;
      ++tried;
      try {
        found = classify(nlohmann::json::parse(text.begin(), text.end()));
      } catch (const nlohmann::json::exception&) {
        if (tried == 1 && (text[start] == '{' || text[start] == '[')) first_is_document = true;
      }
    });
  }
  if (found) return *found;
  if (first_is_document) {
    if (auto f = classify(read_json_document(file))) return *f;
  }
  throw trace_error(file, 0, "unknown log format (expected Claude Code or Codex JSONL, an opencode database, a "
                             "kv-cache-tester or SWE-agent JSON, or a loopcast trace); use --format to say which");
}

recorded_trace import_trace(const std::filesystem::path& path, trace_format format) {
  if (format == trace_format::automatic) format = detect_trace_format(path);
  const auto file = path.string();
  std::error_code ec;
  switch (format) {
  case trace_format::claude_code: return import_claude_code(file);
  case trace_format::codex: return import_codex(file);
  case trace_format::opencode:
    return std::filesystem::is_directory(path, ec) ? import_opencode_folder(file) : import_opencode_db(file);
  case trace_format::kv_cache_tester: return import_kv_cache_tester(file);
  case trace_format::swe_agent: return import_swe_agent(file);
  case trace_format::loopcast: return import_loopcast_jsonl(file);
  case trace_format::automatic: break;
  }
  throw trace_error(file, 0, "no format given");
}

std::vector<recorded_trace> import_traces(const std::vector<std::filesystem::path>& paths, trace_format format) {
  namespace fs = std::filesystem;
  std::vector<recorded_trace> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw trace_error(p.string(), 0, "no such file or directory");
    if (fs::is_directory(p, ec) && !is_opencode_folder(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec))
        if (e.is_regular_file() && e.path().filename().string().front() != '.' && e.path().filename() != "LICENSE" &&
            e.path().extension() != ".md")
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      if (files.empty()) throw trace_error(p.string(), 0, "directory holds no log files");
      for (const auto& f : files) out.push_back(import_trace(f, format));
    } else {
      out.push_back(import_trace(p, format));
    }
  }
  return out;
}

void write_loopcast_jsonl(std::ostream& os, const recorded_trace& t) {
  nlohmann::ordered_json h;
  h["loopcast_trace"] = 1;
  h["source"] = t.file;
  h["source_format"] = std::string(to_string(t.format));
  h["absolute_clock"] = t.absolute_clock;
  h["has_prefix"] = t.has_prefix;
  h["lineages"] = t.lineages;
  os << detail::dump(h, -1) << "\n";
  for (const auto& s : t.sessions) {
    for (const auto& r : s.requests) {
      nlohmann::ordered_json j;
      j["session"] = s.id;
      j["parent"] = s.parent >= 0 ? nlohmann::ordered_json(t.sessions[static_cast<std::size_t>(s.parent)].id) : nullptr;
      j["model"] = t.models.at(static_cast<std::size_t>(r.model));
      j["t_send"] = r.t_send;
      j["t_first_token"] = std::isnan(r.t_first_token) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.t_first_token);
      j["t_end"] = std::isnan(r.t_end) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.t_end);
      j["delay_before_s"] = std::isnan(r.delay_before_s) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.delay_before_s);
      j["input"] = r.tokens.input;
      j["cache_read"] = r.tokens.cache_read;
      j["cache_write"] = r.tokens.cache_write;
      j["output"] = r.tokens.output;
      j["reasoning"] = r.tokens.reasoning;
      j["compaction"] = r.compaction;
      j["new_context"] = r.new_context;
      j["cost_usd"] = std::isnan(r.cost_usd) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.cost_usd);
      if (t.has_prefix) {
        auto runs = nlohmann::ordered_json::array();
        for (std::uint32_t k = 0; k < r.runs_count; ++k) {
          const auto& run = t.runs[r.runs_begin + k];
          runs.push_back({run.lineage, run.end_tokens});
        }
        j["prefix"] = runs;
      }
      os << detail::dump(j, -1) << "\n";
    }
  }
}

} // namespace loopcast
