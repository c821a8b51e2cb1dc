// A scheduler's settings: the orthogonal knobs of the spec (section 4) and
// the presets made of them (easy, easy++, conservative, ...).
//
// One vocabulary for every front end: easypp-sim's --scheduler
// "easy++:window=3", the plugin's SchedulerParameters easypp_window=3 and
// the settings object of the plugin's status file all go through
// apply_knob() and knob_value(), so a setting is parsed once and rendered
// once.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "easypp/queue.h"
#include "easypp/correction.h"
#include "easypp/creasy.h"
#include "easypp/predictor.h"
#include "easypp/selective.h"
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
  // Guards (not in the paper; all off in its presets): rules that bound how
  // far backfilling may push the head's reservation back. Under-predicted
  // backfilled jobs are corrected, the head's reservation moves later, more
  // jobs backfill into the new gap, again and again: wide jobs can starve
  // (docs/guard.md measures the rules below).
  //
  // Switches: once the rule fires, backfilling around the head is safe (as
  // above: judged by estimates) for the rest of its wait.
  /// ... once the head has waited this many seconds. Negative: off.
  Time safe_after = -1;
  /// ... once the head's reservation lies this many seconds past its first
  /// one. Negative: off.
  Time safe_after_delay = -1;
  /// ... once the head's expansion factor (wait + planning value) /
  /// planning value reaches this (the starvation threshold of Srinivasan
  /// et al.'s selective reservations, applied to the head's reservation).
  /// 0: off.
  double safe_after_xfactor = 0;
  /// A bound: a job may backfill around the head only if, even run to its
  /// estimate (its kill time), it ends by the head's first reservation +
  /// max_delay, or it uses only what the head does not need. Backfilling
  /// alone then never pushes the head more than max_delay past its first
  /// reservation (corrections of jobs already running before it still do).
  /// Negative: off.
  Time max_delay = -1;
  /// Selective reservations (selective.h): when on, a blocked job gets a
  /// reservation only once it starves, and `reservations` is not used.
  Selective selective;

  bool any_guard() const {
    return safe_after >= 0 || safe_after_delay >= 0 || safe_after_xfactor > 0 || max_delay >= 0;
  }
  /// Does a switch fire for a head waiting since `since` with planning value
  /// `prediction`, whose reservation is `shadow` (first: `first`, kNever if
  /// this is it)?
  bool starving(Time now, Time since, Time prediction = 0, Time shadow = kNever,
                Time first = kNever) const {
    if (since >= kNever) return false;
    if (safe_after >= 0 && now - since >= safe_after) return true;
    if (safe_after_xfactor > 0 && prediction > 0 &&
        double(now - since + prediction) >= safe_after_xfactor * double(prediction))
      return true;
    return safe_after_delay >= 0 && shadow < kNever && first < kNever &&
           std::max(shadow, now) - first > safe_after_delay;
  }
  /// How far past the head's shadow time a job backfilled now may hold its
  /// resources if it runs to its estimate: kNever when no guard applies (its
  /// prediction is trusted), 0 when a switch fires (safe backfill), else
  /// what is left of max_delay. Arguments as starving().
  Time head_room(Time now, Time since, Time prediction, Time shadow, Time first) const {
    if (!any_guard()) return kNever;  // the paper's presets: one test per pass
    if (starving(now, since, prediction, shadow, first)) return 0;
    if (max_delay < 0 || shadow >= kNever) return kNever;
    const Time deadline = (first < kNever ? first : std::max(shadow, now)) + max_delay;
    return deadline > shadow ? deadline - shadow : 0;
  }
  /// THE backfill bound: until when a job started at `now` holds its
  /// resources as far as this pass's reservations are concerned. Its
  /// prediction; its estimate (kill time) under safe backfill or when the
  /// head's `room` (head_room()) is 0; in between, its estimate less the
  /// room, so that "bound <= shadow" means both "its prediction ends by the
  /// shadow" and "its estimate ends by the shadow + room".
  Time end_bound(Time now, Time prediction, Time estimate, Time room) const {
    if (safe || room <= 0) return now + estimate;
    if (room >= kNever) return now + prediction;
    return now + std::max(prediction, estimate - room);
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
  Creasy,    ///< CREASY: by alpha * criticality + seniority (creasy.h), re-sorted every pass
};

struct SchedulerConfig {
  std::string name = "easy++";  ///< label shown in reports
  PlanWith plan = PlanWith::Prediction;
  double estimate_factor = 1.0;  ///< x2: plan with 2 x estimate
  CorrectionPolicy correction = CorrectionPolicy::Estimate;
  QueueOrder queue_order = QueueOrder::Arrival;
  CreasyConfig creasy;  ///< queue-order=creasy's constants (creasy-alpha)
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

/// The `site` preset's values beyond easy++: the plugin's defaults
/// (PluginConfig::default_scheduler() is preset("site")), chosen by the
/// measurements of docs/guard.md.
namespace site {
constexpr Time kMaxDelay = 86400;          ///< max-delay: one day
constexpr Time kSafeAfter = 4 * 86400;     ///< safe-after: four days
constexpr Time kLearnMinRuntime = 60;      ///< learn-min-runtime (and learn=completed)
constexpr Time kHistoryTtl = 365 * 86400;  ///< history-ttl: a year
}  // namespace site

/// The presets of spec section 4, by name: fcfs, easy, easy-pred, easy-pcor,
/// easy+, easy-sjbf, easy++, perfect, perfect++, x2, sjf, conservative;
/// site, easy++ with the plugin's guard and history defaults; and selective
/// reservations (selective.h): sel, sel-d (EASY's planning), sel++, sel-d++
/// (easy++'s), with thresholds to derive (selective=derive, derive-d).
std::optional<SchedulerConfig> preset(std::string_view name);
std::vector<std::string> preset_names();

/// Every knob, in a fixed order: plan, estimate-factor, correction,
/// backfill, sjbf, queue-order, creasy-alpha, reservations, safe, safe-after,
/// safe-after-delay, safe-after-xfactor, max-delay, selective, sel-scale,
/// sel-short, sel-narrow, predictor, window,
/// metric, ewma-alpha, history-type, fullness, fallback, rounding,
/// propagation, prediction-floor, learn, learn-min-runtime, history-ttl.
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
