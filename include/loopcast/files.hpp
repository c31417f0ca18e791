// loopcast — reading a whole text file (a preset, a price list, a captured response) the way the
// library does: bounded, with errors that name the file.
#pragma once

#include <cstdint>
#include <string>

namespace loopcast {

/// Largest file read whole (presets, price lists, captures): 64 MiB. Logs are streamed instead.
inline constexpr std::uintmax_t max_text_file_bytes = std::uintmax_t{64} << 20;

/// The file's bytes. Throws config_error naming the file when it cannot be read or is larger than
/// max_text_file_bytes.
std::string read_text_file(const std::string& path);

} // namespace loopcast
