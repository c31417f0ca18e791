// Helpers shared by the loopcast commands.
#include "cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fnmatch.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <streambuf>

namespace loopcast::cli {

CLI::Validator time_zone_given() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t") == std::string::npos)
          return "an empty time zone: give an IANA name (UTC, Europe/Berlin), or leave the option out for the "
                 "machine's";
        return {};
      },
      "IANA ZONE");
}

CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        const char* b = text.data();
        const char* e = b + text.size();
        const auto r = std::from_chars(b, e, v);
        if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v))
          return fmt::format("expected a finite number, found \"{}\"", text);
        if (v < lo || v > hi) return fmt::format("{} is not in [{}, {}]", text, lo, hi);
        return {};
      },
      fmt::format("NUMBER in [{} - {}]", lo, hi));
}

CLI::Validator seed_digits() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* b = text.data();
        const char* e = b + text.size();
        const auto r = std::from_chars(b, e, v);
        if (text.empty() || text[0] == '-' || text[0] == '+' || r.ec != std::errc() || r.ptr != e)
          return fmt::format("expected a whole number from 0 to 18446744073709551615, found \"{}\"", text);
        return {};
      },
      "SEED");
}

preset_library library(const globals& g) {
  if (g.models_dir.empty()) return preset_library::standard();
  return preset_library({g.models_dir});
}

namespace {
// A reference that looks like a path (a ".json" name or a '/') names a file: one that is not there
// is "no such file", not an unknown preset.
bool names_missing_file(const std::string& ref) {
  std::error_code ec;
  return (ref.ends_with(".json") || ref.find('/') != std::string::npos) && !std::filesystem::exists(ref, ec);
}
} // namespace

scenario scenario_ref(const globals& g, const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (names_missing_file(ref)) {
    std::vector<std::string> names;
    for (const auto& e : lib.entries())
      if (e.kind == preset_kind::scenario) names.push_back(e.name);
    throw config_error(ref, "", fmt::format("no such file (from {}; a scenario is a .json file or a preset name: {})",
                                            std::filesystem::current_path(ec).string(), fmt::join(names, ", ")));
  }
  scenario s = std::filesystem::is_regular_file(ref, ec) ? load_scenario_file(ref, lib) : lib.load_scenario(ref);
  if (g.attempt_budget > 0) s.attempt_budget = g.attempt_budget;
  return s;
}

target target_ref(const preset_library& lib, const std::string& ref) { return lib.load_target_ref(ref); }

namespace {
// One --limit: [TARGET:]BUCKET=N, TARGET a name or a shell pattern ("claude-max-*").
struct limit_setting {
  std::string text, target, bucket;
  double value = 0;
};
limit_setting parse_limit(const std::string& s) {
  const auto eq = s.find('=');
  double v = 0;
  const char* end = s.data() + s.size();
  const auto [p, ec] = eq == std::string::npos ? std::from_chars(end, end, v) : std::from_chars(s.data() + eq + 1, end, v);
  if (eq == std::string::npos || eq == 0 || ec != std::errc{} || p != end || !(v >= 1 && v <= 1e12) || v != std::floor(v))
    throw std::invalid_argument(
        fmt::format("--limit {}: expected BUCKET=N or TARGET:BUCKET=N with N a whole number from 1 to 10^12", s));
  limit_setting l{s, "", s.substr(0, eq), v};
  if (const auto colon = l.bucket.rfind(':'); colon != std::string::npos) {
    l.target = l.bucket.substr(0, colon);
    l.bucket = l.bucket.substr(colon + 1);
    if (l.target.empty() || l.bucket.empty())
      throw std::invalid_argument(fmt::format("--limit {}: expected TARGET:BUCKET=N with a target and a bucket", s));
  }
  return l;
}
bool names_target(const limit_setting& l, const target& t) {
  return l.target.empty() || fnmatch(l.target.c_str(), t.name.c_str(), 0) == 0;
}
} // namespace

