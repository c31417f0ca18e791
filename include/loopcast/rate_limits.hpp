// loopcast — rate-limit buckets (docs/model.md §3): every piece of limits/ in one include.
//
//   limits/bucket_config.hpp   what a bucket counts, its algorithm, charging and oversize rules
//   limits/bucket_law.hpp      the concept the simulation needs of a bucket (the extension seam)
//   limits/token_bucket.hpp, fixed_window.hpp, sliding_window.hpp, concurrency.hpp
//                              the built-in algorithms, one small class each
//   limits/bucket.hpp          a preset-configured bucket: one of them plus the oversize rule
//
// A request is admitted iff every bucket can take its charge now; otherwise it gets a 429 with
// retry_after = the largest of the per-bucket waits. A charge larger than a bucket's whole
// capacity follows the bucket's oversize rule: refused outright ("request too large"), refused
// with a 429 on every attempt, or admitted once the bucket is full, driving its level below zero
// (a debt that refill repays).
#pragma once

#include "loopcast/limits/bucket.hpp"
#include "loopcast/limits/bucket_config.hpp"
#include "loopcast/limits/bucket_law.hpp"
