// Projected starts for squeue --start beyond each partition's head
// (easypp_publish_starts): estimates only, nothing is reserved and nothing
// the plugin or Slurm decides reads them. Slurm-free, unit tested.
//
// One partition's free CPUs over time, counted as one pool (nodes are not
// told apart: a job needing whole nodes may start later than projected):
// the CPUs free now, the running jobs' CPUs coming back at their planned ends
// (start + prediction), the head's reservation held from its shadow time for
// its prediction. The first pending jobs are then placed in queue order, each
// at the earliest time its CPUs are free for its whole prediction, and held
// there (so later jobs queue behind earlier ones, as in conservative
// backfilling). Cost: O(points) per job, the points being the running jobs
// and the jobs already placed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "easypp/types.h"

namespace easypp::plugin {

class StartProjection {
 public:
  /// `capacity`: the partition's CPUs; `free_now`: those free at `now`.
  StartProjection(Time now, std::int64_t capacity, std::int64_t free_now)
      : now_(now), capacity_(capacity) {
    points_.push_back(Point{now, std::min(free_now, capacity)});
  }

  /// A running job's `cpus` come back at `at` (its planned end; an expired
  /// one, still running, just after now).
  void release(Time at, std::int64_t cpus) { add(std::max(at, now_ + 1), kNever, cpus); }

  /// `cpus` are taken from `from` until `until` (a reservation, a placed job).
  void hold(Time from, Time until, std::int64_t cpus) {
    if (until > from) add(std::max(from, now_), until, -cpus);
  }

  /// The earliest time >= now at which `cpus` are free for `duration`
  /// seconds; kNever if the partition is too small.
  Time earliest(std::int64_t cpus, Time duration) const {
    if (cpus > capacity_) return kNever;
    duration = std::max<Time>(duration, 1);
    std::size_t s = 0;
    while (s < points_.size()) {
      if (points_[s].free < cpus) {
        ++s;
        continue;
      }
      const Time until = points_[s].at + duration;
      std::size_t j = s + 1;
      while (j < points_.size() && points_[j].at < until && points_[j].free >= cpus) ++j;
      if (j == points_.size() || points_[j].at >= until) return points_[s].at;
      s = j + 1;  // every start before points_[j] overlaps its shortage
    }
    return kNever;
  }

  /// earliest(), then hold() there; kNever (and nothing held) if never.
  Time place(std::int64_t cpus, Time duration) {
    const Time t = earliest(cpus, duration);
    if (t < kNever) hold(t, t + std::max<Time>(duration, 1), cpus);
    return t;
  }

  std::size_t points() const { return points_.size(); }

 private:
  struct Point {
    Time at;            ///< from this time on ...
    std::int64_t free;  ///< ... this many CPUs are free (until the next point)
  };

  // `delta` CPUs free from `from` until `until` (kNever: for good).
  void add(Time from, Time until, std::int64_t delta) {
    const std::size_t a = split(from);
    const std::size_t b = until < kNever ? split(until) : points_.size();
    for (std::size_t i = a; i < b; ++i) points_[i].free += delta;
  }

  // The index of the point starting at t, made if needed (t >= now).
  std::size_t split(Time t) {
    auto it = std::lower_bound(points_.begin(), points_.end(), t,
                               [](const Point& p, Time x) { return p.at < x; });
    if (it != points_.end() && it->at == t) return std::size_t(it - points_.begin());
    const std::int64_t before = std::prev(it)->free;  // points_[0].at == now <= t
    const auto at = points_.insert(it, Point{t, before});  // (may reallocate)
    return std::size_t(at - points_.begin());
  }

  Time now_;
  std::int64_t capacity_;
  std::vector<Point> points_;  ///< by time; the first at now
};

}  // namespace easypp::plugin
