// The Slurm side of the EASY++ policy: the adapter that answers
// schedule_pass()'s resource questions (see libpredict's policy.h) with
// slurmctld's node bitmaps and select_g_job_test(), and the guard that lets
// WILL_RUN plan with predictions without any other part of slurmctld ever
// seeing them.
//
// Planning values of end_time. select_g_job_test(WILL_RUN) plans from the
// running jobs' end_time (normally start + time limit, the kill time). The
// plugin writes planning values into end_time while it holds the job write
// lock, and puts the true values back before it releases or yields the
// locks and before every select_nodes(). Every write goes through one ledger
// (a stack: EndTimeSwap and ProbeScope push, their restore pops), so
// assert_no_planning_values(), called before every unlock and yield, can
// prove that nothing is left behind. time_limit is never written.
//
// Everything here runs in the agent thread with the scheduling lock set held
// ({conf READ, job WRITE, node WRITE, part READ, fed READ}); no job_record_t
// pointer is kept across a yield (jobs are looked up by id).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "easypp/policy.h"
#include "job_tracker.h"
#include "plugin_config.h"
#include "slurm_api.h"

namespace easypp::plugin {

// --- the planning ledger -------------------------------------------------------

/// Position in the ledger; restore_to(mark) undoes every write made after it.
using LedgerMark = std::size_t;
LedgerMark ledger_mark();
/// Write `value` into job's end_time, remembering the previous value.
void ledger_write(job_record_t* job, time_t value);
/// Undo writes after `mark`, newest first; a value that no longer equals
/// what the plugin wrote (slurmctld changed it) is left alone.
void ledger_restore_to(LedgerMark mark);

/// Check made before every unlock and yield: no planning value written by the
/// plugin may remain in a job record. In builds configured with
/// --enable-debug-checks (EASYPP_DEBUG_CHECKS) a violation aborts slurmctld
/// (like a failed assert); otherwise it is logged as an error and the true
/// values are restored.
void assert_no_planning_values(const char* where);

/// Scope guard of the planning swap: apply() sets end_time := start_time +
/// tot_sus_time + prediction for every running and suspended job the
/// tracker knows (predictions are corrected first, so this lies after now;
/// it is clamped to now + 1 when correction=none leaves it expired);
/// restore() and the destructor put the true values back.
class EndTimeSwap {
 public:
  explicit EndTimeSwap(const JobTracker& t) : tracker_(t) {}
  ~EndTimeSwap() { restore(); }
  EndTimeSwap(const EndTimeSwap&) = delete;
  EndTimeSwap& operator=(const EndTimeSwap&) = delete;

  void apply(time_t now);
  void restore();
  bool applied() const { return applied_; }

 private:
  const JobTracker& tracker_;
  LedgerMark mark_ = 0;
  bool applied_ = false;
};

/// Temporary end_time values for one WILL_RUN probe, undone on destruction.
class ProbeScope {
 public:
  ProbeScope() : mark_(ledger_mark()) {}
  ~ProbeScope() { ledger_restore_to(mark_); }
  ProbeScope(const ProbeScope&) = delete;
  ProbeScope& operator=(const ProbeScope&) = delete;
  void set(job_record_t* job, time_t value) { ledger_write(job, value); }

 private:
  LedgerMark mark_;
};

// --- bitmaps --------------------------------------------------------------------

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
  bitstr_t* release() {
    bitstr_t* b = b_;
    b_ = nullptr;
    return b;
  }
  void reset();
  explicit operator bool() const { return b_ != nullptr; }

 private:
  bitstr_t* b_ = nullptr;
};

// --- one cycle ------------------------------------------------------------------

/// The reservation a partition's head got in this cycle.
struct PartReservation {
  std::string partition;
  std::uint32_t job_id = 0;
  Time shadow = kNever;
  Bitmap nodes;  ///< R: the nodes the head will use at the shadow time
};

/// A planned start shown by squeue --start (start_time, sched_nodes).
struct PlannedStart {
  std::string partition;
  time_t start = 0;
  std::string nodes;
};

/// What one cycle shares between the partitions' passes.
struct CycleEnv {
  CycleEnv(const PluginConfig& c, JobTracker& t, EndTimeSwap& s) : cfg(c), tracker(t), swap(s) {}

  const PluginConfig& cfg;
  JobTracker& tracker;
  EndTimeSwap& swap;
  time_t now = 0;              ///< the cycle's time (the policy's "now")
  std::uint64_t cycle = 0;
  std::int64_t started_usec = 0;  ///< steady clock at the cycle's start
  std::int64_t locked_usec = 0;   ///< steady clock when the locks were (re)taken

  std::deque<PartReservation> reservations;  ///< one per partition that has a head (stable addresses)
  std::map<std::uint32_t, PlannedStart> planned;  ///< heads' planned starts, this cycle

  /// Idle CPUs per node index (configured CPUs minus the allocations of
  /// running and suspended jobs); kept current as the plugin starts jobs.
  std::vector<std::int64_t> idle;

  // statistics
  std::uint32_t tested = 0;   ///< adapter tests (start_now + backfill, het components)
  std::uint32_t started_in_order = 0;
  std::uint32_t started_backfill = 0;  ///< het components included
  std::uint32_t het_started = 0;  ///< heterogeneous jobs started (all components)
  std::uint32_t het_undone = 0;   ///< heterogeneous starts undone (a component failed)
  std::uint32_t yields = 0;
  std::uint32_t probes = 0;   ///< WILL_RUN calls
  bool interrupted = false;   ///< budget spent or state changed during a yield
  std::string interrupt_reason;
  bool retry_soon = false;    ///< a start waits for completing nodes

