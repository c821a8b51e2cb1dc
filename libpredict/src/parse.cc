#include "easypp/parse.h"

#include <cerrno>
#include <cstdlib>

namespace easypp {

bool parse_int(std::string_view v, long long lo, long long hi, long long* out) {
  if (v.empty() || v.size() > 20) return false;
  const std::size_t digits_from = v[0] == '-' ? 1 : 0;
  if (digits_from == v.size()) return false;
  for (std::size_t i = digits_from; i < v.size(); ++i)
    if (v[i] < '0' || v[i] > '9') return false;
  const std::string s(v);
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

std::string ascii_lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return r;
}

bool parse_bool(std::string_view v, bool* out) {
  const std::string s = ascii_lower(v);
  if (s == "yes" || s == "on" || s == "true" || s == "1") {
    *out = true;
    return true;
  }
  if (s == "no" || s == "off" || s == "false" || s == "0") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace easypp
