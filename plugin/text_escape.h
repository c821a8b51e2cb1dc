// Untrusted text made safe to print on a terminal. User names, partition
// names, settings and anything else read from the plugin's status and state
// files reach easypp-ctl's text output; a control character in them (ESC
// starts a terminal escape sequence) must not reach the terminal as such.
// JSON output is escaped by jansson, except DEL and the C1 controls:
// json_printable() does those.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace easypp::plugin {

/// `s` with every C0 control character (U+0000..U+001F, newline and tab
/// included), DEL, C1 control character (U+0080..U+009F, encoded in UTF-8)
/// and byte that is not part of valid UTF-8 written as \xNN (one per byte).
/// Everything else (printable ASCII, backslashes included, and valid UTF-8)
/// passes unchanged: a name may spell "\x1b" itself, which is harmless.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  auto hex = [&out](unsigned char c) {
    char b[5];
    std::snprintf(b, sizeof b, "\\x%02x", c);
    out += b;
  };
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) hex(c);
      else out += char(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length, the smallest code point it may encode.
    std::size_t len = 0;
    unsigned cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1fu, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0fu, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07u, min = 0x10000;
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) ok = false;
      else cp = (cp << 6) | (p[i + k] & 0x3fu);
    }
    ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    if (!ok || cp <= 0x9f) {  // invalid, or a C1 control character
      for (std::size_t k = 0; k < (ok ? len : 1); ++k) hex(p[i + k]);
      i += ok ? len : 1;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

/// JSON text (as jansson writes it: valid UTF-8, C0 controls already
/// escaped) with DEL and the C1 control characters (U+0080..U+009F), which
/// jansson leaves raw, escaped as \u007f and \u0080..\u009f. They can only
/// occur inside strings, so the document keeps its meaning; other UTF-8
/// stays readable.
inline std::string json_printable(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(json[i]);
    const unsigned char n = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0;
    char b[8];
    if (c == 0x7f) {
      out += "\\u007f";
    } else if (c == 0xc2 && n >= 0x80 && n <= 0x9f) {
      std::snprintf(b, sizeof b, "\\u%04x", unsigned(n));
      out += b;
      ++i;
    } else {
      out += char(c);
    }
  }
  return out;
}

}  // namespace easypp::plugin
