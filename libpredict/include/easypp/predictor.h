// The runtime predictor (spec section 3): per-user history of recently
// terminated jobs, combined into a prediction for a new job.
//
// Three ways of combining the history (PredictorConfig::kind, the knob
// `predictor`), all computed from the same per-user rings (so the plugin's
// state file needs nothing new, whichever is chosen):
//   history     the paper's family: avg/median/min/max of the last `window`
//               runtimes (the default: the average of the last two);
//   ewma        an exponentially weighted moving average of the last
//               `window` runtimes, oldest first: s = r_oldest, then
//               s = alpha * r + (1 - alpha) * s (Petrou, thesis ch. 4.7);
//   regression  a least-squares line runtime = a + b * estimate fitted on
//               the last `window` (runtime, estimate) pairs, the slope
//               clamped to [0, 1], evaluated at the new job's estimate
//               (Petrou's regression on a task parameter; here the one
//               parameter every job has).
// Every prediction is then clamped to [1, estimate] as before.
//
// Work per event is O(window); memory is O(users * window) (plus one ring per
// (user, estimate) pair for the `extended` history type).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "easypp/types.h"

namespace easypp {

enum class PredictorKind { History, Ewma, Regression };
enum class Metric { Avg, Median, Min, Max };
enum class HistoryType {
  All,        ///< the user's last k terminated jobs
  Immediate,  ///< the last k, used only if all have the same estimate as J
  Extended,   ///< the last k terminated jobs with the same estimate as J
};
enum class Fullness { Full, Partial };
enum class Fallback { Estimate, Relative };

struct PredictorConfig {
  PredictorKind kind = PredictorKind::History;
  int window = 2;  ///< 1..kMaxWindow
  Metric metric = Metric::Avg;  ///< kind History only
  /// kind Ewma: the weight of the most recent runtime, 0 < alpha <= 1
  /// (1: the last runtime alone; 0.5 with window 2: the paper's average).
  double ewma_alpha = 0.5;
  HistoryType type = HistoryType::All;
  Fullness fullness = Fullness::Full;
  Fallback fallback = Fallback::Estimate;
  /// Re-predict a user's waiting jobs when the user's history changes (the
  /// authors' simulator re-predicts every waiting job at each pass).
  bool propagation = true;
  /// Averages (and a median's middle pair) rounded up to whole seconds
  /// (this project's convention), else down.
  bool round_up = true;
  /// No prediction below this many seconds (nor above the estimate): a
  /// floor against histories of tiny jobs. 0: none (predictions are >= 1).
  Time floor = 0;
  /// What the history learns (PredictionBook::finish): only jobs that
  /// completed normally (SWF status 1, Slurm COMPLETED), and only runtimes
  /// of at least learn_min_runtime seconds. Learning everything is the
  /// paper's way.
  bool learn_completed_only = false;
  Time learn_min_runtime = 0;

  /// Same predictions for the same history (propagation aside, which is
  /// about when predictions are made, not what they are; and what is
  /// learned, which is about the history itself).
  bool same_predictions_as(const PredictorConfig& o) const {
    return kind == o.kind && window == o.window && metric == o.metric && type == o.type &&
           fullness == o.fullness && fallback == o.fallback && ewma_alpha == o.ewma_alpha &&
           round_up == o.round_up && floor == o.floor;
  }

  static constexpr int kMaxWindow = 30;
  /// Empty if valid, else a one-line description of what is wrong.
  std::string validate() const;
};

std::optional<PredictorKind> parse_predictor_kind(std::string_view s);
std::optional<Metric> parse_metric(std::string_view s);
std::optional<HistoryType> parse_history_type(std::string_view s);
std::optional<Fullness> parse_fullness(std::string_view s);
std::optional<Fallback> parse_fallback(std::string_view s);
const char* to_string(PredictorKind k);
const char* to_string(Metric m);
const char* to_string(HistoryType t);
const char* to_string(Fullness f);
const char* to_string(Fallback f);

class Predictor {
 public:
  /// One terminated job as the predictor remembers it.
  struct Entry {
    Time runtime = 0;
    Time estimate = 0;
  };
  /// A ring's content, oldest first, for persistence. `estimate_key` is -1
  /// for the per-user ring, else the estimate of an `extended` ring.
  struct Ring {
    UserId user = kNoUser;
    Time estimate_key = -1;
    std::vector<Entry> entries;
  };

  explicit Predictor(PredictorConfig cfg = {});

