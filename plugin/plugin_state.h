// What sched/easypp keeps on disk, without any Slurm header (so it is unit
// tested on its own and shared with the easypp-ctl command):
//
//  - the state file (StateSaveLocation/easypp_state.json): the learned
//    per-user history, written atomically (temporary file, fsync, rename,
//    fsync of the directory) whenever it changed; read at start. A missing,
//    unreadable or corrupt file is reported and the plugin starts with an
//    empty history; only a corrupt one is moved aside (move_aside()).
//  - the status file (StateSaveLocation/easypp_status.json): a snapshot
//    written after every cycle for admins and easypp-ctl: settings, the last
//    cycle's statistics, totals, every user's history, and every pending and
//    running job's prediction, estimate and planned start.
//
// Both hold what users ran and when: they are written with mode 0600
// (SlurmUser and root). easypp_file_mode opens the status file only; the
// state file stays 0600 whatever it says (kStateFileMode). Every write
// goes through safe_file.h: no link is followed, and a directory others
// can write to is refused.
// Reading never blocks: a FIFO, device or directory in a file's place is
// refused as "not a regular file" (LoadFailure::kUnreadable).
//
// All functions report failures through their return value and *error (a
// one-line message naming the file); none throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "easypp/predictor.h"
#include "easypp/selective.h"
#include "easypp/types.h"
#include "safe_file.h"

