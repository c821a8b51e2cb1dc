// The scheduling pass (spec section 4): EASY backfilling with predictions,
// written once against an abstract resource model (the "adapter") so that the
// SWF simulator (processor counts) and the Slurm plugin (node/core bitmaps and
// select_g_job_test) run exactly the same policy.
//
// EASY and conservative backfilling differ only in reservation depth: the first
// `reservations` blocked jobs in queue order get reservations (EASY: 1, the
// head; conservative: all), the other waiting jobs are tried for backfilling
// in backfill order (FCFS or SJBF).
//
// The adapter concept (duck-typed, see ProcResources in resources.h and
// plugin/slurm_adapter.h for the two implementations):
//
//   bool start_now(JobHandle h);
//       Start h now if it fits the free resources (no reservation exists yet).
//   Time reserve(JobHandle h, Time duration, bool is_head);
//       Earliest time h fits, given the running jobs' predicted ends and the
//       reservations already made in this pass; record h's reservation (it
//       holds its resources from then for `duration`). Returns the shadow time
//       (possibly in the past: expired predictions still count; kNever if h
//       can never fit). For the head, also remembers the "extra" resources.
//   bool backfill(JobHandle h, Time end_bound);
//       Start h now if it fits the free resources and holding them until
//       end_bound delays no reservation of this pass: for one reservation,
//       either end_bound <= shadow, or h uses only "extra" resources (which
//       then shrink).
//   bool can_start_more() const;
//       False when nothing at all can start now (lets the pass stop early).
//   std::int64_t free_width() const;
//       Upper bound of the width (see WaitQueue::push) that could start now;
//       wider candidates are skipped without a backfill() call.
//   bool room_beyond_shadow() const;
//       False when no job could use case (b) any more (extra exhausted).
//   bool may_continue();
//       Budget and lock-yield point, called before each backfill candidate;
//       false ends the pass (the plugin's max-jobs-tested and time budget).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "easypp/queue.h"
#include "easypp/types.h"

