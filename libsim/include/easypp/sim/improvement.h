// Per-job improvement factors of one run over another (Petrou's thesis,
// ch. 6.2: the distribution of "how many times better" rather than only the
// ratio of two averages). For each job measured in both runs, the factor is
// the base run's value divided by this run's: > 1 better, < 1 worse.
#pragma once

#include <cstdint>
#include <vector>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp {

struct FactorDistribution {
  double mean = 0;            ///< arithmetic mean of the factors
  double geometric_mean = 0;  ///< exp(mean log factor): 1 = even
  double better_percent = 0;  ///< jobs with factor > 1
  double same_percent = 0;    ///< factor == 1 (same start)
  double worse_percent = 0;   ///< factor < 1
  /// The factor at every half percent of the jobs: quantiles[k] at
  /// k / (quantiles.size() - 1), nearest rank (201 values).
  std::vector<double> quantiles;
};

struct Improvement {
  std::uint64_t jobs = 0;  ///< measured in both runs
  /// response = wait + runtime (at least 1 s), base over this run
  FactorDistribution response;
  /// bounded slowdown, base over this run
  FactorDistribution bounded_slowdown;
};

/// Factors of `run` over `base` (two replays of the same workload `w`).
Improvement compute_improvement(const Workload& w, const RunResult& base, const RunResult& run,
                                const MetricsOptions& opt, std::size_t quantile_points = 201);

}  // namespace easypp