namespace easypp::plugin {

/// The persistent part: what must survive a slurmctld restart.
struct SavedState {
  static constexpr int kFormatVersion = 1;
  /// End time of the most recent finished job learned; jobs that ended at or
  /// before it are not learned again after a restart.
  Time last_learned_end = 0;
  std::uint64_t learned_jobs = 0;  ///< total learned since the history began
  /// Predictor window the rings were written with (informational).
  int window = 2;
  /// When the file was written (set by load_state; save_state writes now).
  Time written = 0;
  std::vector<Predictor::Ring> rings;
  /// The bounded slowdowns of the finished jobs, for adaptive selective
  /// thresholds (easypp_selective=adaptive, selective.h's SlowdownMeans):
  /// member "slowdowns", absent from files written before it existed (they
  /// load with none). Sums finite, at least their count (a bounded slowdown
  /// is >= 1) and 0 with it; counts at most kMaxSlowdownCount; n_all the sum
  /// of the four categories' counts. Sums are kept to 15 significant digits
  /// (what the file holds), so a loaded value saves and loads back the same.
  std::optional<SlowdownMeans::Sums> slowdowns;
  static constexpr std::uint64_t kMaxSlowdownCount = 1000000000000000ULL;  // 1e15
};

/// The mode of the status file unless configured otherwise
/// (easypp_file_mode): readable by its owner (SlurmUser) and root only.
constexpr unsigned kDefaultFileMode = 0600;
/// The state file's mode, always: it holds every user's runtimes.
constexpr unsigned kStateFileMode = 0600;

/// Why a load failed, which decides what the caller does with the file.
enum class LoadFailure {
  kNone,        ///< loaded
  kMissing,     ///< no such file (a first start: log at info level)
  kUnreadable,  ///< cannot be read: permissions, I/O error, not a regular file
                ///< (a FIFO, a device, a directory): leave it where it is
  kCorrupt,     ///< read, but not a valid file of its kind (bad JSON, bad field,
                ///< unknown format version, empty, too large): move it aside
};

/// Load `path`. Returns false with *error set if the file is missing,
/// unreadable, not JSON, of an unknown format version, or has a bad field;
/// *out is then left empty (the caller starts with no history). If `failure`
/// is given, it says which (kNone on success).
bool load_state(const std::string& path, SavedState* out, std::string* error,
                LoadFailure* failure = nullptr);

/// Write `path` atomically (safe_file.h: a temporary file of a random name
/// created with O_EXCL | O_NOFOLLOW, mode kStateFileMode whatever the umask
/// and owner `owner` set through its descriptor, fsync, rename over `path`,
/// fsync of the directory; a directory others can write to is refused).
/// On failure the
/// temporary file is removed and the previous file is left intact. Values
/// load_state() would refuse (negative or absurd times, more than
/// PredictorConfig::kMaxWindow entries in a ring, duplicate rings, a uid
/// outside 0..2^32-1, window outside 1..kMaxWindow) make it return false
/// without touching the disk: a file written here always loads back. Not for
/// concurrent calls on one path.
bool save_state(const std::string& path, const SavedState& s, std::string* error,
                const FileOwner& owner = {});

/// Move a corrupt file aside without ever replacing an older one: renamed
/// (never overwriting) to `path`.bad, else `path`.bad.1, .bad.2, ... up to
/// .bad.99. Returns the new name, or "" with *error set (nothing moved).
std::string move_aside(const std::string& path, std::string* error);

/// Set the permission bits of an existing file to `mode` (the status file
/// is rewritten with it; this applies a changed easypp_file_mode at once),
/// through a descriptor opened without following a link. True if the file
/// is missing, not a regular file, or now has that mode.
bool apply_file_mode(const std::string& path, unsigned mode, std::string* error);

/// One job as the status file shows it.
struct JobStatus {
  std::uint32_t job_id = 0;
  std::string array;  ///< "123_4" for array tasks, else empty
  UserId user = kNoUser;
  std::string user_name;
  std::string partition;
  std::string state;  ///< "PENDING", "RUNNING" or "SUSPENDED"
  Time submit = 0;
  Time start = 0;           ///< RUNNING: actual start; PENDING: planned start (0: none)
  Time estimate = 0;        ///< seconds: the time limit, the kill time
  Time prediction = 0;      ///< seconds: the planning value
  std::uint32_t corrections = 0;
  bool reserved = false;    ///< PENDING: holds the partition's reservation
  bool from_history = false;  ///< the prediction came from history, not the fallback
};

/// One scheduling cycle.
struct CycleStats {
  Time time = 0;               ///< when it started (Unix time)
  double seconds = 0;          ///< wall time, locks held plus yields
  std::uint32_t partitions = 0;
  std::uint32_t pending = 0;
  std::uint32_t running = 0;
  std::uint32_t tested = 0;            ///< backfill candidates examined
  std::uint32_t started_in_order = 0;  ///< started before the head blocked
  std::uint32_t started_backfill = 0;
  std::uint32_t reservations = 0;
  std::uint32_t corrections = 0;       ///< corrections fired in this cycle
  std::uint32_t learned = 0;           ///< finished jobs learned in this cycle
  std::uint32_t yields = 0;
  std::uint32_t het_started = 0;       ///< heterogeneous jobs started (all components)
  std::uint32_t het_undone = 0;        ///< heterogeneous starts undone (a component failed)
  // The log's cycle line only (not in the status file):
  std::uint32_t capped = 0;            ///< backfill candidates skipped by a fairness cap
  std::uint32_t limited = 0;           ///< skipped for a limit, or not reserved for (acct_limits.h)
  std::uint32_t projected = 0;         ///< projected starts published (easypp_publish_starts)
  std::int64_t projection_usec = 0;    ///< their cost
  std::uint32_t registering = 0;       ///< nodes not registered yet (a retry in 1 s)
  std::uint32_t probes = 0;            ///< WILL_RUN probes (heads' shadow times and nodes)
  std::int64_t locked_usec = 0;        ///< slurmctld's locks held (yield sleeps excluded)
  std::int64_t late_usec = -1;         ///< correction cycles: woke this late after the expiry
  bool interrupted = false;            ///< ended early (budget or state change)
  std::string trigger;                 ///< "interval", "correction", "reconfigure", ...
};

struct Totals {
  std::uint64_t cycles = 0;
  std::uint64_t tested = 0;
  std::uint64_t started_in_order = 0;
  std::uint64_t started_backfill = 0;
  std::uint64_t corrections = 0;
  std::uint64_t learned = 0;
  double seconds = 0;       ///< sum of cycle times
  double max_seconds = 0;   ///< longest cycle
};

struct Status {
  /// 2: settings became an object (1: a line of text).
  static constexpr int kFormatVersion = 2;
  std::string version;      ///< easypp version
  std::string slurm_version;
  Time written = 0;
  /// The effective settings, every easypp_* key with its value as
  /// SchedulerParameters spells it (PluginConfig::settings()); easypp-ctl
  /// applies them through the same table (apply_settings()) to predict as
  /// the plugin does.
  std::vector<std::pair<std::string, std::string>> settings;
  std::string state_file;   ///< where the history is persisted
  CycleStats last;
  Totals totals;
  /// The bounded slowdowns of the finished jobs (as the state file keeps
  /// them; the means adaptive thresholds follow). Absent from files of
  /// earlier versions.
  std::optional<SlowdownMeans::Sums> slowdowns;
  /// easypp_selective on: the starvation thresholds the last cycle used,
  /// one for every job (Sel) or four (Sel-D: SN, SW, LN, LW); adaptive ones
  /// as computed from the slowdowns. Empty: not selective.
  std::vector<double> thresholds;
  std::vector<Predictor::Ring> history;  ///< per-user rings (estimate_key -1) and extended rings
  std::vector<JobStatus> jobs;
};

/// Write the status file atomically (same protocol and mode as save_state).
/// Times must be 0..2^40 (no kNever: use 0 for "no planned start"), seconds
/// finite and >= 0, job users kNoUser or a uid.
bool write_status(const std::string& path, const Status& s, std::string* error,
                  unsigned mode = kDefaultFileMode);
/// Read it back (easypp-ctl). Same error contract as load_state.
bool read_status(const std::string& path, Status* out, std::string* error,
                 LoadFailure* failure = nullptr);

/// Parts of the status, for printing (easypp-ctl --json prints from the
/// validated structure, never from a second read of the file).
enum class StatusPart {
  Whole,    ///< the file's content
  Summary,  ///< all but the history and the jobs
  Jobs,     ///< the jobs array
  History,  ///< the history array
};
/// JSON text of a status or a part of it, as the status file spells it.
std::string status_to_json(const Status& s, StatusPart part);
/// JSON text of a state, as the state file spells it (written = its time).
std::string state_to_json(const SavedState& s, Time written);

/// The pieces of the files' safety, for the tools that write files of their
/// own the same way (easypp-shadow's state; writing: safe_file.h):
///  - read a JSON file whole (at most 512 MiB, a regular file) and refuse
///    what jansson would mishandle (NUL bytes, absurd nesting);
bool read_json_text(const std::string& path, std::string* text, std::string* error,
                    bool* missing = nullptr);
///  - the checks save_state makes before writing (so a state that passes
///    them loads back).
bool check_saved_state(const SavedState& s, std::string* why);

/// Default file names inside StateSaveLocation.
constexpr const char* kStateFileName = "easypp_state.json";
constexpr const char* kStatusFileName = "easypp_status.json";

}  // namespace easypp::plugin
