// Format detection, dispatch to the importers, and the loopcast JSONL writer.
#include "import/common.hpp"
#include "import/simd.hpp"
#include "loopcast/budget.hpp"

#include "util/parallel.hpp"

#include "json/parse.hpp"
#include "json/writer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <fnmatch.h>
#include <zlib.h>
#include <zstd.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>
#include <ostream>
#include <string_view>
#include <vector>

namespace loopcast {

using namespace detail;

namespace {
bool is_opencode_folder(const std::filesystem::path& p) {
  namespace fs = std::filesystem;
  return fs::is_directory(p / "storage" / "message") || (fs::is_directory(p / "message") && fs::is_directory(p / "part"));
}

// The registry: every format, in the order detection asks them (the most specific first). A new
// format is its importer's file plus one line here (and its spelling in trace.hpp).
constexpr const importer* registry[] = {&loopcast_jsonl_importer, &kv_cache_tester_importer, &swe_agent_importer,
                                        &codex_importer,          &claude_code_importer,     &opencode_importer};

const importer& importer_for(trace_format f) {
  for (const auto* i : registry)
    if (i->format == f) return *i;
  throw std::logic_error("no importer registered for a format");  // unreachable: every format is registered
}

// The keys of the top-level object that begins `head`, as far as `head` goes (a document's first
// bytes): strings are skipped whole, nesting is counted, and a key is a string at depth 1 followed
// by ':'. Empty when head does not begin (after blanks) with '{'.
std::vector<std::string_view> leading_keys(std::string_view head) {
  std::vector<std::string_view> keys;
  std::size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || head[i] != '{') return keys;
  int depth = 0;
  for (; i < head.size(); ++i) {
    const char c = head[i];
    if (c == '"') {
      const std::size_t start = ++i;
      while (i < head.size() && head[i] != '"') i += head[i] == '\\' ? 2 : 1;
      if (i >= head.size()) break;
      const std::size_t colon = head.find_first_not_of(" \t\r\n", i + 1);
      if (depth == 1 && colon != std::string_view::npos && head[colon] == ':') keys.push_back(head.substr(start, i - start));
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    }
  }
  return keys;
}

// The top level of a record as far as the formats' `recognises` look (its keys, and short strings
// such as "type"), read with simdjson: detecting a log whose first line is a large prompt builds
// no tree of that prompt. nullopt where simdjson refuses the line (the strict reader then decides).
std::optional<nlohmann::json> record_shape(std::string_view text) {
  thread_local dom::parser parser;
  if (parser.max_depth() != static_cast<std::size_t>(max_json_depth) || parser.capacity() < text.size())
    if (parser.allocate(std::max<std::size_t>(text.size(), 1 << 16), max_json_depth)) return std::nullopt;
  dom::element e;
  if (parser.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(e)) return std::nullopt;
  dom::object o;
  if (e.get_object().get(o)) return nlohmann::json(nullptr);  // not an object: no format's record
  auto shape = nlohmann::json::object();
  for (const auto field : o) {
    auto& v = shape[std::string(field.key)];
    if (field.value.is_string()) {
      const auto str = field.value.get_string().value_unsafe();
      v = str.size() <= 256 ? std::string(str) : std::string();
    } else if (field.value.is_object()) {
      v = nlohmann::json::object();
    } else if (field.value.is_array()) {
      v = nlohmann::json::array();
    } else if (field.value.is_bool()) {
      v = field.value.get_bool().value_unsafe();
    } else if (field.value.is_number()) {
      v = field.value.get_double().value_unsafe();
    }
  }
  return shape;
}

// What a parsed first record says about its format.
std::optional<trace_format> classify(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  for (const auto* i : registry)
    if (i->recognises && i->recognises(j)) return i->format;
  return std::nullopt;
}
} // namespace


double agent_delay(const recorded_request& prev, const recorded_request& r) noexcept {
  if (!std::isnan(r.delay_before_s)) return r.delay_before_s;
  if (!std::isnan(prev.t_end)) return std::max(0.0, r.t_send - prev.t_end);
  return std::max(0.0, r.t_send - prev.t_send);
}