void set_bucket_limits(std::span<target* const> targets, const std::vector<std::string>& settings) {
  std::vector<limit_setting> parsed;
  for (const auto& s : settings) parsed.push_back(parse_limit(s));
  for (std::size_t i = 0; i < parsed.size(); ++i)  // a bucket set twice for one target: which one was meant?
    for (std::size_t j = 0; j < i; ++j)
      if (parsed[i].bucket == parsed[j].bucket)
        for (const auto* t : targets)
          if (names_target(parsed[i], *t) && names_target(parsed[j], *t) && t->find_bucket(parsed[i].bucket))
            throw std::invalid_argument(fmt::format("--limit {} and --limit {}: the bucket {} of {} is set twice",
                                                    parsed[j].text, parsed[i].text, parsed[i].bucket, t->name));
  for (const auto& l : parsed) {
    bool target_found = false, found = false;
    for (auto* t : targets) {
      if (!names_target(l, *t)) continue;
      target_found = true;
      if (auto* b = t->find_bucket(l.bucket)) {
        // The figure given is the cap in force now: a dated rule of the preset still scales it at
        // other dates (a replay of logs from before 2026-05-06 meets half of a Claude plan's
        // 5-hour cap), and the replay's notes say which rule applied.
        b->limit = l.value;
        b->limit_unpublished = false;
        found = true;
      }
    }
    std::vector<std::string> names;
    if (!target_found) {
      for (const auto* t : targets) names.push_back(t->name);
      const auto near = closest_names(l.target, names);
      throw std::invalid_argument(fmt::format("--limit {}: no target named \"{}\"{} (targets: {})", l.text, l.target,
                                              near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, " or ")),
                                              fmt::join(names, ", ")));
    }
    if (!found) {
      for (auto* t : targets)
        if (names_target(l, *t))
          for (const auto& b : t->limits)
            if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
      const auto near = closest_names(l.bucket, names);
      throw std::invalid_argument(fmt::format("--limit {}: no target{} has a bucket \"{}\"{} (buckets: {})", l.text,
                                              l.target.empty() ? "" : " matching " + l.target, l.bucket,
                                              near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, " or ")),
                                              names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
  }
}

void check_limits_set(std::span<target* const> targets) {
  std::vector<std::string> missing, examples;
  for (const auto* t : targets)
    for (const auto& b : t->limits)
      if (b.limit_unpublished) {
        const auto item = fmt::format("{}:{}", t->name, b.name);
        if (std::find(missing.begin(), missing.end(), item) == missing.end()) {
          missing.push_back(item);
          examples.push_back(fmt::format("--limit {}=N", item));
        }
      }
  if (missing.empty()) return;
  if (missing.size() == 1) {
    const auto& t = missing[0];
    throw std::invalid_argument(fmt::format("target {}: bucket {} has no published limit; set it with --limit {}=N "
                                            "(docs/plans.md)",
                                            t.substr(0, t.rfind(':')), t.substr(t.rfind(':') + 1), t.substr(t.rfind(':') + 1)));
  }
  throw std::invalid_argument(fmt::format("{} buckets have no published limit: {}; set each (e.g. {}), or one for every "
                                          "target with --limit BUCKET=N (docs/plans.md)",
                                          missing.size(), fmt::join(missing, ", "), fmt::join(examples, " ")));
}

retry_policy client_ref(const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return load_client_file(ref);
  return lib.load_client(ref);
}

workload workload_ref(const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return load_workload_file(ref);
  return lib.load_workload(ref);
}

namespace {

// Every byte written, or the error number of the write that failed (0: none).
int write_all(int fd, const char* data, std::size_t size) noexcept {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// A stream's bytes to a file descriptor, 64 KiB at a time; the first failed write is kept (and
// the stream fails) for finish() to report.
class fd_sink : public std::streambuf {
public:
  fd_sink(int fd, const std::string& path) : fd_(fd), path_(path), buf_(std::size_t{1} << 16) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  // Writes what is left; throws output_error naming the path when a write failed.
  void finish() {
    flush();
    if (error_ != 0) throw output_error(fmt::format("{}: write failed: {}", path_, std::strerror(error_)));
  }

protected:
  int_type overflow(int_type c) override {
    if (!flush()) return traits_type::eof();
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(buf_.size())) return std::streambuf::xsputn(s, n);
    if (!flush()) return 0;  // a large block is written as it is
    if (error_ == 0) error_ = write_all(fd_, s, static_cast<std::size_t>(n));
    return error_ == 0 ? n : 0;
  }
  int sync() override { return flush() ? 0 : -1; }

private:
  bool flush() noexcept {
    const auto n = static_cast<std::size_t>(pptr() - pbase());
    if (n > 0 && error_ == 0) error_ = write_all(fd_, pbase(), n);
    setp(buf_.data(), buf_.data() + buf_.size());
    return error_ == 0;
  }
  int fd_;
  const std::string& path_;
  std::vector<char> buf_;
  int error_ = 0;
};

// What `write` produces, to fd; throws output_error naming the path when a write failed.
void write_stream(int fd, const std::function<void(std::ostream&)>& write, const std::string& path) {
  fd_sink sink(fd, path);
  std::ostream os(&sink);
  write(os);
  sink.finish();
}

} // namespace

