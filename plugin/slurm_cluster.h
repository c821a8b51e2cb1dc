// The Slurm side of the plugin's planning: slurmctld's job table for the
// planning ledger (planning_ledger.h), the cycle's shared state (CycleEnv),
// and SlurmCluster, the backend that answers NodeAdapter's questions
// (node_planner.h) with slurmctld's node bitmaps, select_g_job_test() and
// select_nodes().
//
// Everything here runs in the agent thread with the scheduling lock set held
// ({conf READ, job WRITE, node WRITE, part READ, fed READ}); no job_record_t
// pointer is kept across a yield (jobs are looked up by id).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "easypp/prediction_book.h"
#include "limit_skips.h"
#include "node_planner.h"
#include "planning_ledger.h"
#include "plugin_config.h"
#include "slurm_api.h"
#include "start_projection.h"

namespace easypp::plugin {

// --- slurmctld's job table -----------------------------------------------------------

struct SlurmJobs {
  job_record_t* find(std::uint32_t id) const { return find_job_record(id); }
  static bool active(const job_record_t& j) {
    const job_record_t* p = &j;
    return (IS_JOB_RUNNING(p) || IS_JOB_SUSPENDED(p)) && j.end_time != 0;
  }
  static time_t start_of(const job_record_t& j) { return j.start_time + j.tot_sus_time; }
};
using Ledger = PlanningLedger<SlurmJobs>;
using SlurmSwap = EndTimeSwap<SlurmJobs>;

/// Check made before every unlock and yield: no planning value written by the
/// plugin may remain in a job record. In builds configured with
/// --enable-debug-checks (EASYPP_DEBUG_CHECKS) a violation aborts slurmctld
/// (like a failed assert); otherwise it is logged as an error and the true
/// values are restored.
void assert_no_planning_values(Ledger& ledger, const char* where);

// --- bitmaps ------------------------------------------------------------------------

/// An owned Slurm bitmap (FREE_NULL_BITMAP on destruction).
class Bitmap {
 public:
  Bitmap() = default;
  explicit Bitmap(bitstr_t* b) : b_(b) {}
  ~Bitmap() { reset(); }
  Bitmap(Bitmap&& o) noexcept : b_(o.b_) { o.b_ = nullptr; }
  Bitmap& operator=(Bitmap&& o) noexcept {
    if (this != &o) {
      reset();
      b_ = o.b_;
      o.b_ = nullptr;
    }
    return *this;
  }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
  static Bitmap copy_of(bitstr_t* b) { return Bitmap(b ? bit_copy(b) : nullptr); }
  bitstr_t* get() const { return b_; }
  bitstr_t** out() {
    reset();
    return &b_;
  }
  void reset();
  explicit operator bool() const { return b_ != nullptr; }

 private:
  bitstr_t* b_ = nullptr;
};

// --- one cycle ---------------------------------------------------------------------------

/// A planned start shown by squeue --start (start_time, sched_nodes).
struct PlannedStart {
  std::string partition;
  time_t start = 0;
  std::string nodes;
};

/// Per-job facts a partition's pass needs besides the job record.
struct QueuedJob {
  std::uint32_t job_id = 0;
  std::uint32_t priority = 0;  ///< the job's priority in this partition
  std::int64_t width = 0;      ///< CPUs at least (details->min_cpus), for the wait queue
  Time since = kNever;         ///< eligible since (begin time, else submit time)
};
using QueueMap = std::map<std::uint32_t, QueuedJob>;

/// What one cycle shares between its phases and the partitions' passes.
struct CycleEnv {
  CycleEnv(const PluginConfig& c, PredictionBook& b, Ledger& l, SlurmSwap& s)
      : cfg(c), book(b), ledger(l), swap(s) {}

  const PluginConfig& cfg;
  PredictionBook& book;
  Ledger& ledger;
  SlurmSwap& swap;
  time_t now = 0;                 ///< the cycle's time (the policy's "now")
  std::int64_t started_usec = 0;  ///< steady clock at the cycle's start
  std::int64_t locked_usec = 0;   ///< steady clock when the locks were (re)taken