bool model_matches(const std::string& pattern, const std::string& model) noexcept {
  return pattern.empty() || pattern == "*" || fnmatch(pattern.c_str(), model.c_str(), 0) == 0;
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
  if (in.gcount() == 0) throw not_a_log(file, 0, "empty file");
  if (std::string_view(magic, static_cast<std::size_t>(in.gcount())).starts_with(std::string_view("SQLite format 3\0", 16)))
    return trace_format::opencode;
  // A kv-cache-tester trace is one large document whose header keys (block_size, requests) come
  // first: recognised from its first 4 KiB, without parsing it. Otherwise JSONL: the first records
  // that parse tell, read from at most the first 4 MiB; another JSON document (one object over
  // many lines, or one long line) is read whole once.
  std::optional<trace_format> found;
  bool first_is_document = false;
  {
    constexpr std::size_t sniff_bytes = 4u << 20;
    in.clear();
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
    in.seekg(0);
    std::string head(std::min<std::size_t>(size, 4096), '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    const auto keys = leading_keys(head);
    if (std::find(keys.begin(), keys.end(), "block_size") != keys.end() &&
        std::find(keys.begin(), keys.end(), "requests") != keys.end())
      return trace_format::kv_cache_tester;
    // The head grows (64 KiB, then doubling up to 4 MiB) only while its lines do not yet tell: a
    // Claude Code log is known from its first line, and is read once, by its importer, not twice.
    const auto grow_to = [&](std::size_t want) {
      const std::size_t had = head.size(), more = std::min({size, sniff_bytes, want});
      if (more <= had) return false;
      head.resize(more);
      in.read(head.data() + had, static_cast<std::streamsize>(more - had));
      head.resize(had + static_cast<std::size_t>(in.gcount()));
      return head.size() > had;
    };
    grow_to(64u << 10);
    std::size_t pos = 0;
    std::int64_t tried = 0;
    while (!found && !first_is_document && tried < 20 && pos < head.size()) {
      const bool whole = head.size() >= std::min(size, sniff_bytes);
      const auto nl = head.find('\n', pos);
      if (nl == std::string::npos && !whole) {
        if (grow_to(2 * head.size())) continue;
        break;
      }
      if (nl == std::string::npos && size > sniff_bytes) {
        // The first line runs past the sniffed bytes: a long single-line document, or garbage.
        if (tried == 0) first_is_document = true;
        break;
      }
      const std::string_view text = std::string_view(head).substr(pos, (nl == std::string::npos ? head.size() : nl) - pos);
      pos = nl == std::string::npos ? head.size() : nl + 1;
      const auto start = text.find_first_not_of(" \t\r");
      if (start == std::string_view::npos) continue;
      ++tried;
      if (const auto shape = record_shape(text)) {
        found = classify(*shape);
        continue;
      }
      auto r = parse_json_text<nlohmann::json>(text, max_json_depth, false);
      if (r.value) found = classify(*r.value);
      else if (tried == 1 && (text[start] == '{' || text[start] == '[')) first_is_document = true;
    }
  }
  if (found) return *found;
  if (first_is_document) {
    if (auto f = classify(read_json_document(file))) return *f;
  }
  throw not_a_log(file, 0, "unknown log format (expected Claude Code or Codex JSONL, an opencode database, a "
                             "kv-cache-tester or SWE-agent JSON, or a loopcast trace); use --format to say which");
}

namespace {
recorded_trace import_plain(const std::filesystem::path& path, trace_format format) {
  if (format == trace_format::automatic) format = detect_trace_format(path);
  if (format == trace_format::automatic) throw trace_error(path.string(), 0, "no format given");
  return importer_for(format).import(path.string());
}

// Streams that cannot be read twice (standard input as "-", a pipe, process substitution, a
// device) are read once, at most max_stream_bytes, into a temporary regular file that detection
// and the importer can both read; what the import reports names the stream, not that file.
constexpr std::size_t max_stream_bytes = 512u << 20;

// A temporary file with no name: made in $TMPDIR (else /tmp) and unlinked at once, so that no
// signal or crash can leave it behind; it lives while its descriptor is open, and the importers
// read it through /proc/self/fd.
struct temp_file {
  int fd = -1;
  std::string path;  // /proc/self/fd/N
  explicit temp_file(const std::string& display) {
    const char* env = std::getenv("TMPDIR");
    const std::string dir = env && *env ? env : "/tmp";
    // O_TMPFILE makes it without a name at all; where the file system cannot, a name that lives
    // between mkstemp and unlink.
    fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
      std::string name = dir + "/loopcast-stream-XXXXXX";
      fd = ::mkstemp(name.data());
      if (fd >= 0) ::unlink(name.c_str());
    }
    if (fd < 0)
      throw trace_error(display, 0, fmt::format("cannot make a temporary copy in {} ($TMPDIR): {}", dir, std::strerror(errno)));
    path = fmt::format("/proc/self/fd/{}", fd);
  }
  ~temp_file() {
    if (fd >= 0) ::close(fd);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
};

enum class compression { none, gzip, zstd };

// From the first bytes: gzip (1f 8b) or a zstd frame (28 b5 2f fd).
compression sniff(const unsigned char* p, std::size_t n) {
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return compression::gzip;
  if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) return compression::zstd;
  return compression::none;
}

compression sniff_file(const std::string& path) {
  unsigned char head[4] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head), sizeof head);
  return sniff(head, static_cast<std::size_t>(in.gcount()));
}

