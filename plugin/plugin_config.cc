#include "plugin_config.h"

#include <cerrno>
#include <cstdlib>
#include <string>

namespace easypp::plugin {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whole-string integer in [lo, hi]; false if malformed or out of range.
bool parse_int(std::string_view v, long lo, long hi, long* out) {
  if (v.empty() || v.size() > 20) return false;
  const std::string s(v);
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0' || x < lo || x > hi) return false;
  *out = x;
  return true;
}

}  // namespace

std::string PluginConfig::describe() const {
  return "interval=" + std::to_string(interval) + "s";
}

ParsedConfig parse_scheduler_parameters(const char* params) {
  ParsedConfig r;
  if (params == nullptr) return r;
  std::string_view rest(params);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.rfind("easypp_", 0) != 0) continue;  // Slurm's own keys

    const std::size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));

    if (key == "easypp_interval") {
      long v = 0;
      if (parse_int(value, PluginConfig::kMinInterval, PluginConfig::kMaxInterval, &v)) {
        r.config.interval = int(v);
      } else {
        r.warnings.push_back("invalid easypp_interval='" + std::string(value) + "' (want " +
                             std::to_string(PluginConfig::kMinInterval) + ".." +
                             std::to_string(PluginConfig::kMaxInterval) +
                             " seconds), using " + std::to_string(r.config.interval));
      }
    } else {
      r.warnings.push_back("unknown SchedulerParameters key '" + std::string(key) +
                           "', ignored");
    }
  }
  return r;
}

}  // namespace easypp::plugin