  CyclePlan<Bitmap> plan;                     ///< reservations, idle CPUs
  /// Jobs an accounting limit holds back (acct_limits.h); kept across cycles.
  LimitSkips* limits = nullptr;
  std::map<std::uint32_t, PlannedStart> planned;  ///< heads' planned starts, this cycle
  /// Projected starts beyond the heads (easypp_publish_starts), this cycle.
  std::map<std::uint32_t, PlannedStart> projected;
  std::uint32_t projected_tried = 0;  ///< jobs placed (with or without a start)
  std::int64_t projection_usec = 0;   ///< what projecting them cost

  // statistics
  std::uint32_t tested = 0;  ///< adapter tests (start_now + backfill, het components)
  std::uint32_t started_in_order = 0;
  std::uint32_t started_backfill = 0;  ///< het components included
  std::uint32_t het_started = 0;       ///< heterogeneous jobs started (all components)
  std::uint32_t het_undone = 0;        ///< heterogeneous starts undone (a component failed)
  std::uint32_t het_components = 0;   ///< components of het_started (sdiag)
  std::uint32_t yields = 0;
  std::uint32_t probes = 0;     ///< WILL_RUN probes (the heads' shadow times and nodes)
  bool suspended = false;       ///< a job is suspended (idle_cpus(): idle counts not exact)
  std::int64_t slept_usec = 0;  ///< with the locks yielded (not the cycle's own time)
  std::uint32_t depth = 0;      ///< jobs the passes looked at (sdiag's depth)
  bool interrupted = false;  ///< budget spent or state changed during a yield
  std::string interrupt_reason;
};

/// sdiag's backfill section (slurmctld_diag_stats.bf_*), filled by
/// sched/easypp as sched/backfill fills it: cycle_begin() before the cycle
/// takes the locks (bf_active: sdiag warns that a cycle is running, slurmctld
/// purges no old job and, from 25.11.2, its shutdown waits; set under
/// check_bf_running_lock where the release has it: easypp_bf_active()),
/// cycle_idle() after they are released, cycle_end() before: cycles, last/max/mean cycle time (locks held,
/// yields excluded, microseconds), depth (jobs looked at) and depth tried
/// (jobs tested against the nodes), queue length, the reservations as the
/// "table size", jobs backfilled, and (24.11) why the cycle ended.
void diag_cycle_begin();
void diag_cycle_idle();  ///< bf_active back to 0, the locks released
void diag_cycle_end(const CycleEnv& env, std::uint32_t queue_len, std::uint32_t reservations,
                    std::int64_t cycle_usec);

/// bf_active for the lifetime of a cycle, whatever way it ends: made before
/// the scheduling locks are taken and destroyed after they are released.
class DiagActive {
 public:
  DiagActive() { diag_cycle_begin(); }
  ~DiagActive() { diag_cycle_idle(); }
  DiagActive(const DiagActive&) = delete;
  DiagActive& operator=(const DiagActive&) = delete;
};

/// Nodes expected to register soon: state UNKNOWN, or not responding yet
/// not DOWN (after a slurmctld start, and from 23.11 after every `scontrol
/// reconfigure`, which re-executes slurmctld, until each slurmd answers; a
/// node that never answers is set DOWN after SlurmdTimeout). Powered-down and
/// booting nodes are not counted. While there are any, the agent plans again
/// every second: a reservation needs the nodes registered.
std::uint32_t nodes_registering();

/// The yield point and budget of a cycle (easypp_max_job_test, _max_time,
/// _yield_interval/_yield_sleep): false ends the cycle's scheduling.
bool cycle_may_continue(CycleEnv& env);

/// A partition as the backend sees it: Slurm's record and the queued jobs'
/// per-partition facts (priority).
struct SlurmPartition {
  part_record_t* part = nullptr;
  std::string name;
  const QueueMap* jobs = nullptr;
};

/// NodeAdapter's backend over slurmctld (node_planner.h lists the
/// questions). One per cycle; stateless besides the cycle.
class SlurmCluster {
 public:
  using Nodes = Bitmap;
  using Partition = SlurmPartition;
  /// One job's test in one partition, as sched/backfill prepares it.
  struct Candidate {
    Bitmap avail;     ///< usable nodes for this job now (before reservations)
    ResvExc exc_core;  ///< cores (and GRES) reserved by advanced reservations
    std::uint32_t min_nodes = 0, req_nodes = 0, max_nodes = 0;
    std::int64_t cpus = 0;  ///< the fewest CPUs it can start with (details->min_cpus)
    /// Whole nodes only (--exclusive, OverSubscribe=EXCLUSIVE, or as many
    /// CPUs per node as the partition's largest node has): the fewest
    /// nodes it needs, each entirely free. 0: not a whole-node job.
    std::int64_t whole_nodes = 0;
    /// The fewest idle CPUs a node must have to be used (details->pn_min_cpus,
    /// at least 1); 0 where the idle counts do not bound what cons_tres can
    /// give (idle_is_exact()).
    std::int64_t node_cpus = 0;
  };