class stream_copy {
public:
  // Reads fd to its end into a temporary file, decompressing gzip and zstd on the way; at most
  // max_stream_bytes are written (after decompression: a small bomb is refused, not expanded).
  stream_copy(const std::string& display, int fd) : display_(display), tmp_(display) {
    copy(fd, tmp_.fd);
    if (written_ == 0) throw trace_error(display, 0, "empty input");
  }

  // The import of the copy, reported under the stream's name.
  recorded_trace import(trace_format format) const {
    const std::string& path = tmp_.path;
    try {
      auto t = import_plain(path, format);
      t.file = display_;
      for (auto& s : t.sessions) s.file = display_;
      for (auto& i : t.summary.issues) i.file = display_;
      return t;
    } catch (const trace_error& e) {
      std::string what = e.what();
      const std::string prefix = e.line() > 0 ? fmt::format("{}:{}: ", path, e.line()) : path + ": ";
      if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
      if (dynamic_cast<const not_a_log*>(&e)) throw not_a_log(display_, e.line(), what);
      throw trace_error(display_, e.line(), what);
    }
  }

private:
  // read() that retries on EINTR; 0 at the end.
  std::size_t read_some(int fd, std::vector<unsigned char>& buf) const {
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw trace_error(display_, 0, fmt::format("read error: {}", std::strerror(errno)));
      return static_cast<std::size_t>(n);
    }
  }

  void write_all(int out, const unsigned char* p, std::size_t n) {
    written_ += n;
    if (written_ > max_stream_bytes)
      throw trace_error(display_, 0, fmt::format("more than {} bytes{}: not a log (at most {} MiB are read from {})",
                                                 max_stream_bytes, kind_ == compression::none ? " without an end" : " once decompressed",
                                                 max_stream_bytes >> 20,
                                                 kind_ == compression::none ? "a stream" : "a compressed log"));
    for (std::size_t done = 0; done < n;) {
      const ssize_t w = ::write(out, p + done, n - done);
      if (w <= 0) throw trace_error(display_, 0, "cannot make a temporary copy: write failed");
      done += static_cast<std::size_t>(w);
    }
  }

  void copy(int fd, int out) {
    std::vector<unsigned char> in(1 << 16), dec(1 << 16);
    std::size_t n = read_some(fd, in);
    kind_ = sniff(in.data(), n);
    if (kind_ == compression::none) {
      for (; n > 0; n = read_some(fd, in)) write_all(out, in.data(), n);
    } else if (kind_ == compression::gzip) {
      z_stream z{};
      if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw trace_error(display_, 0, "cannot start gzip decompression");
      struct end_z {
        z_stream* z;
        ~end_z() { inflateEnd(z); }
      } guard{&z};
      int rc = Z_OK;
      bool padding = false;  // zeros after the last member (tape and block padding: gzip accepts them)
      auto zeros = [](const unsigned char* p, std::size_t k) { return std::all_of(p, p + k, [](unsigned char c) { return c == 0; }); };
      for (; n > 0; n = read_some(fd, in)) {
        if (padding) {
          if (!zeros(in.data(), n)) throw trace_error(display_, 0, "corrupt gzip data: data after the trailing zeros");
          continue;
        }
        z.next_in = in.data();
        z.avail_in = static_cast<uInt>(n);
        while (z.avail_in > 0) {
          z.next_out = dec.data();
          z.avail_out = static_cast<uInt>(dec.size());
          rc = inflate(&z, Z_NO_FLUSH);
          if (rc == Z_STREAM_END && z.avail_in > 0 && *z.next_in == 0) {  // trailing zeros
            write_all(out, dec.data(), dec.size() - z.avail_out);
            if (!zeros(z.next_in, z.avail_in)) throw trace_error(display_, 0, "corrupt gzip data: data after the trailing zeros");
            padding = true;
            break;
          }
          if (rc == Z_STREAM_END && z.avail_in > 0) {  // concatenated members (gzip -c a b)
            write_all(out, dec.data(), dec.size() - z.avail_out);
            inflateReset(&z);
            continue;
          }
          if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            throw trace_error(display_, 0, fmt::format("corrupt gzip data: {}", z.msg ? z.msg : "inflate failed"));
          write_all(out, dec.data(), dec.size() - z.avail_out);
          if (rc == Z_BUF_ERROR && z.avail_out > 0) break;
        }
      }
      if (rc != Z_STREAM_END) throw trace_error(display_, 0, "truncated gzip data (the stream ends before its end marker)");
    } else {
      ZSTD_DStream* d = ZSTD_createDStream();
      if (!d) throw trace_error(display_, 0, "cannot start zstd decompression");
      struct end_d {
        ZSTD_DStream* d;
        ~end_d() { ZSTD_freeDStream(d); }
      } guard{d};
      std::size_t last = 1;
      for (; n > 0; n = read_some(fd, in)) {
        ZSTD_inBuffer ib{in.data(), n, 0};
        while (ib.pos < ib.size) {
          ZSTD_outBuffer ob{dec.data(), dec.size(), 0};
          last = ZSTD_decompressStream(d, &ob, &ib);
          if (ZSTD_isError(last)) throw trace_error(display_, 0, fmt::format("corrupt zstd data: {}", ZSTD_getErrorName(last)));
          write_all(out, dec.data(), ob.pos);
        }
      }
      // Flush what the decoder still holds of an unfinished frame.
      while (last != 0) {
        ZSTD_inBuffer ib{nullptr, 0, 0};
        ZSTD_outBuffer ob{dec.data(), dec.size(), 0};
        last = ZSTD_decompressStream(d, &ob, &ib);
        if (ZSTD_isError(last)) throw trace_error(display_, 0, fmt::format("corrupt zstd data: {}", ZSTD_getErrorName(last)));
        write_all(out, dec.data(), ob.pos);
        if (ob.pos == 0) break;
      }
      if (last != 0) throw trace_error(display_, 0, "truncated zstd data (the stream ends inside a frame)");
    }
  }

  std::string display_;
  temp_file tmp_;  // (after display_, which its constructor's message names)
  compression kind_ = compression::none;
  std::size_t written_ = 0;
};

