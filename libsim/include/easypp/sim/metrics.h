// The metrics of spec section 5, computed from a finished run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "easypp/sim/simulator.h"
#include "easypp/types.h"
#include "easypp/sim/workload.h"

namespace easypp {

struct MetricsOptions {
  double warmup_fraction = 0.01;  ///< first fraction of terminations not measured
  Time short_threshold = 3600;    ///< runtime <= this: "short"
  std::int64_t narrow_threshold = 8;  ///< size <= this: "narrow"
  bool exclude_flurries = false;  ///< drop jobs marked as flurry from the measured set
  bool per_user = true;           ///< fill Metrics::users (off for shaken copies)
  bool fairness = true;           ///< fill Metrics::fairness (off for shaken copies)
  /// The run's fair start times, kept between calls for the same run (the
  /// second, without flurries, need not replay FCFS from every arrival
  /// again): filled by the first call that needs them if empty, read if not.
  std::vector<Time>* fair_cache = nullptr;
};

struct CategoryMetrics {
  std::string name;  ///< "short-narrow", "short-wide", "long-narrow", "long-wide"
  std::uint64_t jobs = 0;
  double avg_wait_minutes = 0;
  double avg_bounded_slowdown = 0;
  double avg_accuracy_percent = 0;
  double max_bounded_slowdown = 0;  ///< the worst case (Srinivasan et al.)
};

/// Fairness by fair start time (Srinivasan et al.; selective_metrics.h),
/// over the measured jobs.
struct Fairness {
  bool computed = false;
  std::uint64_t late_jobs = 0;      ///< started after their fair start time
  double late_percent = 0;          ///< late_jobs / measured jobs
  double late_avg_minutes = 0;      ///< start - fair start, late jobs
  double late_max_minutes = 0;
  /// Percent of measured jobs whose bounded slowdown is, relative to their
  /// fair bounded slowdown (the same with the fair start), <= 1, in (1,1.5],
  /// (1.5,2], (2,4], > 4: the paper's table 9.
  double ratio_histogram[5] = {0, 0, 0, 0, 0};
};

struct Predictability {
  std::uint64_t reserved_jobs = 0;       ///< measured jobs that got a head reservation
  double rate_percent = 0;               ///< reserved_jobs / measured jobs
  double mean_abs_dev_minutes = 0;       ///< |first reservation - start|
  double median_abs_dev_minutes = 0;
  double stddev_abs_dev_minutes = 0;
  std::uint64_t late_jobs = 0;           ///< started after their first reservation
  double late_rate_percent = 0;          ///< late_jobs / reserved_jobs
  double late_mean_minutes = 0;          ///< start - first reservation, late jobs
  double late_median_minutes = 0;
};

/// One user's measured jobs (jobs without a user id are in no user's row).
struct UserMetrics {
  UserId user = kNoUser;
  std::uint64_t jobs = 0;
  double avg_wait_minutes = 0;
  double avg_bounded_slowdown = 0;
};

struct Metrics {
  std::uint64_t jobs_simulated = 0;
  std::uint64_t jobs_measured = 0;
  /// Jobs that terminated after the last arrival (cool-down, not measured):
  /// many of them, or a long max wait, point at starvation the averages hide.
  std::uint64_t jobs_after_last_arrival = 0;
  // Starvation, over all simulated jobs (warm-up and cool-down included:
  // that is where starved jobs end up):
  double max_wait_minutes = 0;         ///< the longest wait
  double p99_wait_minutes = 0;         ///< 99th percentile (nearest rank)
  std::uint64_t wide_jobs = 0;         ///< jobs wider than half the machine
  double wide_avg_wait_minutes = 0;
  double wide_max_wait_minutes = 0;
  double avg_wait_minutes = 0;
  double avg_response_minutes = 0;
  double avg_bounded_slowdown = 0;
  double avg_accuracy_percent = 0;
  double corrections_per_job = 0;
  double corrections_stddev = 0;
  double backfilled_percent = 0;
  double offered_load = 0;   ///< over [window_start, window_end]
  double utilization = 0;    ///< over [window_start, window_end]
  Time window_start = 0;     ///< end of warm-up
  Time window_end = 0;       ///< last arrival
  Predictability predictability;
  std::vector<CategoryMetrics> categories;
  /// Percent of measured jobs by bounded slowdown: <= 1, (1,1.5], (1.5,2],
  /// (2,4], > 4 (Srinivasan et al.'s bins).
  double bsld_histogram[5] = {0, 0, 0, 0, 0};
  Fairness fairness;
  std::vector<UserMetrics> users;  ///< by user id; only with MetricsOptions::per_user
};

/// The measured set of spec section 5: all jobs but the first
/// warmup_fraction to terminate and the jobs that terminate after the last
/// arrival (and flurry jobs if excluded).
class MeasuredSet {
 public:
  MeasuredSet(const Workload& w, const RunResult& r, const MetricsOptions& opt);
  bool operator()(std::size_t i) const {
    const JobOutcome& o = r_.jobs[i];
    return o.termination_rank >= warm_ && o.end <= last_arrival_ &&
           !(exclude_flurries_ && w_.jobs[i].flurry);
  }
  std::uint32_t warmup_jobs() const { return warm_; }
  Time last_arrival() const { return last_arrival_; }

