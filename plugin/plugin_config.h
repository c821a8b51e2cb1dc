// The plugin's settings, read from slurm.conf's SchedulerParameters
// (keys easypp_*; every other key belongs to Slurm and is ignored here).
// Pure C++ without Slurm headers, so it can be tested on its own.
//
// Bad or unknown easypp_* values never stop slurmctld: they are reported as
// warnings and the default is kept.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace easypp::plugin {

struct PluginConfig {
  /// Seconds between periodic scheduling cycles (easypp_interval).
  int interval = 10;

  static constexpr int kMinInterval = 1;
  static constexpr int kMaxInterval = 3600;

  /// "interval=10s" style one-line summary for the log.
  std::string describe() const;
};

struct ParsedConfig {
  PluginConfig config;
  std::vector<std::string> warnings;  ///< one line each, for error()
};

/// Parse a SchedulerParameters string ("a=1,easypp_interval=5,b"). A null or
/// empty string gives the defaults. Later occurrences of a key win.
ParsedConfig parse_scheduler_parameters(const char* params);

}  // namespace easypp::plugin