// Opens a path (a file, FIFO or device) and imports what it yields through a stream copy.
recorded_trace import_through_copy(const std::string& path, trace_format format) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; reading then blocks as usual.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw trace_error(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  try {
    stream_copy copy(path, fd);
    ::close(fd);
    return copy.import(format);
  } catch (...) {
    ::close(fd);
    throw;
  }
}

recorded_trace import_stream(const std::filesystem::path& p, trace_format format) {
  if (p == "-") return stream_copy("standard input", 0).import(format);
  return import_through_copy(p.string(), format);
}

// The regular files under a folder, sorted, that `keep` accepts. Listing stops at the first
// error (a symlink loop, an unreadable folder): that is an input error naming the folder.
std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir,
                                               bool (*keep)(const std::filesystem::path&)) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && keep(it->path())) files.push_back(it->path());
  }
  if (ec) {
    // The folder the iterator stood in when it failed (an unreadable subfolder), else the top.
    const auto where = it != fs::recursive_directory_iterator() ? it->path() : dir;
    throw trace_error(where.string(), 0, fmt::format("cannot list the folder: {}", ec.message()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Fewest bytes one request takes in a log of this file's kind, for an upper bound of the requests
// a file holds before it is read: a loopcast JSONL line of a request is at least about 100 bytes
// (its required fields), a Claude Code or Codex response line more; a kv-cache-tester entry at
// least about 60.
std::uint64_t least_bytes_per_request(const std::filesystem::path& f) {
  return f.extension() == ".json" ? 60 : 100;
}

// Memory of one imported request at most: its record, a share of its session's and its prefix runs.
constexpr std::uint64_t import_bytes_per_request = 320;

// Refuses, before anything is read, files whose import could pass the memory budget: their sizes
// (a compressed file's at most 512 MiB once decompressed) bound the requests they hold.
void check_import_size(const std::vector<std::filesystem::path>& files) {
  std::uint64_t bytes = 0, requests = 0;
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(f, ec);
    if (ec) continue;  // (the import says what is wrong with it)
    const std::uint64_t plain = sniff_file(f.string()) != compression::none ? std::uint64_t{512} << 20 : size;
    bytes += size;
    requests += plain / least_bytes_per_request(f);
  }
  const double need = static_cast<double>(requests) * import_bytes_per_request;
  const auto budget = memory_budget_bytes();
  if (need <= static_cast<double>(budget)) return;
  constexpr double gib = 1024.0 * 1024 * 1024;
  throw config_error(files.size() == 1 ? files.front().string() : fmt::format("{} logs", files.size()), "",
                     fmt::format("{} bytes of logs may hold up to {} requests, whose import could take {:.1f} GiB, over "
                                 "the memory budget of {:.1f} GiB: set LOOPCAST_MEMORY_BUDGET_GB to allow it, or read "
                                 "fewer logs at once",
                                 bytes, requests, need / gib, static_cast<double>(budget) / gib));
}

} // namespace

namespace {
// A file or stream read as a log; a trace with no request is returned so (import_trace refuses it).
recorded_trace import_any(const std::filesystem::path& path, trace_format format, bool stream) {
  if (stream) return import_stream(path, format);
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && sniff_file(path.string()) != compression::none)
    return import_through_copy(path.string(), format);
  return import_plain(path, format);
}

bool holds_nothing(const recorded_trace& t) { return t.request_count() == 0 && !t.totals; }

// One input of a set of logs: a file or stream named, or a file found under a folder (which is
// passed over, and listed, when it is no log).
struct log_input {
  std::filesystem::path path;
  bool stream = false, in_folder = false;
  trace_format format = trace_format::automatic;
  std::string machine;
};

// Reads every input, on `threads` workers (0: every core), each into its own slot: the result and
// the first error (by input, not by time) are the same whatever the thread count. Then each
// response counts once (drop_repeated_responses) over them and the logs `already` read, and (with
// require_request) the set must hold a request somewhere.
std::vector<recorded_trace> import_inputs(const std::vector<log_input>& inputs, import_notes* notes,
                                          unsigned threads, std::vector<recorded_trace> already = {},
                                          bool require_request = true) {
  std::vector<std::optional<recorded_trace>> slots(inputs.size());
  std::vector<std::optional<import_issue>> passed(inputs.size());
  std::vector<std::exception_ptr> errors(inputs.size());
  // Standard input is read once, on this thread, before the workers start.
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].stream && inputs[i].path == "-") {
      try {
        slots[i] = import_any(inputs[i].path, inputs[i].format, true);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  detail::parallel_for(inputs.size(), threads, [&](std::size_t i) {
    const auto& in = inputs[i];
    if (slots[i] || errors[i]) return;
    try {
      slots[i] = import_any(in.path, in.format, in.stream);
    } catch (const not_a_log& e) {
      if (!in.in_folder) errors[i] = std::current_exception();
      else passed[i] = import_issue{in.path.string(), 0, e.what()};
    } catch (...) {
      errors[i] = std::current_exception();
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<recorded_trace> out = std::move(already);
  out.reserve(out.size() + inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (slots[i]) {
      out.push_back(std::move(*slots[i]));
      out.back().machine = inputs[i].machine;
    }
    if (passed[i] && notes) notes->not_logs.push_back(std::move(*passed[i]));
  }
  drop_repeated_responses(out, notes ? &notes->clock_offsets : nullptr);
  if (require_request && !out.empty() && std::all_of(out.begin(), out.end(), holds_nothing)) {
    if (out.size() == 1) throw trace_error(out.front().file, 0, no_request_reason(out.front()));
    std::map<std::string, std::int64_t> reasons;
    for (const auto& t : out)
      for (const auto& [reason, n] : t.summary.skipped) reasons[reason] += n;
    std::string why;
    for (const auto& [reason, n] : reasons) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, reason);
    throw trace_error(fmt::format("{} logs", out.size()), 0,
                      fmt::format("no usable request in any of them{}", why.empty() ? "" : " (skipped: " + why + ")"));
  }
  return out;
}
} // namespace

recorded_trace import_trace(const std::filesystem::path& path, trace_format format) {
  auto t = import_any(path, format, false);
  if (holds_nothing(t)) throw trace_error(t.file, 0, no_request_reason(t));
  return t;
}

std::vector<std::string> models_of(const std::vector<recorded_trace>& traces) {
  std::vector<std::string> out;
  for (const auto& t : traces) {
    std::vector<bool> used(t.models.size(), false);
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) used[static_cast<std::size_t>(r.model)] = true;
    for (std::size_t m = 0; m < t.models.size(); ++m)
      if (used[m] && std::find(out.begin(), out.end(), t.models[m]) == out.end()) out.push_back(t.models[m]);
  }
  return out;
}

recorded_trace merge_logs(const std::vector<recorded_trace>& all) {
  if (all.empty()) throw std::invalid_argument("merge_logs: no log to merge");
  // A log left without requests (each of its responses counted in another) adds nothing.
  std::vector<std::reference_wrapper<const recorded_trace>> logs;
  for (const auto& t : all)
    if (t.request_count() > 0) logs.emplace_back(t);
  if (logs.empty()) throw trace_error(all.front().file, 0, "no usable request in the logs");
  if (logs.size() == 1) return logs.front();
  recorded_trace m;
  m.format = logs.front().get().format;
  m.absolute_clock = true;
  m.has_prefix = logs.front().get().has_prefix;
  m.project = logs.front().get().project;
  std::vector<std::string> files;
  for (const recorded_trace& t : logs) {
    if (t.totals) throw trace_error(t.file, 0, "per-task totals only: no requests to put on one account's clock");
    if (!t.absolute_clock)
      throw trace_error(t.file, 0, "its times are relative to its start (as kv-cache-tester's): it cannot be put on one "
                                   "clock with other logs");
    if (t.has_prefix != m.has_prefix)
      throw trace_error(t.file, 0, fmt::format("it {} the prefix structure (hash ids) that {} {}: such logs are not merged",
                                               t.has_prefix ? "records" : "lacks", logs.front().get().file,
                                               m.has_prefix ? "records" : "lacks"));
    files.push_back(t.file);
    if (t.format != m.format) m.format = trace_format::automatic;
    if (t.project != m.project) m.project.clear();
    m.has_ttft = m.has_ttft || t.has_ttft;
    std::vector<std::int32_t> model_at(t.models.size());
    for (std::size_t i = 0; i < t.models.size(); ++i) model_at[i] = model_index(m, t.models[i]);
    const auto session_base = static_cast<std::int32_t>(m.sessions.size());
    const auto run_base = static_cast<std::uint32_t>(m.runs.size());
    for (auto s : t.sessions) {
      if (s.parent >= 0) s.parent += session_base;
      for (auto& r : s.requests) {
        r.model = model_at.at(static_cast<std::size_t>(r.model));
        r.runs_begin += run_base;
      }
      m.sessions.push_back(std::move(s));
    }
    for (auto run : t.runs) {
      run.lineage += m.lineages;
      m.runs.push_back(run);
    }
    m.lineages += t.lineages;
    m.rate_limits.insert(m.rate_limits.end(), t.rate_limits.begin(), t.rate_limits.end());
    m.walls.insert(m.walls.end(), t.walls.begin(), t.walls.end());
    m.accounts.insert(m.accounts.end(), t.accounts.begin(), t.accounts.end());
    m.summary.records_read += t.summary.records_read;
    m.summary.requests += t.summary.requests;
    for (const auto& [reason, n] : t.summary.skipped) m.summary.skipped[reason] += n;
    m.summary.issues.insert(m.summary.issues.end(), t.summary.issues.begin(), t.summary.issues.end());
    m.summary.issues_total += t.summary.issues_total;
  }
  std::stable_sort(m.rate_limits.begin(), m.rate_limits.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  std::stable_sort(m.walls.begin(), m.walls.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  std::stable_sort(m.accounts.begin(), m.accounts.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
  m.file = fmt::format("{} logs ({})", logs.size(), fmt::join(files, ", "));
  return m;
}

std::int64_t drop_repeated_responses(std::vector<recorded_trace>& traces, std::vector<clock_offset>* offsets) {
  auto first_send = [](const recorded_trace& t) {
    double first = std::numeric_limits<double>::infinity();
    for (const auto& s : t.sessions)
      if (!s.requests.empty()) first = std::min(first, s.requests.front().t_send);
    return first;
  };
  std::vector<std::size_t> order(traces.size());
  std::vector<double> firsts(traces.size());
  for (std::size_t i = 0; i < traces.size(); ++i) {
    order[i] = i;
    firsts[i] = first_send(traces[i]);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return firsts[a] != firsts[b] ? firsts[a] < firsts[b] : traces[a].file < traces[b].file;
  });
  struct kept_at {
    recorded_request* r;
    std::size_t trace;
  };
  // Logged responses first (an echo gives way to them, whichever log comes first), then echoes.
  std::unordered_map<std::uint64_t, kept_at> kept, kept_messages;
  std::map<std::pair<std::string, std::string>, std::vector<double>> shifts;  // (machine, against) → send differences
  std::vector<std::int64_t> dropped_in(traces.size(), 0);
  auto merge = [](token_counts& a, const token_counts& b) {
    a = {std::max(a.input, b.input),   std::max(a.cache_read, b.cache_read), std::max(a.cache_write, b.cache_write),
         std::max(a.output, b.output), std::max(a.reasoning, b.reasoning), std::max(a.cache_write_1h, b.cache_write_1h)};
  };
  for (const bool echoes : {false, true}) {
    for (const std::size_t ti : order) {
      auto& t = traces[ti];
      std::int64_t here = 0;
      for (auto& s : t.sessions) {
        // Marks first (the kept requests are in earlier sessions, whose vectors do not move), then
        // erases, then keeps what is left.
        std::vector<bool> repeat(s.requests.size(), false);
        std::size_t marked = 0;
        for (std::size_t k = 0; k < s.requests.size(); ++k) {
          const auto& r = s.requests[k];
          if (r.echo != echoes || r.response_key == 0) continue;
          auto it = kept.find(r.response_key);
          if (it == kept.end() && echoes && r.echo_key != 0) {
            const auto m = kept_messages.find(r.echo_key);
            if (m == kept_messages.end()) continue;
            it = m;
          } else if (it == kept.end()) {
            continue;
          }
          merge(it->second.r->tokens, r.tokens);
          if (offsets && traces[it->second.trace].machine != t.machine)
            shifts[{t.machine, traces[it->second.trace].machine}].push_back(r.t_send - it->second.r->t_send);
          repeat[k] = true;
          ++marked;
        }
        if (marked > 0) {
          const recorded_request* base = s.requests.data();  // remove_if tests each element in its place
          std::erase_if(s.requests, [&](const recorded_request& r) { return repeat[static_cast<std::size_t>(&r - base)]; });
          here += static_cast<std::int64_t>(marked);
        }
        for (auto& r : s.requests) {
          if (r.echo != echoes || r.response_key == 0) continue;
          kept.emplace(r.response_key, kept_at{&r, ti});
          if (r.echo_key != 0) kept_messages.emplace(r.echo_key, kept_at{&r, ti});
        }
      }
      dropped_in[ti] += here;
    }
  }
  std::int64_t dropped = 0;
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    if (dropped_in[ti] == 0) continue;
    auto& t = traces[ti];
    dropped += dropped_in[ti];
    t.summary.skipped[std::string(repeated_response_reason)] += dropped_in[ti];
    t.summary.requests -= dropped_in[ti];
    detail::drop_empty_sessions(t);
  }
  if (offsets)
    for (auto& [pair, d] : shifts) {
      std::sort(d.begin(), d.end());
      const std::size_t n = d.size();
      const double median = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
      offsets->push_back({pair.first, pair.second, static_cast<std::int64_t>(n), median});
    }
  return dropped;
}

std::vector<recorded_trace> import_machines(const std::vector<machine_root>& roots, trace_format format,
                                            import_notes* notes, unsigned threads) {
  namespace fs = std::filesystem;
  // What to read, in order: streams, files, the files under folders (an opencode folder is one log).
  std::vector<log_input> inputs;
  std::vector<fs::path> files;
  for (const auto& [machine, p] : roots) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (p == "-" || (!ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st))) {
      inputs.push_back({p, true, false, format, machine});
      continue;
    }
    if (!fs::exists(p, ec)) throw trace_error(p.string(), 0, "no such file or directory");
    if (fs::is_directory(p, ec) && !is_opencode_folder(p)) {
      // Hidden files, licences and notes beside the logs are not logs.
      const auto under = files_under(p, [](const fs::path& f) {
        return f.filename().string().front() != '.' && f.filename() != "LICENSE" && f.extension() != ".md";
      });
      if (under.empty()) throw trace_error(p.string(), 0, "directory holds no log files");
      for (const auto& f : under) inputs.push_back({f, false, true, format, machine});
      files.insert(files.end(), under.begin(), under.end());
    } else {
      inputs.push_back({p, false, false, format, machine});
      if (fs::is_regular_file(p, ec)) files.push_back(p);
    }
  }
  check_import_size(files);
  return import_inputs(inputs, notes, threads);
}

