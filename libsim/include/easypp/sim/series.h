// The data behind easypp-sim's pictures (--report), reduced from one run to a
// few hundred points so that no per-job data outlives the run.
#pragma once

#include <cstdint>
#include <vector>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp {

struct SeriesPoint {
  double x = 0, y = 0;
};

struct RunSeries {
  /// Running average of the bounded slowdown of the measured jobs taken in
  /// submit order (x: submit time in days since the first submit). The last
  /// point is the run's average bounded slowdown; a jump is a flurry.
  std::vector<SeriesPoint> running_bsld;
  /// Wait-time distribution of the measured jobs: (wait in minutes, fraction
  /// of the jobs that waited at most that long), one point per half percent.
  std::vector<SeriesPoint> wait_cdf;
  /// Prediction accuracy of the measured jobs: jobs per bin, `bins` equal
  /// bins over [0, 100] percent.
  std::vector<std::uint64_t> accuracy_hist;
  /// Waiting jobs over time, averaged over equal buckets (x: bucket middle in
  /// days since the first submit), from the first submit to the last start.
  std::vector<SeriesPoint> queue_length;
};

struct SeriesOptions {
  std::size_t points = 600;   ///< at most this many points per time series
  std::size_t bins = 20;      ///< accuracy histogram bins
};

RunSeries compute_series(const Workload& w, const RunResult& r, const MetricsOptions& mo,
                         const SeriesOptions& so = {});

}  // namespace easypp