namespace easypp {

struct PolicyConfig {
  BackfillOrder backfill = BackfillOrder::ShortestPrediction;
  /// Reservation depth: 1 = EASY (head only), 0 = every waiting job
  /// (conservative), N = the first N blocked jobs.
  int reservations = 1;
  /// "Safe" backfill: a candidate may use case (a) only if it would end
  /// before the shadow time even when running to its estimate.
  bool safe = false;
  /// Starvation guard (not in the paper; off by default): once the head has
  /// waited this many seconds, backfilling around it is safe (as above), so
  /// under-predicted backfilled jobs can no longer push its reservation back
  /// again and again. Negative: off.
  Time safe_after = -1;
};

struct PassResult {
  std::uint32_t started_in_order = 0;  ///< started before any job was blocked
  std::uint32_t started_backfill = 0;  ///< started by backfilling
  std::uint32_t tested = 0;            ///< backfill candidates examined
  std::uint32_t reservations = 0;      ///< reservations made
  bool head_reserved = false;          ///< a reservation was made for the head
  JobHandle head = 0;                  ///< the head (valid if head_reserved)
  Time shadow = kNever;                ///< the head's shadow time
  bool interrupted = false;            ///< the adapter ended the pass early
  bool starving_head = false;          ///< the starvation guard made this pass safe
};

template <class Adapter>
PassResult schedule_pass(Time now, WaitQueue& q, Adapter& a, const PolicyConfig& cfg) {
  using Slot = WaitQueue::Slot;
  PassResult r;
  const unsigned depth = cfg.reservations <= 0 ? UINT_MAX : unsigned(cfg.reservations);
  // Slots holding a reservation (at most depth); no allocation for EASY.
  Slot reserved_inline[4];
  std::vector<Slot> reserved_more;
  auto add_reserved = [&](Slot s) {
    if (r.reservations <= 4) reserved_inline[r.reservations - 1] = s;
    else reserved_more.push_back(s);
  };
  auto is_reserved = [&](Slot s) {
    const unsigned n = std::min(r.reservations, 4u);
    for (unsigned i = 0; i < n; ++i)
      if (reserved_inline[i] == s) return true;
    for (Slot x : reserved_more)
      if (x == s) return true;
    return false;
  };

  bool safe = cfg.safe;
  // Nothing waiting is narrow enough for what is free: stop (cheap, and
  // frequent at high load, when only wide jobs are left waiting).
  auto nothing_fits = [&] { return !a.can_start_more() || a.free_width() < q.min_width(); };
  auto bound_of = [&](const WaitQueue::Entry& e) {
    return now + (safe ? e.estimate : e.prediction);
  };

  // Phase A: queue order. Jobs start while nothing is blocked (EASY step 1);
  // the first `depth` blocked jobs get reservations; jobs between them may
  // backfill around the reservations made so far.
  const auto& by_queue = q.queue_order();
  auto it = by_queue.begin();
  while (it != by_queue.end() && r.reservations < depth) {
    const Slot s = it->slot;
    ++it;
    const WaitQueue::Entry e = q.entry(s);
    if (r.reservations == 0) {
      if (a.start_now(e.handle)) {
        ++r.started_in_order;
        q.erase(s);
        continue;
      }
      if (cfg.backfill == BackfillOrder::None) return r;
      r.shadow = a.reserve(e.handle, e.prediction, /*is_head=*/true);
      if (cfg.safe_after >= 0 && e.since < kNever && now - e.since >= cfg.safe_after) {
        safe = true;
        r.starving_head = true;
      }
      r.head_reserved = true;
      r.head = e.handle;
      ++r.reservations;
      add_reserved(s);
      continue;
    }
    if (nothing_fits()) return r;
    if (!a.may_continue()) {
      r.interrupted = true;
      return r;
    }
    ++r.tested;
    if (a.backfill(e.handle, bound_of(e))) {
      ++r.started_backfill;
      q.erase(s);
      continue;
    }
    a.reserve(e.handle, e.prediction, /*is_head=*/false);
    ++r.reservations;
    add_reserved(s);
  }
  if (it == by_queue.end()) return r;

  // Phase B: every other waiting job, in backfill order.
  auto try_one = [&](const WaitQueue::Item& item) -> bool /* keep going */ {
    if (nothing_fits()) return false;
    ++r.tested;
    if (item.width > a.free_width()) return true;
    if (!a.may_continue()) {
      r.interrupted = true;
      return false;
    }
    const Slot s = item.slot;
    const WaitQueue::Entry& e = q.entry(s);
    if (a.backfill(e.handle, bound_of(e))) {
      ++r.started_backfill;
      q.erase(s);
    }
    return true;
  };

  if (cfg.backfill == BackfillOrder::ShortestPrediction) {
    const auto& by_pred = q.prediction_order();
    for (auto p = by_pred.begin(); p != by_pred.end();) {
      const WaitQueue::Item item = *p;
      ++p;
      if (is_reserved(item.slot)) continue;
      // Ascending predictions: once a candidate cannot end before the shadow
      // time, none of the rest can either; only "extra" room remains.
      if (depth == 1 && !safe && now + item.prediction > r.shadow && !a.room_beyond_shadow())
        break;
      if (!try_one(item)) break;
    }
  } else {
    while (it != by_queue.end()) {
      const WaitQueue::Item item = *it;
      ++it;
      if (!try_one(item)) break;
    }
  }
  return r;
}

// ---------------------------------------------------------------------------
// Schedulers as combinations of orthogonal knobs (spec section 4 presets).

enum class PlanWith {
  Estimate,    ///< plan with the user's estimate (times estimate_factor)
  Prediction,  ///< plan with the predictor's output
  Runtime,     ///< plan with the actual runtime (simulator only: "perfect")
};

enum class QueueOrder {
  Arrival,   ///< FCFS (Slurm: priority order)
  Estimate,  ///< SJF: the queue itself sorted by estimate
};

}  // namespace easypp

#include "easypp/correction.h"
#include "easypp/predictor.h"

namespace easypp {

struct SchedulerConfig {
  std::string name = "easy++";  ///< label shown in reports
  PlanWith plan = PlanWith::Prediction;
  double estimate_factor = 1.0;  ///< x2: plan with 2 x estimate
  CorrectionPolicy correction = CorrectionPolicy::Estimate;
  QueueOrder queue_order = QueueOrder::Arrival;
  PolicyConfig policy;
  PredictorConfig predictor;

  /// Empty if valid, else a one-line description of what is wrong.
  std::string validate() const;
  /// Knobs as "key=value" words, e.g. for reports.
  std::string describe() const;
};

/// The presets of spec section 4, by name: fcfs, easy, easy-pred, easy-pcor,
/// easy+, easy-sjbf, easy++, perfect, perfect++, x2, sjf, conservative.
std::optional<SchedulerConfig> preset(std::string_view name);
std::vector<std::string> preset_names();

/// Apply one knob ("window", "3"). Returns an error message, empty on success.
/// Knobs: plan, estimate-factor, correction, backfill, queue-order,
/// reservations, safe, safe-after, window, metric, history-type, fullness,
/// fallback, propagation.
std::string apply_knob(SchedulerConfig& cfg, std::string_view key, std::string_view value);
std::vector<std::string> knob_names();

/// Parse "NAME[:knob=value]..." (e.g. "easy++:window=3:metric=median"):
/// the preset, then `base_knobs` (e.g. from the command line), then the
/// spec's own knobs. On error returns nullopt and sets *error.
using KnobList = std::vector<std::pair<std::string, std::string>>;
std::optional<SchedulerConfig> parse_scheduler_spec(std::string_view spec,
                                                    const KnobList& base_knobs,
                                                    std::string* error);

}  // namespace easypp
