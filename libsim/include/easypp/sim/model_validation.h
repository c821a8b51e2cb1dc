// Validation of a workload model against a log, as Krampe et al. validate
// theirs: the distributions (size, runtime, interarrival: Kolmogorov-
// Smirnov distance to the log's), the Bravais-Pearson correlations of their
// Table 1, the share of underestimated runtimes, and the results of
// schedulers replaying the log and the generated workloads (the paper: EASY;
// here any list, EASY and EASY++ by default), over several seeds. Plus what
// EASY++ needs from the user layer: users, repeats, and the paper's
// predictor's accuracy (offline, in submit order, and inside EASY++).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "easypp/config.h"
#include "easypp/sim/markov_model.h"
#include "easypp/sim/workload.h"

namespace easypp {

/// The per-job distributions of a workload, for comparisons.
struct WorkloadStats {
  std::uint64_t jobs = 0;
  std::uint64_t users = 0;
  double offered_load = 0;
  double size_mean = 0, size_median = 0, serial_percent = 0, pow2_percent = 0;
  double runtime_mean = 0, runtime_median = 0, runtime_p90 = 0;
  double interarrival_mean = 0, interarrival_median = 0;
  double estimate_accuracy_percent = 0;   ///< mean of min(r, e) / max(r, e)
  double underestimated_percent = 0;      ///< runtime > estimate
  // Krampe et al., Table 1 (Bravais-Pearson):
  double corr_runtime_size = 0;           ///< p_j / m_j
  double corr_runtime_estimate = 0;       ///< p_j / estimate_j
  double corr_interarrival_size = 0;      ///< delta r_j / m_j
  double corr_interarrival_runtime = 0;   ///< delta r_j / p_j
  double repeat_percent = 0;              ///< same size and estimate as the user's previous job
  /// The paper's predictor (average of the user's last two runtimes, else
  /// the estimate; capped at the estimate) in submit order, mean accuracy.
  double predictor_accuracy_percent = 0;
  /// Sorted, for the Kolmogorov-Smirnov distances.
  std::vector<double> sizes, runtimes, interarrivals;
};

WorkloadStats workload_stats(const Workload& w);

/// Kolmogorov-Smirnov distance between two samples (both sorted): the
/// largest gap between their empirical distribution functions.
double ks_distance(const std::vector<double>& a, const std::vector<double>& b);

struct ValidationRow {
  std::string group;          ///< "distributions", "correlations", "users", or a scheduler
  std::string name;           ///< what is compared
  double log = 0;             ///< the log's value
  std::vector<double> model;  ///< one per generated workload
  bool distance = false;      ///< a KS distance to the log (the log's own is 0)
};

struct ValidationOptions {
  std::uint64_t first_seed = 1;
  std::uint32_t seeds = 5;
  std::vector<std::string> schedulers{"easy", "easy++"};
};

struct Validation {
  std::string log_source;
  std::string model_source;
  std::vector<std::uint64_t> seeds;
  std::vector<ValidationRow> rows;
};

/// Generate `seeds` workloads from `m` (as many jobs as the log) and compare
/// each with `log`. Throws std::invalid_argument for a bad scheduler spec.
Validation validate_model(const MarkovModel& m, const std::string& model_source, const Workload& log,
                          const ValidationOptions& opt);

}  // namespace easypp