  /// Recompute `idle` from job_list.
  void compute_idle();
  /// Subtract a just-started job's allocation from `idle`.
  void account_start(job_record_t* job);
  /// Reservation of another partition than `part` (for exclusions).
  const PartReservation* reservation_of(const std::string& part) const;
};

/// Per-job facts the pass needs besides the job record.
struct QueuedJob {
  std::uint32_t job_id = 0;
  std::uint32_t priority = 0;  ///< the job's priority in this partition
  Time prediction = 0;
  Time estimate = 0;
  std::int64_t width = 0;  ///< CPUs at least (details->min_cpus), for the wait queue
  Time since = kNever;     ///< eligible since (begin time, else submit time)
};

/// A pending heterogeneous job as the cycle found it in Slurm's queue.
/// Het jobs never enter an EASY++ pass (never the head, never reserved for):
/// after the passes, start_het_job() starts all components together if all
/// of them fit now, or none.
struct HetCandidate {
  struct Component {
    std::uint32_t job_id = 0;
    /// The partitions it is queued in, in Slurm's order, with its priority
    /// there. Valid for the cycle: a yield during which partitions changed
    /// ends it (cycle_may_continue()).
    std::vector<std::pair<part_record_t*, std::uint32_t>> parts;
  };
  std::uint32_t het_job_id = 0;       ///< the leader's job id
  std::vector<Component> components;  ///< the pending components, leader first
  Time prediction = 0;  ///< the het job's prediction: the max over its components
  Time estimate = 0;    ///< the max of the components' time limits
};

enum class HetStart {
  kStarted,     ///< every component started
  kNoFit,       ///< some component does not fit now: nothing was started
  kCompleting,  ///< fits only on nodes still completing: nothing started, retry soon
  kUndone,      ///< a component failed to start after others had: those were deallocated
};

/// Test every pending component of `h` with WILL_RUN + TEST_NOW_ONLY on its
/// usable nodes, minus the nodes of this cycle's EASY++ reservations whose
/// shadow lies before the het job's planning bound (now + prediction; the
/// limit with easypp_safe or for a starving head), minus the nodes chosen
/// for the components tested before it (components go on distinct nodes,
/// as under sched/backfill). If and only if all fit, start them in that
/// order through the adapter's start path (true end_times back first). A
/// component failing to start after others started: the started ones are
/// deallocated and put back to pending exactly as sched/backfill's
/// _het_job_kill_now() does (eligible again after the credential lifetime).
HetStart start_het_job(CycleEnv& env, const HetCandidate& h);

/// The yield point and budget of a cycle (easypp_max_job_test, _max_time,
/// _yield_interval/_yield_sleep): false ends the cycle's scheduling.
bool cycle_may_continue(CycleEnv& env);

/// Builds with --enable-debug-checks only: slurmctld's environment has
/// EASYPP_DEBUG_HET_FAIL set, so the last component of every het job is
/// offered no node when it is started (select_nodes() really fails) and the
/// partial start is undone. For the integration test of the undo path;
/// always false in other builds.
bool het_fault_injection();

/// The policy adapter for one partition's pass (the concept in policy.h).
class SlurmAdapter {
 public:
  SlurmAdapter(CycleEnv& env, part_record_t* part, const std::map<std::uint32_t, QueuedJob>& jobs);

  bool start_now(JobHandle h);
  Time reserve(JobHandle h, Time duration, bool is_head);
  bool backfill(JobHandle h, Time end_bound);
  bool can_start_more() const { return part_idle_ > 0; }
  std::int64_t free_width() const { return part_idle_; }
  bool room_beyond_shadow() const;
  bool may_continue();

  /// Start pending job `id` now if it fits, avoiding the nodes reserved by
  /// other partitions' heads whose shadow lies before `end_bound` (used for
  /// jobs in advanced reservations, which get no EASY++ reservation).
  bool try_start_now(std::uint32_t id, Time end_bound);

 private:
  friend HetStart start_het_job(CycleEnv& env, const HetCandidate& h);
  struct Test;
  bool prepare(job_record_t* job, Test* t) const;
  void exclude_reserved(bitstr_t* avail, Time end_bound, bool include_own) const;
  int will_run(job_record_t* job, const Test& t, bitstr_t* avail, bool now_only,
               time_t* start, Bitmap* selected);
  bool test_and_start(std::uint32_t id, Time end_bound, bool include_own, bool backfilled);
  int start_job(job_record_t* job, bitstr_t* avail);
  void recount();
  job_record_t* pending_job(std::uint32_t id) const;
  const QueuedJob* queued(std::uint32_t id) const;

  CycleEnv& env_;
  part_record_t* part_;
  std::string part_name_;
  const std::map<std::uint32_t, QueuedJob>& jobs_;
  Bitmap usable_;             ///< partition nodes that are up and not drained
  std::int64_t part_idle_ = 0;
  std::int64_t outside_idle_ = 0;  ///< idle CPUs of usable nodes outside R
  PartReservation* res_ = nullptr;  ///< this partition's reservation, once made
};

/// "JobId=123" or "JobId=100_7(123)" for logs (Slurm's %pJ is not usable
/// from C++: its format attribute rejects it).
std::string job_str(const job_record_t* job);

/// Monotonic microseconds.
std::int64_t steady_usec();

}  // namespace easypp::plugin
