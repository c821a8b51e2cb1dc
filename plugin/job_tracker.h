// What sched/easypp remembers about Slurm's jobs between cycles, without any
// Slurm header (so it is unit tested on its own, test_job_tracker.cc):
//
//  - the predictor (libpredict's Predictor) and the history it learned;
//  - per job id: the user, the estimate (time limit), the planning value in
//    effect (prediction, or estimate under plan=estimate), the corrections
//    applied, whether the plugin saw it running and since when.
//
// The agent feeds it once per cycle from job_list (pending(), running(),
// finished()), asks it to correct expired predictions (correct_expired()),
// and asks when the next prediction expires (next_expiry(): the correction
// timer). Entries of jobs that disappeared from job_list are dropped by
// sweep().
//
// A job's prediction is made when the plugin first sees it eligible (in the
// schedulable queue): that is when it enters the EASY++ wait queue, like an
// arrival in the simulator. With propagation it is made again whenever its
// user's history changed.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "easypp/correction.h"
#include "easypp/policy.h"
#include "easypp/predictor.h"
#include "easypp/types.h"

namespace easypp::plugin {

struct TrackedJob {
  std::uint32_t job_id = 0;
  UserId user = kNoUser;
  Time estimate = 0;          ///< seconds: the time limit, the kill time
  Time prediction = 0;        ///< seconds: the planning value in effect
  Time first_prediction = 0;  ///< the value made when the job was first seen
  bool from_history = false;  ///< the predictor used history, not its fallback
  CorrectionState corr;
  bool running = false;       ///< running or suspended when last seen
  bool seen_running = false;  ///< the plugin saw it running at least once
  Time start = 0;             ///< running: start_time + tot_sus_time
  std::uint64_t history_version = 0;  ///< user's history version at prediction
  std::uint64_t seen = 0;     ///< cycle in which it was last seen
};

/// One correction applied to a running job.
struct CorrectionEvent {
  std::uint32_t job_id = 0;
  Time old_prediction = 0;
  Time new_prediction = 0;
  std::uint32_t count = 0;  ///< corrections of this job so far, this one included
};

class JobTracker {
 public:
  explicit JobTracker(const SchedulerConfig& cfg = SchedulerConfig());

  /// New settings. The learned history is kept (the predictor is rebuilt
  /// from its snapshot when its configuration changed); planning values
  /// already made stay until the job's next re-prediction.
  void configure(const SchedulerConfig& cfg);
  const SchedulerConfig& config() const { return cfg_; }

  Predictor& predictor() { return predictor_; }
  const Predictor& predictor() const { return predictor_; }

  /// The planning value for a new job of `user` with estimate `estimate`
  /// (seconds, > 0): the prediction, or the estimate under plan=estimate.
  Time plan_value(UserId user, Time estimate, bool* from_history) const;

  /// A pending job seen in the schedulable queue during `cycle`: created
  /// with a fresh planning value on first sight (or when it comes back to
  /// pending after a requeue); with propagation, re-predicted when its
  /// user's history changed since its prediction.
  TrackedJob& pending(std::uint32_t id, UserId user, Time estimate, std::uint64_t cycle);

  /// Keep an existing entry alive (a pending job not schedulable now:
  /// held, waiting for its begin time or a dependency). No-op if unknown.
  void touch(std::uint32_t id, std::uint64_t cycle);

  /// A running (or suspended) job; `start` = start_time + tot_sus_time.
  /// An unknown job (started before the plugin saw it pending) gets its
  /// planning value now.
  TrackedJob& running(std::uint32_t id, UserId user, Time estimate, Time start,
                      std::uint64_t cycle);

  /// The plugin started pending job `pending_id` as `running_id` (equal,
  /// except for an array task split off its meta record) at `start`.
  void started(std::uint32_t pending_id, std::uint32_t running_id, Time start,
               std::uint64_t cycle);

  /// A running job has outlived its prediction once `kGrace` seconds have
  /// passed since its predicted end and it still runs: Slurm keeps start and
  /// end in whole seconds and learns of a job's end a little late, so a job
  /// whose runtime equals its prediction is not corrected (as in the
  /// simulator, where the termination comes before the expiry).
  static constexpr Time kGrace = 1;

  /// Correct every running job whose prediction has expired (start +
  /// prediction + kGrace <= now), until it no longer has (or the policy stops
  /// moving it: correction=none). Appends one event per correction.
  std::uint32_t correct_expired(Time now, std::vector<CorrectionEvent>* out);

  /// When the next correction falls due: the earliest start + prediction +
  /// kGrace of a running job whose prediction the correction policy can
  /// still move; kNever if none (the correction timer). It may lie at or
  /// before the time correct_expired() last ran when the clock it was given
  /// lagged: the agent then runs again at once. Its job id in *job if not
  /// null.
  Time next_expiry(std::uint32_t* job = nullptr) const;

  /// Learn a finished job's runtime (seconds, the suspended time excluded)
  /// and drop its entry. Returns false (nothing learned) for runtime <= 0.
  bool learn(std::uint32_t id, UserId user, Time runtime, Time estimate);

  /// True if the plugin saw job `id` running.
  bool seen_running(std::uint32_t id) const;

  /// Drop a job's entry (finished, not learned).
  void forget(std::uint32_t id) { jobs_.erase(id); }

  /// Drop entries not seen during `cycle`.
  std::size_t sweep(std::uint64_t cycle);

  const TrackedJob* find(std::uint32_t id) const;
  const std::unordered_map<std::uint32_t, TrackedJob>& jobs() const { return jobs_; }

  /// Learned jobs since the history began (persisted) and whether the
  /// history changed since the last clear_dirty() (the state file needs
  /// saving).
  std::uint64_t learned_total() const { return learned_total_; }
  void set_learned_total(std::uint64_t n) { learned_total_ = n; }
  bool dirty() const { return dirty_; }
  void clear_dirty() { dirty_ = false; }

  /// Replace the history (from the state file).
  void restore_history(const std::vector<Predictor::Ring>& rings);

 private:
  Time fresh(TrackedJob& j);
  /// A job seen for the first time (or planned anew): its first planning value.
  TrackedJob first_sight(std::uint32_t id, UserId user, Time estimate);

  SchedulerConfig cfg_;
  Predictor predictor_;
  std::unordered_map<std::uint32_t, TrackedJob> jobs_;
  std::unordered_map<UserId, std::uint64_t> history_version_;
  std::uint64_t learned_total_ = 0;
  bool dirty_ = false;
};

}  // namespace easypp::plugin
