#include "util/progress.hpp"

#include <utility>

namespace loopcast {

namespace {
progress_handler installed;
} // namespace

void set_progress_handler(progress_handler handler) { installed = std::move(handler); }

namespace detail {
const progress_handler* current_progress_handler() noexcept { return installed ? &installed : nullptr; }
} // namespace detail

} // namespace loopcast