  const PredictorConfig& config() const { return cfg_; }

  /// Prediction for a new job of `user` with estimate `estimate` (> 0): whole
  /// seconds, at least 1 (and the floor), never more than the estimate. *used_history (if
  /// given) tells whether it came from history rather than the fallback.
  Time predict(UserId user, Time estimate, bool* used_history = nullptr) const;

  /// True if predict() would use history rather than the fallback.
  bool has_history_for(UserId user, Time estimate) const;

  /// Learn from a terminated job. O(window).
  void record(UserId user, Time runtime, Time estimate);

  /// Persistence: every ring, and rebuilding from them (entries beyond the
  /// window are dropped, oldest first). restore() replaces existing rings.
  std::vector<Ring> snapshot() const;
  void restore(const std::vector<Ring>& rings);

  /// The user's most recent terminated jobs, oldest first (at most window).
  std::vector<Entry> history(UserId user) const;

  std::size_t users() const { return users_.size(); }
  /// Forget everything about `user` (an idle user's history expired).
  void forget_user(UserId user);
  void clear();

 private:
  // A fixed-capacity ring (capacity = window) stored inline in a vector.
  struct RingBuf {
    std::vector<Entry> buf;  // size <= capacity
    std::uint32_t next = 0;  // slot of the next write once full
    // What predict() reads, computed once per push (settle()) rather than
    // at every prediction: a user's waiting jobs are re-predicted group by
    // group at each of its ends, and the thesis grid's median over windows
    // up to 30 sorted the same entries for each group. `combined` is
    // combine() over the newest min(size, window) entries (not kept for
    // the regression, whose line depends on the new job's estimate);
    // `mixed` tells whether those entries have different estimates, else
    // `common` is theirs (the immediate history's test).
    Time combined = 0;
    Time common = 0;
    bool mixed = false;
    // The median only: the runtimes of the window in ascending order, kept
    // by Predictor::push() one removal and one insertion per push (sorting up to 30
    // runtimes at every end was most of a median setting's predictor);
    // rebuilt by settle() when it does not hold the window (after restore()).
    std::vector<Time> sorted;
    void push(const Entry& e, std::size_t cap);
    // i = 0 is the most recent.
    const Entry& recent(std::size_t i) const;
    std::size_t size() const { return buf.size(); }
    // Slots in recency order without a division per entry (the hot path:
    // a prediction reads up to a window of them): newest() is recent(0)'s
    // slot, older(j) the slot of the entry pushed just before slot j's.
    std::size_t newest() const { return (next == 0 ? buf.size() : next) - 1; }
    std::size_t older(std::size_t j) const { return (j == 0 ? buf.size() : j) - 1; }
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<UserId, Time>& k) const {
      return std::hash<std::int64_t>()(k.first * 1000003 ^ k.second);
    }
  };
  // items[0] is the most recent; `estimate` is the new job's.
  enum class Combiner : std::uint8_t { Avg, Median, Min, Max, Ewma, Regression };
  Time combine(const Entry* const* items, std::size_t n, Time estimate) const;
  Time ewma(const Entry* const* items, std::size_t n) const;
  Time regression(const Entry* const* items, std::size_t n, Time estimate) const;
  Time fallback(const RingBuf* user_ring, Time estimate) const;
  // The average of n runtimes summing to `sum`, and the median of n sorted
  // runtimes, in whole seconds rounded as configured.
  Time average(Time sum, std::size_t n) const {
    return cfg_.round_up ? (sum + Time(n) - 1) / Time(n) : sum / Time(n);
  }
  Time median_of_sorted(const Time* v, std::size_t n) const {
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2] + (cfg_.round_up ? 1 : 0)) / 2;
  }
  void settle(RingBuf& rb) const;  // RingBuf::combined and the rest, after a push
  // push() and, for the median, RingBuf::sorted kept in step.
  void push(RingBuf& rb, const Entry& e) const;
  // The newest min(size, window) entries of `rb` into items (newest
  // first); returns how many.
  std::size_t window_of(const RingBuf& rb, const Entry** items) const;

  PredictorConfig cfg_;
  Combiner combiner_ = Combiner::Avg;  // from cfg_.kind and cfg_.metric
  std::unordered_map<UserId, RingBuf> users_;
  // Only for HistoryType::Extended: one ring per (user, estimate).
  std::unordered_map<std::pair<UserId, Time>, RingBuf, KeyHash> extended_;
};

}  // namespace easypp