std::vector<recorded_trace> import_traces(const std::vector<std::filesystem::path>& paths, trace_format format,
                                          import_notes* notes, unsigned threads) {
  std::vector<machine_root> roots;
  roots.reserve(paths.size());
  for (const auto& p : paths) roots.push_back({"", p});
  return import_machines(roots, format, notes, threads);
}

std::vector<log_location> default_log_locations() {
  namespace fs = std::filesystem;
  std::vector<log_location> out;
  const char* home_env = std::getenv("HOME");
  const fs::path home = home_env && *home_env ? fs::path(home_env) : fs::path();
  auto add = [&](const char* agent, const fs::path& p) {
    std::error_code ec;
    if (p.empty() || !fs::exists(p, ec)) return;
    for (const auto& l : out)
      if (fs::equivalent(l.path, p, ec)) return;
    out.push_back({agent, p});
  };
  if (const char* c = std::getenv("CLAUDE_CONFIG_DIR"); c && *c) {
    std::string dirs = c;
    for (std::size_t start = 0; start <= dirs.size();) {
      const auto comma = std::min(dirs.find(',', start), dirs.size());
      auto d = dirs.substr(start, comma - start);
      d.erase(0, d.find_first_not_of(" \t"));
      d.erase(d.find_last_not_of(" \t") + 1);
      if (!d.empty()) add("claude-code", fs::path(d) / "projects");
      start = comma + 1;
    }
  } else if (!home.empty()) {
    add("claude-code", home / ".config" / "claude" / "projects");
    add("claude-code", home / ".claude" / "projects");
  }
  if (const char* c = std::getenv("CODEX_HOME"); c && *c) add("codex", fs::path(c) / "sessions");
  else if (!home.empty()) add("codex", home / ".codex" / "sessions");
  fs::path opencode;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) opencode = fs::path(x) / "opencode";
  else if (!home.empty()) opencode = home / ".local" / "share" / "opencode";
  std::error_code ec;
  if (!opencode.empty() && fs::exists(opencode / "opencode.db", ec)) add("opencode", opencode / "opencode.db");
  else if (!opencode.empty()) add("opencode", opencode / "storage");
  return out;
}

