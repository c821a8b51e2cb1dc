// Text from Slurm and from users is bytes, not UTF-8: a job name, a user
// name or a comment may hold any byte (sbatch -J $'a\xff' is accepted, and
// Slurm 22.05's squeue --json and sacct --json emit it raw). jansson refuses
// a whole document for one invalid byte in one string, so whoever hands
// such text to jansson repairs it first, here: valid UTF-8 passes through
// unchanged, and each byte of an invalid sequence (a stray continuation
// byte, a truncated or overlong sequence, a surrogate, a code point above
// U+10FFFF) becomes U+FFFD. Header-only: the fuzz targets and the plugin use
// it without a library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace easypp::plugin {

/// Length of the valid UTF-8 sequence at s[i], or 0 if none starts there.
inline std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  const unsigned char c = p[i];
  std::size_t len = 0;
  std::uint32_t cp = 0, min = 0;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
  else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
  else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
  if (len == 0 || i + len > n) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((p[i + k] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (p[i + k] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

/// `s` with each byte of an invalid sequence replaced by U+FFFD.
inline std::string valid_utf8(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence(s, i);
    if (len) {
      o.append(s.data() + i, len);
      i += len;
    } else {
      o += "\xef\xbf\xbd";
      ++i;
    }
  }
  return o;
}

/// Repair *s in place; true if anything was replaced. ASCII-only text (the
/// usual case) is checked without a copy.
inline bool repair_utf8(std::string* s) {
  std::size_t i = 0;
  while (i < s->size()) {
    const std::size_t len = utf8_sequence(*s, i);
    if (len == 0) break;
    i += len;
  }
  if (i == s->size()) return false;
  *s = valid_utf8(*s);
  return true;
}

}  // namespace easypp::plugin
