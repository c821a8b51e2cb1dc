// Closed-loop replay (--feedback; Shmueli and Feitelson, docs/closed-loop.md):
// which jobs follow which (SWF fields 17 and 18), what a closed run's
// workload became, and the figures of a closed system (throughput, session
// length, per runtime class).
#pragma once

#include <cstdint>
#include <vector>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp {

/// Where every job of a feedback replay comes from.
struct FeedbackLinks {
  static constexpr std::uint32_t kNone = ~std::uint32_t(0);
  /// The preceding job's index, or kNone: submitted at its logged time.
  std::vector<std::uint32_t> pred;
  FeedbackReport report;
};

/// Link every job to its preceding job (field 17, a job number) when that
/// job is in the workload, earlier in it, and the think time (field 18) is
/// known (or a session model decides it); the others fall back to their
/// logged submit time, counted by reason.
FeedbackLinks link_feedback(const Workload& w);

/// The workload a feedback run made: the jobs it submitted, at the times it
/// submitted them, sorted by them (ties in log order), with their outcomes
/// in `*out` (parallel). Metrics, the schedule's SWF and the figures are
/// computed on this pair as on an open run's. Without feedback (no
/// RunResult::submitted) a plain copy.
Workload realized_workload(const Workload& w, const RunResult& r, RunResult* out);

/// The measures of a closed system, over the measured jobs of a realized
/// workload (MeasuredSet).
struct RuntimeClassMetrics {
  const char* name = "";  ///< "<=1m", "1-10m", ">10m"
  std::uint64_t jobs = 0;
  double avg_wait_minutes = 0;
  double avg_response_minutes = 0;
  double avg_bounded_slowdown = 0;
};
struct ClosedLoopMetrics {
  std::uint64_t jobs_submitted = 0;  ///< all jobs the run submitted
  std::uint64_t jobs_not_submitted = 0;  ///< a session model's jobs past the horizon
  double span_hours = 0;             ///< first to last submission
  double throughput_per_hour = 0;    ///< jobs submitted per hour of span
  std::uint64_t sessions = 0;        ///< a user's jobs with think times <= 20 min
  double avg_session_jobs = 0;       ///< jobs per session
  RuntimeClassMetrics classes[3];
};
ClosedLoopMetrics compute_closed_loop(const Workload& realized, const RunResult& r,
                                      std::uint64_t not_submitted, const MetricsOptions& opt);

/// The session threshold: a think time (submission after the user's latest
/// end) above it starts a new session (Zilber et al., the paper's 20 min).
constexpr Time kSessionThreshold = 1200;

}  // namespace easypp