std::vector<recorded_trace> import_default_logs(const std::vector<log_location>& places, import_notes* notes,
                                                unsigned threads) {
  namespace fs = std::filesystem;
  std::vector<log_input> inputs;
  std::vector<recorded_trace> opencode;
  for (const auto& p : places) {
    if (p.agent == "opencode") {  // a database that cannot be read is said, and the other places read
      try {
        opencode.push_back(import_any(p.path, trace_format::opencode, false));
      } catch (const trace_error& e) {
        if (notes) notes->not_logs.push_back({p.path.string(), 0, e.what()});
      }
      continue;
    }
    std::vector<fs::path> files;
    try {
      files = files_under(p.path, [](const fs::path& f) { return f.extension() == ".jsonl"; });
      check_import_size(files);
    } catch (const trace_error& e) {  // an unreadable folder: the others are still read, and it is said
      if (notes) notes->not_logs.push_back({p.path.string(), 0, e.what()});
      continue;
    }
    const auto format = p.agent == "codex" ? trace_format::codex : trace_format::claude_code;
    for (const auto& f : files) inputs.push_back({f, false, true, format, ""});
  }
  // The same rule as for a folder named: a file with no request stays, without sessions (its
  // cut-offs count); a file that is no log is passed over and listed.
  auto out = import_inputs(inputs, notes, threads, std::move(opencode), false);
  if (std::all_of(out.begin(), out.end(), holds_nothing)) out.clear();
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
      if (r.tokens.cache_write_1h > 0) j["cache_write_1h"] = r.tokens.cache_write_1h;
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
