// opencode: the SQLite database (message and part tables) and the older JSON storage folder
// (storage/message/<session>/<message>.json, storage/part/<message>/<part>.json).
//
// Conventions converted here:
// - Each assistant message is one API call: tokens.input is the uncached input, tokens.cache.read
//   and .write the cache classes, tokens.output and tokens.reasoning as given; cost as recorded.
// - Sent: time.created. End: when finish is "tool-calls", the earliest tool part's
//   state.time.start (the tool starts then), else time.completed. First token: the earliest
//   time.start of a text or reasoning part, when parts record it.
// - Sessions with a parent_id (subagents) are parallel sessions.
#include "import/common.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>

namespace loopcast::detail {

void add_opencode_part(opencode_part_times& p, const nlohmann::json& part) {
  const auto type = string_at(part, "type");
  if (!type) return;
  auto ms = [](const nlohmann::json& obj) -> std::optional<double> {
    if (!obj.is_object() || !obj.contains("time")) return std::nullopt;
    if (auto s = number_at(obj["time"], "start")) return *s / 1000.0;
    return std::nullopt;
  };
  if (*type == "tool") {
    if (part.contains("state"))
      if (auto s = ms(part["state"])) p.first_tool = std::isnan(p.first_tool) ? *s : std::min(p.first_tool, *s);
  } else if (*type == "text" || *type == "reasoning") {
    if (auto s = ms(part)) p.first_token = std::isnan(p.first_token) ? *s : std::min(p.first_token, *s);
  }
}

std::optional<recorded_request> decode_opencode_message(const nlohmann::json& m, const opencode_part_times& parts,
                                                        std::int64_t row, recorded_trace& t, issue_log& log) {
  if (string_at(m, "role") != "assistant") return std::nullopt;
  const auto time = m.find("time");
  std::optional<double> created, completed;
  if (time != m.end()) {
    created = number_at(*time, "created");
    completed = number_at(*time, "completed");
  }
  if (!created) return log.skip(row, "assistant message without time.created"), std::nullopt;
  if (!completed) return log.skip(row, "unfinished assistant message (no time.completed)"), std::nullopt;
  if (*completed < *created) return log.skip(row, "time.completed before time.created"), std::nullopt;
  const auto tok = m.find("tokens");
  if (tok == m.end() || !tok->is_object()) return log.skip(row, "missing usage"), std::nullopt;
  const auto in = count_at(*tok, "input"), out = count_at(*tok, "output");
  if (!in || !out) return log.skip(row, "missing or invalid usage field", "tokens.input or tokens.output"), std::nullopt;
  recorded_request q;
  const auto cache = tok->find("cache");
  const std::int64_t read = cache != tok->end() ? count_at(*cache, "read").value_or(0) : 0;
  const std::int64_t write = cache != tok->end() ? count_at(*cache, "write").value_or(0) : 0;
  q.tokens = {*in, read, write, *out, count_at(*tok, "reasoning").value_or(0)};
  q.t_send = *created / 1000.0;
  q.t_end = *completed / 1000.0;
  if (string_at(m, "finish") == "tool-calls") {
    if (std::isnan(parts.first_tool)) log.note(row, "finish is tool-calls but no tool part has a start time; end is time.completed");
    else if (parts.first_tool < q.t_send) log.note(row, "a tool part starts before the message was created; end is time.completed");
    else q.t_end = std::min(q.t_end, parts.first_tool);
  }
  if (!std::isnan(parts.first_token) && parts.first_token >= q.t_send && parts.first_token <= q.t_end)
    q.t_first_token = parts.first_token;
  if (auto c = number_at(m, "cost"); c && *c >= 0) q.cost_usd = *c;
  q.model = model_index(t, string_at(m, "modelID").value_or("unknown"));
  q.source_line = row;
  return q;
}

namespace {

struct db_handle {
  sqlite3* db = nullptr;
  ~db_handle() { sqlite3_close(db); }
};

struct statement {
  sqlite3_stmt* st = nullptr;
  ~statement() { sqlite3_finalize(st); }
};

std::string column_text(sqlite3_stmt* st, int i) {
  const auto* p = sqlite3_column_text(st, i);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(st, i))) : std::string{};
}

} // namespace

namespace {
recorded_trace import_opencode_db(const std::string& path);
recorded_trace import_opencode_folder(const std::string& path);
// opencode keeps a SQLite database (or, before, a storage folder): recognised by detection from
// the file's magic or the folder's layout, never from a JSON record.
recorded_trace import_opencode(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? import_opencode_folder(path) : import_opencode_db(path);
}
} // namespace

const importer opencode_importer{trace_format::opencode, nullptr, import_opencode};

