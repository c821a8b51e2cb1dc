// The plugin's settings, read from slurm.conf's SchedulerParameters
// (keys easypp_*; every other key belongs to Slurm and is ignored here).
// Pure C++ without Slurm headers, so it can be tested on its own.
//
// One table of settings (plugin_config.cc) parses and renders every key:
// the scheduling knobs (easypp_window, easypp_plan, easypp_sjbf, ...) go
// through the core's own apply_knob()/knob_value() (config.h), so the plugin
// and easypp-sim accept exactly the same values; the plugin's own settings
// (interval, budgets, state) are rows of the same table. The status file
// carries the result as structured key/value pairs (settings()), which
// easypp-ctl reads back through the same table.
//
// Keys are matched case-insensitively, as Slurm matches its own. Bad or
// unknown easypp_* values never stop slurmctld: they are reported as
// warnings and the default is kept.
//
// Slurm reads SchedulerParameters by substring search (xstrcasestr), so no
// easypp key may contain a key Slurm looks for (e.g. "easypp_bf_window="
// would also set bf_window). slurm_keys() lists the keys Slurm 22.05 and
// 24.11 grep for; the unit tests check every easypp key against it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "easypp/config.h"

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
  /// Fairness caps on backfill candidates, per cycle, like sched/backfill's
  /// bf_max_job_user, bf_max_job_part, bf_max_job_assoc and
  /// bf_max_job_user_part: once this many of a user's (a partition's, an
  /// association's, a user's in one partition) jobs were tried for backfill
  /// in a cycle, its other jobs are skipped until the next cycle (0: no cap).
  /// Heads (reservations) and in-order starts are never capped.
  int max_job_user = 0;
  int max_job_part = 0;
  int max_job_assoc = 0;
  int max_job_user_part = 0;
  /// Planned starts published for squeue --start beyond each partition's
  /// head: the first N pending jobs of each partition get a projected start
  /// (easypp_publish_starts, 0: heads only). Estimates: nothing is reserved.
  int publish_starts = 100;
  /// Persist the learned history in StateSaveLocation (easypp_state=on|off).
  bool state = true;
  /// Permission bits of the state and status files (easypp_file_mode, octal):
  /// 0600 (SlurmUser and root) by default; 0640 or 0644 open them to
  /// SlurmUser's group or to everyone. Never writable or executable by others.
  int file_mode = 0600;

  /// The policy and predictor (preset site plus the easypp_* knobs).
  SchedulerConfig sched = default_scheduler();

  static constexpr int kMinInterval = 1;
  static constexpr int kMaxInterval = 3600;
  /// A user with no job for this long is forgotten (easypp_history_ttl):
  /// one year by default, so the history stays bounded over years of users.
  static constexpr Time kDefaultHistoryTtl = site::kHistoryTtl;

  /// The core's preset `site` (config.h), named sched/easypp: what
  /// `easypp-sim --scheduler site` replays.
  static SchedulerConfig default_scheduler();

  /// "interval=30s plan=prediction window=2 ..." one-line summary for the
  /// log: every setting, easypp_ prefix dropped, with its unit (starts with
  /// the interval; the integration tests rely on that).
  std::string describe() const;
  /// Every setting as SchedulerParameters spells it, in a fixed order:
  /// ("easypp_interval", "30"), ("easypp_window", "2"), ... Parsing these
  /// pairs back (apply_settings) gives the same configuration.
  std::vector<std::pair<std::string, std::string>> settings() const;
};

struct ParsedConfig {
  PluginConfig config;
  std::vector<std::string> warnings;  ///< one line each, for error()
};

/// Parse a SchedulerParameters string ("a=1,easypp_interval=5,b"). A null or
/// empty string gives the defaults. Later occurrences of a key win; a bad
/// value sets the key back to its default (and warns).
ParsedConfig parse_scheduler_parameters(const char* params);

/// Apply settings() pairs (from the status file) over the defaults, with
/// the same rules as parse_scheduler_parameters.
ParsedConfig apply_settings(const std::vector<std::pair<std::string, std::string>>& settings);

/// Every easypp_* key understood (without "=").
std::vector<std::string> known_keys();

/// How sched/easypp treats a SchedulerParameters key that sched/backfill
/// (or Slurm on its behalf) reads: the bf_* keys and max_rpc_cnt of Slurm
/// 22.05 to 26.05 (backfill.c's _load_config(), plus the ones slurmctld's
/// main scheduler and select/cons_tres read). backfill_keys() is the one
/// table: the load-time warning, `easypp-ctl check` and the admin guide's
/// table (checked by a unit test) all come from it.
enum class BackfillKeyUse {
  kHonoured,  ///< read as the fallback of the easypp_* key of the same meaning
  kSlurm,     ///< read by Slurm itself (main scheduler, select plugin): applies as before
  kIgnored,   ///< not applied: named in one warning line at load and by `easypp-ctl check`
  kHarmful,   ///< does harm under sched/easypp: an error at load, `easypp-ctl check` fails
};

struct BackfillKey {
  const char* key;       ///< as in SchedulerParameters, without '=' (lower case)
  const char* releases;  ///< the Slurm releases that read it ("22.05+", "25.05+")
  const char* backfill;  ///< what it means under sched/backfill, a few words
  BackfillKeyUse use;
  /// kHonoured: the easypp_* key it stands in for (used when that key is
  /// not given); otherwise empty.
  const char* easypp_key;
  /// What sched/easypp does instead (or, honoured, how), a few words.
  const char* easypp;
};

/// Every row, in the admin guide's order.
const std::vector<BackfillKey>& backfill_keys();

/// The rows of the backfill keys present in a SchedulerParameters string
/// (items "key" or "key=value", matched case-insensitively), in the table's
/// order, each once.
std::vector<const BackfillKey*> backfill_keys_present(const char* params);

/// The one warning line for the kIgnored keys present ("" if none):
/// "sched/backfill keys sched/easypp does not honour: bf_window (...); ...".
std::string ignored_backfill_keys_line(const std::vector<const BackfillKey*>& present);

/// The error line for one kHarmful key (bf_licenses).
std::string harmful_backfill_key_line(const BackfillKey& k);

/// How a row's treatment is named in the admin guide ("honoured", ...).
const char* backfill_key_use_name(BackfillKeyUse u);

/// The admin guide's table, header included, one row per key of
/// backfill_keys() (the unit tests compare it with docs/admin-guide.md).
std::string backfill_keys_markdown();

/// The SchedulerParameters keys Slurm 22.05 and 24.11 themselves search for (as Slurm
/// spells them, some with a trailing '='), for the substring check.
const std::vector<std::string>& slurm_keys();

}  // namespace easypp::plugin
