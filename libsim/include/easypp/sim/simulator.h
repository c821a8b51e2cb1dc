// The event-driven simulator: replays a workload through the core with the
// processor-count resource model.
//
// It owns time and the workload's future (runtimes); the core owns the rest.
// Arrivals and terminations are its own events; prediction expiries are the
// PredictionBook's (next_expiry). All events that share a timestamp are
// applied first (terminations, then expiries, then arrivals), then one
// scheduling pass runs (project convention): schedule_pass() over a
// ProcAdapter. SimOptions replays the authors' way instead (a pass per
// event; no pass for corrections alone).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "easypp/policy.h"
#include "easypp/types.h"
#include "easypp/sim/workload.h"

namespace easypp {

/// What happened to one job.
struct JobOutcome {
  Time start = -1;
  Time end = -1;
  Time first_prediction = 0;   ///< the prediction at submission
  Time final_prediction = 0;   ///< after all corrections
  Time first_reservation = -1; ///< first reservation as queue head, -1 if none
  std::uint32_t corrections = 0;
  std::uint32_t termination_rank = 0;  ///< 0 for the first job to terminate
  double accuracy = 0;         ///< time-weighted, in [0, 1]
  bool backfilled = false;
};

/// Read-only view of the simulator state for observers (invariant checks).
class SimView;

/// Hooks called during a run. Default implementations do nothing.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  /// A job started (backfilled: by backfilling rather than in queue order).
  virtual void on_start(const SimView&, JobHandle, Time /*now*/, bool /*backfilled*/) {}
  /// A job terminated.
  virtual void on_end(const SimView&, JobHandle, Time /*now*/) {}
  /// A prediction was corrected.
  virtual void on_correction(const SimView&, JobHandle, Time /*now*/, Time /*old_p*/,
                             Time /*new_p*/) {}
  /// Called before each scheduling pass, after the batch's events.
  virtual void before_pass(const SimView&, Time /*now*/) {}
  /// Called after each scheduling pass.
  virtual void after_pass(const SimView&, Time /*now*/, const PassResult&) {}
};

/// How the event loop runs passes. The defaults are this project's
/// conventions; the switches replay the authors' simulator's way, to measure
/// what each departure changes (docs/conventions.md).
struct SimOptions {
  /// One pass after each event (each termination, the corrections due, each
  /// arrival) instead of one pass after all the events of a timestamp.
  bool pass_per_event = false;
  /// A pass when only corrections happened at a timestamp. Off: corrected
  /// values take effect at the next arrival's or termination's pass.
  bool pass_after_correction = true;
  /// Closed-loop replay (--feedback, docs/closed-loop.md): a job with a
  /// preceding job (SWF fields 17, 18) is submitted its think time after
  /// that job ends in this replay's schedule (or when the workload's
  /// session model says), not at its logged time.
  bool feedback = false;
  /// In queue order with propagation, the wait queue follows the book's
  /// groups and the accuracy is accounted per group (simulator.cc, "groups").
  /// Off: each re-predicted job is visited, as before; the runs are the
  /// same (a unit test compares them), only slower.
  bool group_values = true;
  /// A pass after arrivals alone continues the last pass instead of
  /// redoing it (policy.h, PassCarry): EASY tests the new jobs only,
  /// conservative goes on from where the last pass stopped. Off: every pass
  /// from scratch; the runs are the same (a unit test compares them).
  bool continue_passes = true;
};

/// What a feedback replay did with the links of fields 17 and 18.
struct FeedbackReport {
  std::uint64_t linked = 0;       ///< submitted after their preceding job
  std::uint64_t independent = 0;  ///< no preceding job (field 17 is -1)
  // Fallbacks to the logged submit time, by reason:
  std::uint64_t missing = 0;      ///< the preceding job is not in the workload
  std::uint64_t not_earlier = 0;  ///< ... is not earlier in the log (a loop)
  std::uint64_t no_think = 0;     ///< the think time (field 18) is unknown
  // Outcomes (per run):
  std::uint64_t not_submitted = 0;    ///< past the session model's horizon
  std::uint64_t earlier = 0;          ///< submitted before their logged time
  std::uint64_t later = 0;            ///< submitted after it
  std::uint64_t fallbacks() const { return missing + not_earlier + no_think; }
};

struct SimStats {
  std::uint64_t passes = 0;
  std::uint64_t events = 0;
  std::uint64_t corrections = 0;
  std::uint64_t backfilled = 0;
  std::uint64_t tested = 0;     ///< backfill candidates examined, all passes
  std::uint64_t continued = 0;  ///< passes that continued the last one (PassCarry)
  std::uint64_t max_queue = 0;
  double elapsed_seconds = 0;  ///< wall-clock time of the run (not the reading)
};

struct RunResult {
  SchedulerConfig config;
  std::vector<JobOutcome> jobs;  ///< parallel to Workload::jobs
  SimStats stats;
  /// Feedback replays only: each job's submit time in this replay (-1: never
  /// submitted), parallel to Workload::jobs; empty otherwise.
  std::vector<Time> submitted;
  FeedbackReport feedback;
};

class Simulator {
 public:
  Simulator(const Workload& w, SchedulerConfig cfg, SimOptions opt = {});
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Replay the whole workload. Deterministic.
  RunResult run(SimObserver* obs = nullptr);

 private:
  friend class SimView;
  struct Impl;
  Impl* impl_;
};

class SimView {
 public:
  explicit SimView(const Simulator::Impl& impl) : s_(impl) {}
  const Workload& workload() const;
  const SchedulerConfig& config() const;
  /// Current planning value of a job.
  Time prediction(JobHandle h) const;
  Time start(JobHandle h) const;  ///< -1 while waiting
  bool running(JobHandle h) const;
  std::int64_t free_procs() const;
  std::int64_t total_procs() const;
  /// Running jobs (handles), any order.
  std::vector<JobHandle> running_jobs() const;
  /// Waiting jobs in queue order.
  std::vector<JobHandle> waiting_jobs() const;

 private:
  const Simulator::Impl& s_;
};

}  // namespace easypp
