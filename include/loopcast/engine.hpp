// loopcast — a local serving engine under concurrency (vLLM, SGLang, llama.cpp on one GPU).
//
// Without an engine a local target serves every request as if it were alone. With one, the
// engine holds at most max_sequences requests at once and their KV cache must fit its pool;
// further requests wait in a first-come queue (the wait counts in their TTFT; it is not a 429).
//   prefill  is done one request at a time, first come first served: a request's prefill starts
//            when the previous one's ends and takes its single-request prefill time from the
//            target's speed model (so TTFT grows with the queue);
//   decode   is shared: with n sequences decoding, each advances at 1 / (1 + batch_slowdown·(n−1))
//            of its single-request speed (processor sharing), so the aggregate throughput
//            n / (1 + batch_slowdown·(n−1)) × single grows with n towards single / batch_slowdown.
// Memory: weights + overhead + the KV pool must fit the GPU, and the pool must hold one request
// of the whole context window; a preset that cannot fit is refused when it is loaded.
#pragma once

#include <cstdint>
#include <string>

namespace loopcast {

struct gpu_memory {
  double gpu_gb = 0;              ///< device memory, in GB (10^9 bytes)
  double weights_gb = 0;          ///< model weights as loaded, in GB
  double overhead_gb = 0;         ///< activations, CUDA graphs, runtime buffers, in GB
  double kv_pool_gb = 0;          ///< memory set aside for the KV cache, in GB
  double kv_bytes_per_token = 0;  ///< KV cache per token of context (all layers), in bytes
};

struct engine_config {
  std::string name;                  ///< e.g. "vllm"
  std::int32_t max_sequences = 1;    ///< most requests in a batch at once (max_num_seqs, --parallel)
  double batch_slowdown = 0;         ///< per extra decoding sequence, fractional slowdown of each
  gpu_memory memory;
};

/// Tokens the KV pool holds.
inline std::int64_t kv_pool_tokens(const gpu_memory& m) noexcept {
  return m.kv_bytes_per_token > 0 ? static_cast<std::int64_t>(m.kv_pool_gb * 1e9 / m.kv_bytes_per_token) : 0;
}
/// Memory the engine occupies on the GPU (weights, overhead and the whole pool), in GB.
inline double engine_vram_gb(const gpu_memory& m) noexcept { return m.weights_gb + m.overhead_gb + m.kv_pool_gb; }

/// Per-sequence decode speed factor with n sequences decoding (1 for n <= 1).
inline double decode_share(const engine_config& e, std::int64_t n) noexcept {
  return n <= 1 ? 1.0 : 1.0 / (1.0 + e.batch_slowdown * static_cast<double>(n - 1));
}

/// What the engine did during a simulation.
struct engine_stats {
  std::int32_t peak_sequences = 0;  ///< most requests in the engine at once
  std::int32_t peak_queue = 0;      ///< most requests waiting for a slot or KV space
  std::int64_t peak_kv_tokens = 0;  ///< most KV-cache tokens reserved at once
  double peak_kv_gb = 0;            ///< the same, in GB
  double vram_gb = 0;               ///< weights + overhead + pool (what nvidia-smi shows)
  double queue_wait_s = 0;          ///< summed time requests waited for a slot or KV space
};

} // namespace loopcast