void check_not_an_input(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-" || !fs::exists(path, ec)) return;
  const auto out = fs::weakly_canonical(path, ec);
  for (const auto& in : inputs) {
    if (in.empty() || in == "-") continue;
    std::error_code e2;
    if (!fs::exists(in, e2)) continue;
    if (fs::equivalent(path, in, e2))
      throw output_error(fmt::format("{}: is also an input{}; refusing to overwrite it", path,
                                     in == path ? std::string() : " (" + in + ")"));
    // A file inside an input folder (a log beside the logs read, a preset of --models).
    if (fs::is_directory(in, e2)) {
      const auto dir = fs::weakly_canonical(in, e2);
      const auto rel = out.lexically_relative(dir);
      if (!e2 && !rel.empty() && *rel.begin() != ".." && rel != ".")
        throw output_error(fmt::format("{}: lies in the input folder {}; refusing to overwrite it", path, in));
    }
  }
}

std::vector<std::string> with_library_inputs(const globals& g, std::vector<std::string> inputs) {
  inputs.push_back(g.models_dir.empty() ? default_models_dir().string() : g.models_dir);
  if (const char* list = std::getenv("LOOPCAST_PRICE_LIST"); list && *list) inputs.emplace_back(list);
  return inputs;
}

namespace {

// Where a write to `path` lands: the file a chain of symlinks ends at (written in place of the
// link would replace the link, not update its target), or `path` itself.
std::filesystem::path write_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return p;
    const auto next = fs::read_symlink(p, ec);
    if (ec) return p;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  throw output_error(fmt::format("{}: too many levels of symbolic links", path));
}

} // namespace

void write_output(const std::string& path, const std::string& text, const std::vector<std::string>& inputs) {
  write_output(path, [&text](std::ostream& os) { os.write(text.data(), static_cast<std::streamsize>(text.size())); },
               inputs);
}

void write_output(const std::string& path, const std::function<void(std::ostream&)>& write,
                  const std::vector<std::string>& inputs) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw output_error("standard output: write failed");
    return;
  }
  check_not_an_input(path, inputs);
  namespace fs = std::filesystem;
  const fs::path target = write_target(path);
  struct stat st{};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  auto write_in_place = [&](int flags) {
    const int fd = ::open(target.c_str(), flags | O_CLOEXEC);
    if (fd < 0) throw output_error(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
    try {
      write_stream(fd, write, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) throw output_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  };
  if (exists && !S_ISREG(st.st_mode)) {  // a device or a pipe (/dev/stdout, a FIFO): written in place
    write_in_place(O_WRONLY);
    return;
  }
  // A regular file: written beside it under a short temporary name (a long name plus a suffix could
  // pass the folder's limit), every write checked, then renamed over it, so that a failed write
  // never leaves a truncated file (nor destroys the old one). It keeps the old file's mode; a file
  // with other hard links is rewritten in place once the copy is known to fit, so that every name
  // sees the new content.
  const auto dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string tmp = (dir / ".loopcast-XXXXXX").string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw output_error(fmt::format("{}: cannot create a file in its folder: {}", path, std::strerror(errno)));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  try {
    write_stream(fd, write, path);
    if (::fsync(fd) != 0 && errno != EINVAL)
      throw output_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw output_error(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  }
  if (exists && st.st_nlink > 1) {
    ::unlink(tmp.c_str());  // the space is known to be there; the links keep one file
    write_in_place(O_WRONLY | O_TRUNC);
    return;
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw output_error(fmt::format("{}: cannot write: {}", path, std::strerror(err)));
  }
}

trace_format format_of(const std::string& name) {
  if (name.empty()) return trace_format::automatic;
  if (auto f = parse_name<trace_format>(name)) return *f;
  throw std::invalid_argument(fmt::format("unknown --format \"{}\" (expected {})", name, spelling_list<trace_format>()));
}

} // namespace loopcast::cli