 private:
  const Workload& w_;
  const RunResult& r_;
  std::uint32_t warm_ = 0;
  Time last_arrival_ = 0;
  bool exclude_flurries_ = false;
};

Metrics compute_metrics(const Workload& w, const RunResult& r, const MetricsOptions& opt = {});

/// The bins of Metrics' slowdown histograms (<= 1, 1-1.5, 1.5-2, 2-4, > 4).
int slowdown_bin(double x);

/// Bounded slowdown of one job (spec section 5).
double bounded_slowdown(Time wait, Time runtime);
/// Accuracy of prediction p for runtime r, in [0, 1]. Inline: the
/// simulator's accuracy accounting calls it for every re-predicted job.
inline double prediction_accuracy(Time p, Time r) {
  if (p <= 0 || r <= 0) return p == r ? 1.0 : 0.0;
  // min / max: the same division as r / p or p / r, without a branch on
  // which is larger (it changes from call to call: the accounting of a
  // waiting job's re-predictions, billions of calls on RICC).
  const double a = double(p), b = double(r);
  return std::min(a, b) / std::max(a, b);
}

/// The time integral of prediction_accuracy(p, r) over the segments a job
/// spent under each prediction p (runtime r), kept in integers so that its
/// value does not depend on the order the segments are added in (the
/// simulator adds a group's re-predictions at once, from prefix sums, and
/// a job's own one by one: the same result). With r > 0, a segment of
/// length dt adds p*dt/r when p <= r and r*dt/p when p > r: the integral
/// is a/r + r*b, with a the sum of p*dt (0 when p <= 0) and b the sum of
/// dt/p in fixed point (64 fraction bits, each term rounded down: about
/// 1e-19 per segment). With r <= 0 the accuracy is 1 when p == r, else 0:
/// `a` sums the time under p == r. (Unsigned: a caller may take a sum out
/// before it adds a larger one, exactly.)
struct AccuracySum {
  using u128 = unsigned __int128;
  u128 a = 0, b = 0;
  static u128 a_term(Time p, Time dt) { return p > 0 && dt > 0 ? u128(p) * u128(dt) : 0; }
  static u128 b_term(Time p, Time dt) {
    return p > 0 && dt > 0 ? (u128(std::uint64_t(dt)) << 64) / u128(std::uint64_t(p)) : 0;
  }
  void add(Time p, Time r, Time dt) {
    if (r <= 0) {
      if (p == r && dt > 0) a += u128(dt);
    } else if (p <= r) {
      a += a_term(p, dt);
    } else {
      b += b_term(p, dt);
    }
  }
  /// Term-wise sums and differences (modulo 2^128: exact, any order).
  AccuracySum& operator+=(const AccuracySum& o) {
    a += o.a;
    b += o.b;
    return *this;
  }
  AccuracySum& operator-=(const AccuracySum& o) {
    a -= o.a;
    b -= o.b;
    return *this;
  }
  /// Takes back what add(p, r, dt) added (r > 0).
  void sub(Time p, Time r, Time dt) {
    if (p <= r) a -= a_term(p, dt);
    else b -= b_term(p, dt);
  }
  double integral(Time r) const {
    if (r <= 0) return double(a);
    return double(a) / double(r) + double(r) * (double(b) * 0x1p-64);
  }
};

}  // namespace easypp
