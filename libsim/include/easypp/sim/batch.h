// Many settings over one parsed workload: the fast path of a parameter
// sweep (easypp-sim --scheduler-file ... --csv, driven by easypp-sweep).
//
// Every setting is replayed by its own Simulator over the same read-only
// Workload, `threads` replays at a time; each replay is reduced to the
// figures a ranking needs (Metrics without the per-user rows, a few
// counters) as soon as it ends, so memory holds at most `threads` runs, not
// every run of the batch. Settings that must replay identically (the same
// replay_key) are replayed once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "easypp/policy.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/workload.h"

namespace easypp {

/// What a batch keeps of one replay.
struct BatchFigures {
  Metrics metrics;               ///< without per-user rows
  std::uint64_t passes = 0;
  std::uint64_t tested = 0;
  double replay_seconds = 0;     ///< wall time of the replay (0 for a duplicate)
  std::size_t same_as = SIZE_MAX;  ///< index of the setting it repeats, if any
  /// Closed-loop replays (SimOptions::feedback): the figures of the workload
  /// the replay made (metrics are computed on it too).
  bool has_closed_loop = false;
  ClosedLoopMetrics closed_loop;
};

/// A key equal for two settings exactly when their replays must be the
/// same schedule: the knobs that matter (SchedulerConfig::describe()) after
/// folding predictor knobs that cannot change a prediction (with a window of
/// 1 the metric and the fullness; with 2, median is the average).
std::string replay_key(const SchedulerConfig& cfg);

/// Replay every setting; `done(i, figures)` is called for i = 0, 1, ... in
/// order, from the calling thread or a worker (never two at once), as soon
/// as setting i and every earlier one are done. Rethrows the first exception
/// a replay threw (after the workers stopped). Every replay follows `so`
/// (with `so.feedback`, closed-loop: measured on the workload it made).
void run_batch(const Workload& w, const std::vector<SchedulerConfig>& cfgs, unsigned threads,
               MetricsOptions mo,
               const std::function<void(std::size_t, const BatchFigures&)>& done,
               const SimOptions& so = {});

}  // namespace easypp
