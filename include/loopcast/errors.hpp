// loopcast — error hierarchy.
//
// Every error the library raises derives from loopcast::error. Errors are raised at the
// boundary (loading a preset, reading a log, starting a simulation) and always say where:
// a preset error names the file and the JSON pointer of the bad value, a log error the file
// and line. The simulation's hot loop never throws.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace loopcast {

/// Base of every exception loopcast throws.
class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A preset, scenario or option is invalid: "FILE: /json/pointer: what was expected, what was found".
class config_error : public error {
public:
  config_error(std::string file, std::string pointer, const std::string& what)
      : error(pointer.empty() ? file + ": " + what : file + ": " + pointer + ": " + what), file_(std::move(file)),
        pointer_(std::move(pointer)), reason_(what) {}
  /// The file the bad value came from ("<inline>" when it was built in code).
  const std::string& file() const noexcept { return file_; }
  /// The JSON pointer (RFC 6901) of the bad value, "" for the whole document.
  const std::string& pointer() const noexcept { return pointer_; }
  /// The description without the location prefix.
  const std::string& reason() const noexcept { return reason_; }

private:
  std::string file_, pointer_, reason_;
};

/// A recorded session log cannot be read: "FILE:LINE: reason".
class trace_error : public error {
public:
  trace_error(std::string file, long line, const std::string& what)
      : error(line > 0 ? file + ":" + std::to_string(line) + ": " + what : file + ": " + what), file_(std::move(file)),
        line_(line) {}
  const std::string& file() const noexcept { return file_; }
  /// 1-based line (or row) number; 0 when the problem concerns the whole file.
  long line() const noexcept { return line_; }

private:
  std::string file_;
  long line_;
};

/// The simulation cannot run as configured (e.g. a session's request does not fit any option).
class simulation_error : public error {
public:
  using error::error;
};

} // namespace loopcast
