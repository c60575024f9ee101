#pragma once

namespace nf {

namespace detail {

// Every byte's hexadecimal value, -1 for a byte that is no digit: one load per digit where
// a uuid's 32 digits are read (each id in each batch's arrays).
struct hex_digits {
  signed char value[256];
  constexpr hex_digits() : value{} {
    for (int c = 0; c < 256; ++c)
      value[c] = -1;
    for (int d = 0; d < 10; ++d)
      value['0' + d] = static_cast<signed char>(d);
    for (int d = 0; d < 6; ++d) {
      value['a' + d] = static_cast<signed char>(10 + d);
      value['A' + d] = static_cast<signed char>(10 + d);
    }
  }
};

inline constexpr hex_digits hex_digit_values{};

} // namespace detail

/// The value of one hexadecimal digit, or -1 when `c` is none.
constexpr int hex_value(char c) {
  return detail::hex_digit_values.value[static_cast<unsigned char>(c)];
}

} // namespace nf
