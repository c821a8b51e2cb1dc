// From an SWF log to simulatable jobs (spec section 6), load scaling and
// flurry detection. Every convention is an option; every dropped or adjusted
// record is counted and reported.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "easypp/sim/swf.h"
#include "easypp/types.h"

namespace easypp {

struct SessionModel;

/// One job as the simulator sees it.
struct Job {
  std::uint64_t id = 0;  ///< SWF job number (field 1)
  Time submit = 0;       ///< field 2, after load scaling
  Time runtime = 0;      ///< field 4 (clipped to the estimate if asked)
  Time estimate = 0;     ///< field 9, or the fallback for missing estimates
  std::int64_t size = 0; ///< processors
  UserId user = kNoUser; ///< field 12
  /// Field 11 is 1 (completed normally) or unknown (-1): learned under
  /// learn=completed (a failed or cancelled job is not).
  bool completed = true;
  std::uint32_t record = ~0u;  ///< index into Workload::records, if kept
  bool flurry = false;   ///< part of a detected flurry
  /// Field 17, the preceding job's number (-1: none), and field 18, the
  /// think time after it ends (-1: unknown): what --feedback replays.
  std::int64_t preceding = -1;
  Time think = -1;
};

enum class SizeFrom { Allocated, Requested };
enum class UnsortedPolicy { Fail, Sort };

struct WorkloadOptions {
  SizeFrom size_from = SizeFrom::Allocated;  ///< field 5, else 8 when <= 0
  std::int64_t machine_procs = 0;  ///< 0: MaxProcs header, else MaxNodes
  bool clip_runtime = false;       ///< runtime := min(runtime, estimate)
  Time default_estimate = 0;       ///< for missing estimates; 0: max(MaxRuntime, max runtime)
  UnsortedPolicy unsorted = UnsortedPolicy::Fail;
  double target_load = 0;          ///< > 0: scale interarrivals to this offered load
  bool keep_records = false;       ///< keep raw records (for --output-swf)
  std::size_t max_jobs = 0;        ///< > 0: stop after this many simulatable jobs
  // Flurries: a user submitting >= flurry_jobs jobs within flurry_window
  // seconds; those jobs are marked (0 disables detection).
  std::uint32_t flurry_jobs = 0;
  Time flurry_window = 3600;
  swf::ReaderOptions reader;
};

/// What was read and what was dropped or adjusted, and why.
struct WorkloadReport {
  std::uint64_t lines = 0;
  std::uint64_t records = 0;        ///< job lines that parsed
  std::uint64_t malformed = 0;      ///< job lines skipped by the reader
  std::uint64_t made_unknown = 0;   ///< absurd values in optional fields taken as -1
  std::uint64_t dropped_submit = 0;   ///< submit < 0
  std::uint64_t dropped_runtime = 0;  ///< runtime < 0
  std::uint64_t dropped_size = 0;     ///< fields 5 and 8 both <= 0
  std::uint64_t dropped_too_wide = 0; ///< wider than the machine
  std::uint64_t estimate_missing = 0; ///< estimate <= 0: fallback used
  std::uint64_t runtime_over_estimate = 0;  ///< kept (or clipped if asked)
  std::uint64_t runtime_clipped = 0;
  std::uint64_t unsorted = 0;         ///< records out of submit order (sorted)
  std::uint64_t flurry_jobs = 0;
  std::uint64_t flurry_users = 0;
  std::uint64_t jobs = 0;             ///< simulatable jobs
  Time default_estimate = 0;          ///< value used for missing estimates
  double load_scale = 1.0;            ///< interarrival multiplier applied
  double offered_load_before = 0;     ///< whole-log offered load before scaling
};

struct Workload {
  std::string source;        ///< file name, "-" or "synthetic:..."
  swf::Header header;
  std::int64_t procs = 0;    ///< machine size used
  std::vector<Job> jobs;     ///< sorted by submit time (stable)
  std::vector<swf::Record> records;  ///< only with keep_records
  WorkloadReport report;
  std::vector<swf::Diagnostic> diagnostics;  ///< messages kept (capped)
  /// The paper's user-session model (session_model.h) when the workload
  /// comes from it (--workload sessions:...): under --feedback it decides
  /// think times from simulated response times. Null otherwise.
  std::shared_ptr<const SessionModel> sessions;
};

/// Read and convert. Throws swf::Error on a fatal problem (unreadable file,
/// corrupt gzip, unsorted submit times under UnsortedPolicy::Fail, no
/// machine size, no simulatable job).
Workload load_workload(const std::string& path, const WorkloadOptions& opt);

/// Convert records already in memory (used by the generator and tests).
Workload make_workload(std::string source, swf::Header header,
                       std::vector<swf::Record> records, const WorkloadOptions& opt);

/// Whole-log offered load: sum(size * runtime) / (procs * (last - first submit)).
double offered_load(const std::vector<Job>& jobs, std::int64_t procs);

/// Multiply every interarrival time by `factor` (submit times of the first
/// job unchanged). Returns nothing; jobs stay sorted.
void scale_interarrivals(std::vector<Job>& jobs, double factor);

/// Mark flurry jobs (see WorkloadOptions). Returns the number marked.
std::uint64_t mark_flurries(std::vector<Job>& jobs, std::uint32_t min_jobs, Time window,
                            std::uint64_t* users = nullptr);

}  // namespace easypp