namespace {
recorded_trace import_opencode_db(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::opencode;
  t.absolute_clock = true;
  issue_log log(t.summary, path);
  db_handle h;
  if (sqlite3_open_v2(path.c_str(), &h.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    throw trace_error(path, 0, fmt::format("cannot open as SQLite: {}", h.db ? sqlite3_errmsg(h.db) : "out of memory"));
  auto prepare = [&](const char* sql) {
    statement s;
    if (sqlite3_prepare_v2(h.db, sql, -1, &s.st, nullptr) != SQLITE_OK)
      throw trace_error(path, 0, fmt::format("cannot query: {}", sqlite3_errmsg(h.db)));
    return s;
  };
  {
    auto s = prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('message', 'part', 'session')");
    if (sqlite3_step(s.st) != SQLITE_ROW || sqlite3_column_int(s.st, 0) != 3)
      throw trace_error(path, 0, "not an opencode database (it lacks the session, message and part tables)");
  }
  // Sessions and their parents.
  std::map<std::string, std::size_t> session_index;
  std::vector<std::string> parent_of;
  {
    auto s = prepare("SELECT id, parent_id FROM session ORDER BY time_created, id");
    while (sqlite3_step(s.st) == SQLITE_ROW) {
      recorded_session rs;
      rs.id = column_text(s.st, 0);
      rs.file = path;
      session_index[rs.id] = t.sessions.size();
      parent_of.push_back(column_text(s.st, 1));
      t.sessions.push_back(rs);
    }
  }
  for (std::size_t i = 0; i < t.sessions.size(); ++i)
    if (auto it = session_index.find(parent_of[i]); it != session_index.end())
      t.sessions[i].parent = static_cast<std::int32_t>(it->second);
  // Parts: first token and first tool start per message.
  std::map<std::string, opencode_part_times> parts;
  {
    auto s = prepare("SELECT rowid, message_id, data FROM part");
    while (sqlite3_step(s.st) == SQLITE_ROW) {
      const auto row = sqlite3_column_int64(s.st, 0);
      auto j = parse_line(column_text(s.st, 2), row, log);
      if (j) add_opencode_part(parts[column_text(s.st, 1)], *j);
    }
  }
  auto s = prepare("SELECT rowid, id, session_id, data FROM message ORDER BY time_created, rowid");
  int rc;
  while ((rc = sqlite3_step(s.st)) == SQLITE_ROW) {
    ++t.summary.records_read;
    const auto row = sqlite3_column_int64(s.st, 0);
    auto j = parse_line(column_text(s.st, 3), row, log);
    if (!j) continue;
    const auto id = column_text(s.st, 1);
    const auto it = session_index.find(column_text(s.st, 2));
    if (it == session_index.end()) {
      log.skip(row, "message of an unknown session");
      continue;
    }
    if (auto q = decode_opencode_message(*j, parts[id], row, t, log)) t.sessions[it->second].requests.push_back(*q);
  }
  if (rc != SQLITE_DONE) throw trace_error(path, 0, fmt::format("query failed: {}", sqlite3_errmsg(h.db)));
  finish_trace(t, log);
  return t;
}

recorded_trace import_opencode_folder(const std::string& path) {
  recorded_trace t;
  t.file = path;
  t.format = trace_format::opencode;
  t.absolute_clock = true;
  issue_log log(t.summary, path);
  namespace fs = std::filesystem;
  fs::path root(path);
  if (fs::is_directory(root / "storage")) root /= "storage";
  if (!fs::is_directory(root / "message"))
    throw trace_error(path, 0, "not an opencode storage folder (no message/ directory)");
  std::map<std::string, std::size_t> session_index;
  std::vector<fs::path> session_dirs;
  for (const auto& d : fs::directory_iterator(root / "message"))
    if (d.is_directory()) session_dirs.push_back(d.path());
  std::sort(session_dirs.begin(), session_dirs.end());
  for (const auto& dir : session_dirs) {
    recorded_session rs;
    rs.id = dir.filename().string();
    rs.file = dir.string();
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir))
      if (f.path().extension() == ".json") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      ++t.summary.records_read;
      issue_log flog(t.summary, f.string());
      nlohmann::json m;
      try {
        m = read_json_document(f.string(), 64u << 20);
      } catch (const trace_error& e) {
        flog.skip(0, "unreadable message file", e.what());
        continue;
      }
      opencode_part_times pt;
      // The message id names its part folder: only a plain name, so that an id such as
      // "/proc/self" or "../x" cannot reach outside the storage folder.
      auto id = string_at(m, "id").value_or(f.stem().string());
      if (id.empty() || id == "." || id == ".." || id.find_first_of("/\\") != std::string::npos ||
          id.find('\0') != std::string::npos) {
        flog.note(0, "message id is not a plain name; its parts are looked up by the file's name");
        id = f.stem().string();
      }
      const auto part_dir = root / "part" / id;
      if (fs::is_directory(part_dir))
        for (const auto& p : fs::directory_iterator(part_dir)) {
          if (p.path().extension() != ".json") continue;
          try {
            add_opencode_part(pt, read_json_document(p.path().string(), 64u << 20));
          } catch (const trace_error& e) {
            flog.note(0, e.what());
          }
        }
      if (auto q = decode_opencode_message(m, pt, 0, t, flog)) rs.requests.push_back(*q);
    }
    session_index[rs.id] = t.sessions.size();
    t.sessions.push_back(std::move(rs));
  }
  // Parents, from storage/session/**/<id>.json where present.
  if (fs::is_directory(root / "session"))
    for (const auto& f : fs::recursive_directory_iterator(root / "session")) {
      if (f.path().extension() != ".json") continue;
      try {
        const auto j = read_json_document(f.path().string(), 16u << 20);
        const auto id = string_at(j, "id"), parent = string_at(j, "parentID");
        if (id && parent && session_index.contains(*id) && session_index.contains(*parent))
          t.sessions[session_index[*id]].parent = static_cast<std::int32_t>(session_index[*parent]);
      } catch (const trace_error&) {
      }
    }
  finish_trace(t, log);
  return t;
}

} // namespace

} // namespace loopcast::detail
