// A scheduler's settings: the orthogonal knobs of the spec (section 4) and
// the presets made of them (easy, easy++, conservative, ...).
//
// One vocabulary for every front end: easypp-sim's --scheduler
// "easy++:window=3", the plugin's SchedulerParameters easypp_window=3 and
// the settings object of the plugin's status file all go through
// apply_knob() and knob_value(), so a setting is parsed once and rendered
// once.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "easypp/queue.h"
#include "easypp/correction.h"
#include "easypp/predictor.h"
#include "easypp/types.h"

namespace easypp {

/// What the scheduling pass needs to know besides the jobs and resources.
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

  /// The starvation guard: has a head waiting since `since` waited long
  /// enough that backfilling around it must be safe?
  bool starving(Time now, Time since) const {
    return safe_after >= 0 && since < kNever && now - since >= safe_after;
  }
  /// THE backfill bound: until when a job started at `now` holds its
  /// resources as far as this pass's reservations are concerned. Its
  /// prediction, or its estimate (kill time) under safe backfill or while
  /// the guard protects the head (`guarded`).
  Time end_bound(Time now, Time prediction, Time estimate, bool guarded) const {
    return now + (safe || guarded ? estimate : prediction);
  }
};

enum class PlanWith {
  Estimate,    ///< plan with the user's estimate (times estimate_factor)
  Prediction,  ///< plan with the predictor's output
  Runtime,     ///< plan with the actual runtime (simulator only: "perfect")
};

enum class QueueOrder {
  Arrival,   ///< FCFS (Slurm: priority order)
  Estimate,  ///< SJF: the queue itself sorted by estimate
};

struct SchedulerConfig {
  std::string name = "easy++";  ///< label shown in reports
  PlanWith plan = PlanWith::Prediction;
  double estimate_factor = 1.0;  ///< x2: plan with 2 x estimate
  CorrectionPolicy correction = CorrectionPolicy::Estimate;
  QueueOrder queue_order = QueueOrder::Arrival;
  PolicyConfig policy;
  PredictorConfig predictor;
  /// Forget a user's history once the user has had no job for this many
  /// seconds (bounds memory over years of users). Negative: never.
  Time history_ttl = -1;

  /// Empty if valid, else a one-line description of what is wrong.
  std::string validate() const;
  /// Knobs as "key=value" words, e.g. for reports (the knobs that matter
  /// for this configuration, in knob_names() order).
  std::string describe() const;
};

/// The presets of spec section 4, by name: fcfs, easy, easy-pred, easy-pcor,
/// easy+, easy-sjbf, easy++, perfect, perfect++, x2, sjf, conservative.
std::optional<SchedulerConfig> preset(std::string_view name);
std::vector<std::string> preset_names();

/// Every knob, in a fixed order: plan, estimate-factor, correction,
/// backfill, sjbf, queue-order, reservations, safe, safe-after, window,
/// metric, history-type, fullness, fallback, propagation, history-ttl.
std::vector<std::string> knob_names();
/// Apply one knob ("window", "3"). Returns an error message, empty on
/// success (then nothing changed).
std::string apply_knob(SchedulerConfig& cfg, std::string_view key, std::string_view value);
/// A knob's current value, spelled as apply_knob() accepts it (so
/// apply_knob(c, k, knob_value(c, k)) changes nothing). Empty for an
/// unknown knob.
std::string knob_value(const SchedulerConfig& cfg, std::string_view key);

using KnobList = std::vector<std::pair<std::string, std::string>>;
/// Every knob with its value, in knob_names() order.
KnobList knob_values(const SchedulerConfig& cfg);

/// Parse "NAME[:knob=value]..." (e.g. "easy++:window=3:metric=median"):
/// the preset, then `base_knobs` (e.g. from the command line), then the
/// spec's own knobs. On error returns nullopt and sets *error.
std::optional<SchedulerConfig> parse_scheduler_spec(std::string_view spec,
                                                    const KnobList& base_knobs,
                                                    std::string* error);

}  // namespace easypp
