// The plugin's settings, read from slurm.conf's SchedulerParameters
// (keys easypp_*; every other key belongs to Slurm and is ignored here).
// Pure C++ without Slurm headers, so it can be tested on its own.
//
// Bad or unknown easypp_* values never stop slurmctld: they are reported as
// warnings and the default is kept.
//
// The scheduling knobs (window, metric, history, fullness, fallback,
// propagation, correction, sjbf, safe, safe_after, plan) are not parsed here: they are
// handed to the scheduling core's own apply_knob(), so the plugin and
// easypp-sim accept exactly the same values.
//
// Slurm reads SchedulerParameters by substring search (xstrcasestr), so no
// easypp key may contain a key Slurm looks for (e.g. "easypp_bf_window="
// would also set bf_window). slurm_keys() lists the keys Slurm 22.05 greps
// for; the unit tests check every easypp key against it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "easypp/policy.h"

namespace easypp::plugin {

struct PluginConfig {
  /// Seconds between periodic scheduling cycles (easypp_interval). A cycle
  /// also runs at every running job's predicted end (the correction timer).
  int interval = 30;
  /// Backfill candidates examined per cycle (easypp_max_job_test), over all
  /// partitions; like bf_max_job_test.
  int max_job_test = 500;
  /// Wall-clock budget of one cycle in seconds, sleeps while the locks are
  /// yielded included (easypp_max_time); like bf_max_time.
  int max_time = 30;
  /// Yield the locks after holding them this long (easypp_yield_interval,
  /// microseconds, like bf_yield_interval) ...
  int yield_interval_usec = 2000000;
  /// ... for this long (easypp_yield_sleep, microseconds, like bf_yield_sleep).
  int yield_sleep_usec = 500000;
  /// Persist the learned history in StateSaveLocation (easypp_state=on|off).
  bool state = true;

  /// The policy and predictor (preset easy++ plus the easypp_* knobs).
  SchedulerConfig sched = default_scheduler();

  static constexpr int kMinInterval = 1;
  static constexpr int kMaxInterval = 3600;

  static SchedulerConfig default_scheduler();

  /// "interval=30s window=2 ..." one-line summary for the log (starts with
  /// the interval; the integration tests rely on that).
  std::string describe() const;
};

struct ParsedConfig {
  PluginConfig config;
  std::vector<std::string> warnings;  ///< one line each, for error()
};

/// Parse a SchedulerParameters string ("a=1,easypp_interval=5,b"). A null or
/// empty string gives the defaults. Later occurrences of a key win; a bad
/// value sets the key back to its default (and warns).
ParsedConfig parse_scheduler_parameters(const char* params);

/// Every easypp_* key understood (without "=").
std::vector<std::string> known_keys();

/// The SchedulerParameters keys Slurm 22.05 itself searches for (as Slurm
/// spells them, some with a trailing '='), for the substring check.
const std::vector<std::string>& slurm_keys();

}  // namespace easypp::plugin
