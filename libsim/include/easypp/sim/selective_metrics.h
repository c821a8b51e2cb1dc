// The harness's side of selective reservations (easypp/selective.h): the
// thresholds derived as Srinivasan et al. do, and their fairness measure.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "easypp/config.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/workload.h"

namespace easypp {

class MeasuredSet;

/// The paper's thresholds for a workload: the average bounded slowdown,
/// under conservative backfilling (planned with estimates), of the measured
/// jobs that are well estimated (runtime within a factor of two of the
/// estimate), overall and per category (actual runtime <= short_limit:
/// short; width <= narrow: narrow). Index 0: overall; 1..4: SN, SW, LN, LW.
/// An average below 1 or over no job is 1. With `own` (sel-derive=own), the
/// conservative replay plans as *own does (its planning values, predictor,
/// corrections, backfill order; every waiting job reserved, selective
/// reservations off) instead of with estimates.
std::array<double, 5> derive_selective_thresholds(const Workload& w, const SimOptions& sim,
                                                  Time short_limit, std::int64_t narrow,
                                                  const SchedulerConfig* own = nullptr);

/// Replace every `derive` / `derive-d` setting of `cfgs` by the thresholds
/// derived from `w` (one conservative run per distinct category bounds, and
/// for sel-derive=own one per scheduler).
void resolve_selective_thresholds(const Workload& w, const SimOptions& sim,
                                  std::vector<SchedulerConfig>& cfgs);

/// The fair start time of every job (Srinivasan et al.): when it would have
/// started had the scheduler switched to FCFS without backfilling at the
/// moment it arrived, given the jobs then running (to their actual ends)
/// and the jobs then waiting ahead of it (with their actual runtimes).
std::vector<Time> fair_start_times(const Workload& w, const RunResult& r);

}  // namespace easypp
