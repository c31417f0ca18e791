#include "loopcast/files.hpp"

#include "loopcast/errors.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace loopcast {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw config_error(path, "", fmt::format("cannot read file: {}", ec.message()));
  if (size > max_text_file_bytes)
    throw config_error(path, "", fmt::format("file is {} bytes; files larger than {} bytes are refused", size,
                                             max_text_file_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path, "", "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace loopcast