  explicit SlurmCluster(CycleEnv& env) : env_(env) {}

  // node sets
  static bool any(const Bitmap& b) { return bool(b); }
  static bool test(const Bitmap& b, int i) { return bit_test(b.get(), i); }
  static void set(Bitmap& b, int i) { bit_set(b.get(), i); }
  static Bitmap copy(const Bitmap& b) { return Bitmap::copy_of(b.get()); }
  static void and_not(Bitmap& a, const Bitmap& b) { bit_and_not(a.get(), b.get()); }
  static void and_(Bitmap& a, const Bitmap& b) { bit_and(a.get(), b.get()); }
  static int size(const Bitmap& b) { return b ? int(bit_size(b.get())) : 0; }
  static int count(const Bitmap& b) { return b ? int(bit_set_count(b.get())) : 0; }
  Bitmap none() const { return Bitmap(bit_alloc(std::max(node_record_count, 1))); }

  // the cluster
  Time now() const { return env_.now; }
  const std::string& name(const SlurmPartition& p) const { return p.name; }
  Bitmap usable(const SlurmPartition& p) const;
  void idle_cpus(std::vector<std::int64_t>* idle) const;

  // job tests
  bool prepare(JobHandle h, const SlurmPartition& p, Candidate* c);
  bool fits_now(JobHandle h, Candidate& c, const Bitmap& on, Bitmap* selected);
  std::vector<Run> runs_on(const Bitmap& on) const;
  void add_nodes_of(JobHandle running, Bitmap* into) const;
  bool fits_after(JobHandle h, Candidate& c, const Bitmap& on, const std::vector<Run>& runs,
                  Time t, Bitmap* selected);

  // starting
  Started start(JobHandle h, Candidate& c, const Bitmap& avail, const StartNote& note);
  bool still_pending(JobHandle h) const { return pending_job(h) != nullptr; }
  void account_start(JobHandle started, std::vector<std::int64_t>* idle) const;

  /// The partition's CPU pool for projected starts (start_projection.h): its
  /// usable nodes' CPUs, those idle now (this cycle's starts included), and
  /// each running job's CPUs on them back at its planned end.
  StartProjection projection(const SlurmPartition& p) const;

  // the cycle
  bool may_continue() { return cycle_may_continue(env_); }
  void count_test() { ++env_.tested; }
  JobOwner job_owner(JobHandle h) const;
  void publish(JobHandle head, const std::string& partition, Time shadow, const Bitmap& reserved);

  /// A pending job that may start now (not completing, held or revoked).
  job_record_t* pending_job(JobHandle h) const;
  /// WILL_RUN on `on` (TEST_NOW_ONLY with now_only); its planned start in
  /// *start and its nodes in *selected on success.
  int will_run(job_record_t* job, const Candidate& c, bitstr_t* on, bool now_only,
               time_t* start, Bitmap* selected);
  /// select_nodes() as sched/backfill's _start_job() does it, confined to
  /// `avail`; the true end_times are back during the call. A backfilled job
  /// shows Scheduler=Backfill (scontrol show job) and carries sacct's
  /// SchedBackfill flag; one started in queue order Scheduler=Main and
  /// SchedMain, as from Slurm's main scheduler.
  int start_job(job_record_t* job, bitstr_t* avail, bool backfilled);
  /// The partition the last prepare() was for.
  const SlurmPartition* partition() const { return part_; }

 private:
  bool idle_is_exact(const part_record_t* p);

  CycleEnv& env_;
  const SlurmPartition* part_ = nullptr;
  std::map<const part_record_t*, bool> idle_exact_;  // by partition, this cycle
};

using SlurmAdapter = NodeAdapter<SlurmCluster>;

/// "JobId=123" or "JobId=100_7(123)" for logs (Slurm's %pJ is not usable
/// from C++: its format attribute rejects it).
std::string job_str(const job_record_t* job);

/// Monotonic microseconds.
std::int64_t steady_usec();

}  // namespace easypp::plugin
