// The runtime predictor (spec section 3): per-user history of recently
// terminated jobs, combined into a prediction for a new job.
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

enum class Metric { Avg, Median, Min, Max };
enum class HistoryType {
  All,        ///< the user's last k terminated jobs
  Immediate,  ///< the last k, used only if all have the same estimate as J
  Extended,   ///< the last k terminated jobs with the same estimate as J
};
enum class Fullness { Full, Partial };
enum class Fallback { Estimate, Relative };

struct PredictorConfig {
  int window = 2;  ///< 1..kMaxWindow
  Metric metric = Metric::Avg;
  HistoryType type = HistoryType::All;
  Fullness fullness = Fullness::Full;
  Fallback fallback = Fallback::Estimate;
  bool propagation = false;  ///< re-predict waiting jobs when history changes

  /// Same predictions for the same history (propagation aside, which is
  /// about when predictions are made, not what they are).
  bool same_predictions_as(const PredictorConfig& o) const {
    return window == o.window && metric == o.metric && type == o.type &&
           fullness == o.fullness && fallback == o.fallback;
  }

  static constexpr int kMaxWindow = 30;
  /// Empty if valid, else a one-line description of what is wrong.
  std::string validate() const;
};

std::optional<Metric> parse_metric(std::string_view s);
std::optional<HistoryType> parse_history_type(std::string_view s);
std::optional<Fullness> parse_fullness(std::string_view s);
std::optional<Fallback> parse_fallback(std::string_view s);
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
  /// seconds, at least 1, never more than the estimate. *used_history (if
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
    void push(const Entry& e, std::size_t cap);
    // i = 0 is the most recent.
    const Entry& recent(std::size_t i) const;
    std::size_t size() const { return buf.size(); }
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<UserId, Time>& k) const {
      return std::hash<std::int64_t>()(k.first * 1000003 ^ k.second);
    }
  };
  Time combine(const Entry* const* items, std::size_t n) const;
  Time fallback(const RingBuf* user_ring, Time estimate) const;

  PredictorConfig cfg_;
  std::unordered_map<UserId, RingBuf> users_;
  // Only for HistoryType::Extended: one ring per (user, estimate).
  std::unordered_map<std::pair<UserId, Time>, RingBuf, KeyHash> extended_;
};

}  // namespace easypp
