// Input shaking: replay slightly perturbed copies of a workload and report the
// spread of every metric, so that a comparison that flips sign on noise shows
// it (Tsafrir, Ouaknine and Feitelson, "Reducing performance evaluation
// sensitivity and variability by input shaking", MASCOTS 2007).
//
// Copy i of N has its offered load scaled by a factor spread evenly over
// [1 - band, 1 + band] (the midpoints of N equal strata, so the copies cover
// the band uniformly and the same N always gives the same loads), with the
// interarrival times scaled as --load does; optionally every submit time is
// then moved by a random whole number of seconds in [-jitter, +jitter]
// (seeded, so a run is reproducible). Copy i is the same for every
// scheduler: comparisons between schedulers are paired.
#pragma once

#include <cstdint>
#include <vector>

#include "easypp/policy.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp {

struct ShakeOptions {
  unsigned copies = 0;      ///< 0: no shaking
  double band = 0.01;       ///< relative half-width of the offered-load band
  Time jitter = 0;          ///< largest submit-time shift, seconds (0: none)
  std::uint64_t seed = 1;   ///< for the jitter
  unsigned threads = 0;     ///< 0: the cores this process may use
};

/// The offered-load factor of copy `i` (0-based) of `o.copies`.
double shake_load_factor(const ShakeOptions& o, unsigned i);

/// Copy `i` of the base workload, perturbed. Raw records and diagnostics are
/// not copied (a copy is only replayed and measured).
Workload shaken_copy(const Workload& base, const ShakeOptions& o, unsigned i);

struct ShakeResult {
  std::vector<double> load_factors;   ///< per copy
  std::vector<double> offered_loads;  ///< per copy, whole log (as --load counts it)
  /// metrics[s][i]: scheduler s (in the order given) on copy i.
  std::vector<std::vector<Metrics>> metrics;
  /// Closed-loop replays (SimOptions::feedback): closed_loop[s][i], the
  /// figures of the workload scheduler s made of copy i (metrics[s][i] is
  /// then computed on that workload too, as for an unshaken feedback run).
  /// Empty for open replays.
  std::vector<std::vector<ClosedLoopMetrics>> closed_loop;
  /// ... and what became of each copy's links (the same under every
  /// scheduler; a jitter that reorders a job and its preceding job makes the
  /// link fall back as not earlier).
  std::vector<FeedbackReport> links;
  unsigned threads = 0;               ///< threads used
  double elapsed_seconds = 0;         ///< wall time of all the copies' replays
};

/// Replay every copy under every scheduler, `o.threads` replays at a time
/// (each an independent Simulator over its own copy; a copy lives only as
/// long as its replay). Metrics are computed once per replay, without the
/// per-user rows. Deterministic: the result does not depend on the threads.
/// Rethrows the first exception a replay threw. With `so.feedback` each
/// copy is replayed closed-loop (its links, fields 17 and 18, apply inside
/// the copy) and measured on the workload the replay made.
ShakeResult run_shaken(const Workload& base, const std::vector<SchedulerConfig>& cfgs,
                       const ShakeOptions& o, MetricsOptions mo, const SimOptions& so = {});

/// The cores this process may run on (at least 1).
unsigned available_cores();

/// Summary of a sample: mean, sample standard deviation, extremes and the 95%
/// confidence interval of the mean (Student's t with n - 1 degrees of
/// freedom; for n < 2 the interval is the mean itself).
struct Spread {
  std::size_t n = 0;
  double mean = 0, sd = 0, min = 0, max = 0, ci_low = 0, ci_high = 0;
  double half_width() const { return (ci_high - ci_low) / 2; }
};
Spread spread_of(const std::vector<double>& xs);

}  // namespace easypp
