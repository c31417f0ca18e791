// loopcast — token classes (docs/model.md §2).
//
// Every request is described by six counts. prompt = input + cache_read + cache_write +
// cache_write_1h is the request's context; output + reasoning is what the model generated. A cache
// write has a lifetime: cache_write is a write of the provider's default lifetime (5 minutes where
// a provider sells more than one), cache_write_1h a 1-hour write, priced at its own rate. Rate
// limits do not tell the two apart: a bucket that counts cache_write counts both.
#pragma once

#include "loopcast/fields.hpp"
#include "loopcast/names.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace loopcast {

/// The six token classes of a request.
enum class token_class : std::uint8_t {
  input,          ///< uncached prompt tokens, billed at the input price
  cache_read,     ///< prompt tokens served from the prefix cache
  cache_write,    ///< prompt tokens written to the cache (default lifetime) where a provider charges for that
  output,         ///< visible output tokens
  reasoning,      ///< thinking tokens (billed as output unless priced separately)
  cache_write_1h  ///< prompt tokens written to the cache with a 1-hour lifetime
};
template <>
struct enum_names<token_class> {
  static constexpr std::array table{enum_entry{token_class::input, "input"},
                                    enum_entry{token_class::cache_read, "cache_read"},
                                    enum_entry{token_class::cache_write, "cache_write"},
                                    enum_entry{token_class::output, "output"},
                                    enum_entry{token_class::reasoning, "reasoning"},
                                    enum_entry{token_class::cache_write_1h, "cache_write_1h"}};
};
inline constexpr std::size_t token_class_count = enum_names<token_class>::table.size();
inline constexpr auto all_token_classes = enum_values<token_class>();

/// Token counts of one request (or a sum of requests), in tokens.
struct token_counts {
  std::int64_t input = 0;
  std::int64_t cache_read = 0;
  std::int64_t cache_write = 0;
  std::int64_t output = 0;
  std::int64_t reasoning = 0;
  std::int64_t cache_write_1h = 0;

  /// Prompt (= context) tokens: input + cache_read + both kinds of cache write.
  constexpr std::int64_t prompt() const noexcept { return input + cache_read + cache_write + cache_write_1h; }
  /// Cache writes of every lifetime.
  constexpr std::int64_t cache_writes() const noexcept { return cache_write + cache_write_1h; }
  /// Generated tokens: output + reasoning.
  constexpr std::int64_t generated() const noexcept { return output + reasoning; }
  /// Every class summed.
  constexpr std::int64_t total() const noexcept { return prompt() + generated(); }

  constexpr std::int64_t operator[](token_class c) const noexcept {
    switch (c) {
    case token_class::input: return input;
    case token_class::cache_read: return cache_read;
    case token_class::cache_write: return cache_write;
    case token_class::output: return output;
    case token_class::reasoning: return reasoning;
    case token_class::cache_write_1h: return cache_write_1h;
    }
    return 0;
  }
  constexpr token_counts& operator+=(const token_counts& o) noexcept {
    input += o.input;
    cache_read += o.cache_read;
    cache_write += o.cache_write;
    output += o.output;
    reasoning += o.reasoning;
    cache_write_1h += o.cache_write_1h;
    return *this;
  }
  friend constexpr token_counts operator+(token_counts a, const token_counts& b) noexcept {
    return a += b;
  }
  friend constexpr bool operator==(const token_counts&, const token_counts&) = default;
};
/// A record's token_counts member is these five columns.
template <>
struct record_fields<token_counts> {
  static constexpr std::tuple list{
      field{"input", &token_counts::input, "tokens"},
      field{"cache_read", &token_counts::cache_read, "tokens"},
      field{"cache_write", &token_counts::cache_write, "tokens"},
      field{"cache_write_1h", &token_counts::cache_write_1h, "tokens"},
      field{"output", &token_counts::output, "tokens"},
      field{"reasoning", &token_counts::reasoning, "tokens"}};
};

/// The class a rate limit counts a class as: cache_write for both lifetimes of a cache write (no
/// provider's limits tell them apart), the class itself otherwise.
constexpr token_class counted_as(token_class c) noexcept {
  return c == token_class::cache_write_1h ? token_class::cache_write : c;
}

/// The classes a rate limit tells apart (every class but cache_write_1h), in the table's order.
inline constexpr std::array counted_token_classes{token_class::input, token_class::cache_read, token_class::cache_write,
                                                  token_class::output, token_class::reasoning};

/// A set of token classes (which classes a rate-limit bucket counts). cache_write stands for
/// every cache write: inserting cache_write_1h inserts cache_write (counted_as).
class class_set {
public:
  constexpr class_set() = default;
  constexpr class_set(std::initializer_list<token_class> cs) noexcept {
    for (auto c : cs) bits_ = static_cast<std::uint8_t>(bits_ | bit(c));
  }
  static constexpr class_set all() noexcept {
    return {token_class::input, token_class::cache_read, token_class::cache_write,
            token_class::output, token_class::reasoning};
  }
  constexpr bool contains(token_class c) const noexcept { return (bits_ & bit(c)) != 0; }
  constexpr bool empty() const noexcept { return bits_ == 0; }
  constexpr void insert(token_class c) noexcept { bits_ = static_cast<std::uint8_t>(bits_ | bit(c)); }
  /// True if output or reasoning is in the set.
  constexpr bool counts_generated() const noexcept {
    return contains(token_class::output) || contains(token_class::reasoning);
  }
  /// Sum of the prompt classes (input, cache_read, cache writes) in the set, in tokens.
  constexpr std::int64_t prompt_part(const token_counts& t) const noexcept {
    return (contains(token_class::input) ? t.input : 0) +
           (contains(token_class::cache_read) ? t.cache_read : 0) +
           (contains(token_class::cache_write) ? t.cache_writes() : 0);
  }
  /// Sum of the generated classes (output, reasoning) in the set, in tokens.
  constexpr std::int64_t generated_part(const token_counts& t) const noexcept {
    return (contains(token_class::output) ? t.output : 0) +
           (contains(token_class::reasoning) ? t.reasoning : 0);
  }
  /// Sum of every class in the set, in tokens.
  constexpr std::int64_t sum(const token_counts& t) const noexcept {
    return prompt_part(t) + generated_part(t);
  }
  constexpr std::uint8_t bits() const noexcept { return bits_; }
  friend constexpr bool operator==(class_set, class_set) = default;

private:
  static constexpr std::uint8_t bit(token_class c) noexcept {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(counted_as(c)));
  }
  std::uint8_t bits_ = 0;
};

/// What a recorded response held, in the kinds of output a model writes (a bit set; 0: unknown,
/// as in synthetic sessions). Hosted APIs answer a response that thinks or calls a tool at
/// another pace than plain text (speed_model::output).
enum output_kind : std::uint8_t { output_thinking = 1, output_text = 2, output_tool_use = 4 };

} // namespace loopcast
