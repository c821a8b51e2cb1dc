// Selective reservations (Srinivasan, Kettimuthu, Subramani & Sadayappan,
// "Selective reservation strategies for backfill job scheduling", JSSPP
// 2002; ../shared/papers/srinivasan-selective-reservations.txt).
//
// A waiting job gets no reservation until it starves: until its expansion
// factor (wait + planning value) / planning value reaches a starvation
// threshold. Jobs that starve get reservations in queue order (as under
// conservative backfilling); every other job may start whenever it fits
// without delaying them. With no starving job, nothing is reserved at all.
//
// Sel uses one threshold; Sel-D one per category, short/long (planning value
// <= short_limit) x narrow/wide (width <= narrow_width): SN, SW, LN, LW.
// The thresholds are given, derived by the harness as the paper does (the
// average bounded slowdown of the well-estimated jobs under conservative
// backfilling, tools/ and libsim's derive_selective_thresholds()), or
// adaptive: a scale times the running average bounded slowdown of the jobs
// finished so far (SlowdownMeans below; the paper's "scaled-adaptive").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "easypp/types.h"

namespace easypp {

struct Selective {
  enum class Mode {
    Off,       ///< not selective: the reservation depth decides (EASY, conservative)
    Given,     ///< thresholds given
    Derive,    ///< thresholds from a conservative run (the harness fills them in)
    Adaptive,  ///< thresholds = scale x running average bsld of finished jobs
  };
  enum Category { SN = 0, SW = 1, LN = 2, LW = 3 };

  Mode mode = Mode::Off;
  bool per_category = false;  ///< Sel-D (else Sel: threshold[0] for every job)
  std::array<double, 4> threshold = {0, 0, 0, 0};
  double scale = 1.0;          ///< adaptive: the running average times this
  /// Derive: from a conservative replay planned as this scheduler plans
  /// (its planning values, predictor, corrections, backfill order) rather
  /// than the paper's, planned with estimates. Harness only.
  bool derive_own = false;
  Time short_limit = 3600;     ///< planning value <= this: short
  std::int64_t narrow_width = 8;  ///< width <= this: narrow

  bool on() const { return mode != Mode::Off; }

  static int category(Time length, std::int64_t width, Time short_limit, std::int64_t narrow) {
    return (length <= short_limit ? 0 : 2) + (width <= narrow ? 0 : 1);
  }
  /// The starvation threshold of a job of this planning value and width.
  double threshold_of(Time planned, std::int64_t width) const {
    return per_category ? threshold[std::size_t(category(planned, width, short_limit, narrow_width))]
                        : threshold[0];
  }
  /// Is a job waiting since `since` with planning value `planned` starving
  /// (its expansion factor reached its threshold)? A job whose waiting time
  /// is unknown never is.
  bool starving(Time now, Time since, Time planned, std::int64_t width) const {
    if (since >= kNever) return false;
    const double p = double(planned > 0 ? planned : 1);
    const double wait = double(now > since ? now - since : 0);
    return (wait + p) / p >= threshold_of(planned, width);
  }
};

/// The running average bounded slowdown of finished jobs, overall and per
/// category (by runtime and width), for adaptive thresholds. Before any job
/// of a category finished, its average is 1: every blocked job starves, as
/// under conservative backfilling.
class SlowdownMeans {
 public:
  void record(Time wait, Time runtime, std::int64_t width, const Selective& s) {
    const double r = double(runtime > 10 ? runtime : 10);
    const double bsld = std::max(1.0, (double(wait > 0 ? wait : 0) + r) / r);
    const auto c = std::size_t(Selective::category(runtime, width, s.short_limit, s.narrow_width));
    sum_[c] += bsld;
    ++n_[c];
    sum_all_ += bsld;
    ++n_all_;
  }
  double mean(int category) const {
    const auto c = std::size_t(category);
    return n_[c] ? sum_[c] / double(n_[c]) : 1.0;
  }
  double mean() const { return n_all_ ? sum_all_ / double(n_all_) : 1.0; }

  /// The sums and counts themselves (the plugin keeps them in its state
  /// file, so a restart does not forget them): per category, then overall.
  struct Sums {
    std::array<double, 4> sum = {0, 0, 0, 0};
    std::array<std::uint64_t, 4> n = {0, 0, 0, 0};
    double sum_all = 0;
    std::uint64_t n_all = 0;
    bool operator==(const Sums& o) const {
      return sum == o.sum && n == o.n && sum_all == o.sum_all && n_all == o.n_all;
    }
    bool operator!=(const Sums& o) const { return !(*this == o); }
  };
  Sums sums() const { return Sums{sum_, n_, sum_all_, n_all_}; }
  void restore(const Sums& s) {
    sum_ = s.sum;
    n_ = s.n;
    sum_all_ = s.sum_all;
    n_all_ = s.n_all;
  }
  /// Set s's thresholds to its scale times these averages.
  void apply(Selective& s) const {
    if (s.per_category)
      for (int c = 0; c < 4; ++c) s.threshold[std::size_t(c)] = s.scale * mean(c);
    else
      s.threshold = {s.scale * mean(), 0, 0, 0};
  }

 private:
  std::array<double, 4> sum_ = {0, 0, 0, 0};
  std::array<std::uint64_t, 4> n_ = {0, 0, 0, 0};
  double sum_all_ = 0;
  std::uint64_t n_all_ = 0;
};

}  // namespace easypp
