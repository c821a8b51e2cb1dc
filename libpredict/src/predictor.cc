#include "easypp/predictor.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace easypp {

std::string PredictorConfig::validate() const {
  if (window < 1 || window > kMaxWindow)
    return "window must be between 1 and " + std::to_string(kMaxWindow) + " (got " +
           std::to_string(window) + ")";
  if (!(ewma_alpha > 0 && ewma_alpha <= 1)) return "ewma-alpha must be in (0, 1]";
  return {};
}

std::optional<PredictorKind> parse_predictor_kind(std::string_view s) {
  if (s == "history") return PredictorKind::History;
  if (s == "ewma") return PredictorKind::Ewma;
  if (s == "regression") return PredictorKind::Regression;
  return std::nullopt;
}
const char* to_string(PredictorKind k) {
  switch (k) {
    case PredictorKind::History: return "history";
    case PredictorKind::Ewma: return "ewma";
    case PredictorKind::Regression: return "regression";
  }
  return "?";
}

std::optional<Metric> parse_metric(std::string_view s) {
  if (s == "avg" || s == "average" || s == "mean") return Metric::Avg;
  if (s == "median") return Metric::Median;
  if (s == "min") return Metric::Min;
  if (s == "max") return Metric::Max;
  return std::nullopt;
}
std::optional<HistoryType> parse_history_type(std::string_view s) {
  if (s == "all") return HistoryType::All;
  if (s == "immediate") return HistoryType::Immediate;
  if (s == "extended") return HistoryType::Extended;
  return std::nullopt;
}
std::optional<Fullness> parse_fullness(std::string_view s) {
  if (s == "full") return Fullness::Full;
  if (s == "partial") return Fullness::Partial;
  return std::nullopt;
}
std::optional<Fallback> parse_fallback(std::string_view s) {
  if (s == "estimate") return Fallback::Estimate;
  if (s == "relative") return Fallback::Relative;
  return std::nullopt;
}
const char* to_string(Metric m) {
  switch (m) {
    case Metric::Avg: return "avg";
    case Metric::Median: return "median";
    case Metric::Min: return "min";
    case Metric::Max: return "max";
  }
  return "?";
}
const char* to_string(HistoryType t) {
  switch (t) {
    case HistoryType::All: return "all";
    case HistoryType::Immediate: return "immediate";
    case HistoryType::Extended: return "extended";
  }
  return "?";
}
const char* to_string(Fullness f) { return f == Fullness::Full ? "full" : "partial"; }
const char* to_string(Fallback f) { return f == Fallback::Estimate ? "estimate" : "relative"; }

// --- ring ---------------------------------------------------------------

void Predictor::RingBuf::push(const Entry& e, std::size_t cap) {
  if (buf.size() < cap) {
    buf.push_back(e);
    return;
  }
  if (buf.size() > cap) {  // window shrank (restore with a smaller window)
    std::vector<Entry> keep;
    for (std::size_t i = cap; i-- > 0;) keep.push_back(recent(i));
    buf.swap(keep);
    next = 0;
  }
  buf[next] = e;
  next = next + 1 == cap ? 0 : next + 1;
}

const Predictor::Entry& Predictor::RingBuf::recent(std::size_t i) const {
  const std::size_t n = buf.size();
  // Not yet full: entries are in push order. Full: `next` is the oldest.
  const std::size_t newest = (next == 0 ? n : next) - 1;
  return buf[(newest + n - i) % n];
}

// --- predictor ----------------------------------------------------------

Predictor::Predictor(PredictorConfig cfg) : cfg_(cfg) {
  cfg_.window = std::clamp(cfg_.window, 1, PredictorConfig::kMaxWindow);
  switch (cfg_.kind) {
    case PredictorKind::Ewma: combiner_ = Combiner::Ewma; break;
    case PredictorKind::Regression: combiner_ = Combiner::Regression; break;
    case PredictorKind::History:
      combiner_ = cfg_.metric == Metric::Median ? Combiner::Median
                  : cfg_.metric == Metric::Min  ? Combiner::Min
                  : cfg_.metric == Metric::Max  ? Combiner::Max
                                                : Combiner::Avg;
      break;
  }
}

void Predictor::forget_user(UserId user) {
  users_.erase(user);
  if (extended_.empty()) return;
  for (auto it = extended_.begin(); it != extended_.end();)
    it = it->first.first == user ? extended_.erase(it) : std::next(it);
}

void Predictor::clear() {
  users_.clear();
  extended_.clear();
}

namespace {
// A whole number of seconds from a non-negative average: rounded up, as the
// paper's average is (a rounding error of a microsecond is not a second
// more), and kept within [0, cap] before the conversion.
Time whole_seconds(double v, Time cap) {
  if (!(v > 0)) return 0;
  return Time(std::ceil(std::min(v, double(std::max<Time>(cap, 1))) - 1e-6));
}
}  // namespace

Time Predictor::ewma(const Entry* const* items, std::size_t n) const {
  // Oldest first: s = r_oldest, then s = alpha * r + (1 - alpha) * s.
  const double a = cfg_.ewma_alpha;
  double s = double(items[n - 1]->runtime);
  for (std::size_t i = n - 1; i-- > 0;) s = a * double(items[i]->runtime) + (1 - a) * s;
  Time cap = 0;
  for (std::size_t i = 0; i < n; ++i) cap = std::max(cap, items[i]->runtime);
  return whole_seconds(s, cap);  // an average never exceeds its largest term
}

Time Predictor::regression(const Entry* const* items, std::size_t n, Time estimate) const {
  // Least squares runtime = a + b * estimate over the window; the slope is
  // clamped to [0, 1] (a longer limit never means a shorter run, and the run
  // does not grow faster than its limit); with one distinct estimate the line
  // is flat at the mean runtime.
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += double(items[i]->estimate);
    my += double(items[i]->runtime);
  }
  mx /= double(n);
  my /= double(n);
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dx = double(items[i]->estimate) - mx;
    sxx += dx * dx;
    sxy += dx * (double(items[i]->runtime) - my);
  }
  const double b = sxx > 0 ? std::clamp(sxy / sxx, 0.0, 1.0) : 0.0;
  return whole_seconds(my + b * (double(estimate) - mx), estimate);
}

Time Predictor::combine(const Entry* const* items, std::size_t n, Time estimate) const {
  // The paper's average first (EASY++ itself: the replay's hot path), then
  // one switch for every other way of combining.
  if (combiner_ == Combiner::Avg) {
    Time sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += items[i]->runtime;
    return average(sum, n);  // rounded up (the project's convention) or down
  }
  switch (combiner_) {
    case Combiner::Avg: break;  // above
    case Combiner::Ewma: return ewma(items, n);
    case Combiner::Regression: return regression(items, n, estimate);
    case Combiner::Min: {
      Time v = items[0]->runtime;
      for (std::size_t i = 1; i < n; ++i) v = std::min(v, items[i]->runtime);
      return v;
    }
    case Combiner::Max: {
      Time v = items[0]->runtime;
      for (std::size_t i = 1; i < n; ++i) v = std::max(v, items[i]->runtime);
      return v;
    }
    case Combiner::Median: {
      Time v[PredictorConfig::kMaxWindow];
      for (std::size_t i = 0; i < n; ++i) v[i] = items[i]->runtime;
      std::sort(v, v + n);
      return median_of_sorted(v, n);
    }
  }
  return items[0]->runtime;
}

Time Predictor::fallback(const RingBuf* user_ring, Time estimate) const {
  if (cfg_.fallback == Fallback::Relative && user_ring && user_ring->size() > 0) {
    double ratio = 0;
    std::size_t n = 0;
    // Newest first, as recent(i) would give them: the sum's order is the
    // same, so is its rounding.
    for (std::size_t i = 0, j = user_ring->newest(); i < user_ring->size();
         ++i, j = user_ring->older(j)) {
      const Entry& h = user_ring->buf[j];
      if (h.estimate <= 0) continue;
      ratio += double(h.runtime) / double(h.estimate);
      ++n;
    }
    // Clamp before converting: a runtime far beyond its estimate must not
    // overflow the conversion (the result is capped at the estimate anyway).
    if (n > 0) return Time(std::ceil(std::min(double(estimate) * ratio / double(n), double(estimate))));
  }
  return estimate;
}

Time Predictor::predict(UserId user, Time estimate, bool* used_history) const {
  const std::size_t k = std::size_t(cfg_.window);
  const RingBuf* ring = nullptr;
  if (user != kNoUser) {
    auto u = users_.find(user);
    if (u != users_.end()) ring = &u->second;
  }
  const RingBuf* src = ring;
  if (cfg_.type == HistoryType::Extended) {
    src = nullptr;
    if (user != kNoUser) {
      auto x = extended_.find({user, estimate});
      if (x != extended_.end()) src = &x->second;
    }
  }

  Time p;
  bool from_history = false;
  const std::size_t have = src ? std::min(src->size(), k) : 0;
  // (have >= 1 in both: the window is at least 1, and combine() reads
  // items[0]; the compiler sees it with link-time optimization only if
  // said.)
  const bool enough = have >= 1 && (cfg_.fullness == Fullness::Partial || have >= k);
  if (!enough) {
    p = fallback(ring, estimate);
  } else if (cfg_.type == HistoryType::Immediate && (src->mixed || src->common != estimate)) {
    p = fallback(ring, estimate);
  } else {
    if (combiner_ == Combiner::Regression) {  // (its line depends on this estimate)
      const Entry* items[PredictorConfig::kMaxWindow];
      p = combine(items, window_of(*src, items), estimate);
    } else {
      p = src->combined;  // settled at the push
    }
    from_history = true;
  }
  if (used_history) *used_history = from_history;
  const Time cap = std::max<Time>(estimate, 1);
  return std::clamp<Time>(p, std::min(std::max<Time>(cfg_.floor, 1), cap), cap);
}

bool Predictor::has_history_for(UserId user, Time estimate) const {
  if (user == kNoUser) return false;
  const std::size_t k = std::size_t(cfg_.window);
  const RingBuf* src = nullptr;
  if (cfg_.type == HistoryType::Extended) {
    auto x = extended_.find({user, estimate});
    if (x != extended_.end()) src = &x->second;
  } else {
    auto u = users_.find(user);
    if (u != users_.end()) src = &u->second;
  }
  const std::size_t have = src ? std::min(src->size(), k) : 0;
  if (have == 0 || (cfg_.fullness == Fullness::Full && have < k)) return false;
  if (cfg_.type == HistoryType::Immediate) return !src->mixed && src->common == estimate;
  return true;
}

void Predictor::record(UserId user, Time runtime, Time estimate) {
  if (user == kNoUser) return;  // jobs without a user share no history
  const Entry e{std::max<Time>(runtime, 0), estimate};
  RingBuf& u = users_[user];
  push(u, e);
  settle(u);
  if (cfg_.type == HistoryType::Extended) {
    RingBuf& x = extended_[{user, estimate}];
    push(x, e);
    settle(x);
  }
}

void Predictor::push(RingBuf& rb, const Entry& e) const {
  const std::size_t k = std::size_t(cfg_.window);
  // Out of step (restored, or a window that shrank): settle() rebuilds it.
  const bool keep = combiner_ == Combiner::Median && rb.sorted.size() == rb.size() &&
                    rb.size() <= k;
  if (keep && rb.size() == k) {  // the oldest runtime leaves the window
    const auto it = std::lower_bound(rb.sorted.begin(), rb.sorted.end(), rb.buf[rb.next].runtime);
    rb.sorted.erase(it);
  }
  rb.push(e, k);
  if (keep) rb.sorted.insert(std::upper_bound(rb.sorted.begin(), rb.sorted.end(), e.runtime), e.runtime);
}

std::size_t Predictor::window_of(const RingBuf& rb, const Entry** items) const {
  const std::size_t have = std::min(rb.size(), std::size_t(cfg_.window));
  for (std::size_t i = 0, j = rb.newest(); i < have; ++i, j = rb.older(j)) items[i] = &rb.buf[j];
  return have;
}

void Predictor::settle(RingBuf& rb) const {
  const std::size_t n = rb.size();
  if (n == 0) return;
  if (n > std::size_t(cfg_.window) || combiner_ == Combiner::Ewma ||
      combiner_ == Combiner::Regression) {  // (the order matters, or more than the window)
    const Entry* items[PredictorConfig::kMaxWindow];
    const std::size_t have = window_of(rb, items);
    if (have == 0) return;  // (not with n >= 1: for the compiler)
    rb.mixed = false;
    for (std::size_t i = 1; i < have; ++i) rb.mixed |= items[i]->estimate != items[0]->estimate;
    rb.common = items[0]->estimate;
    // (the estimate is read by the regression only, which is not kept)
    rb.combined = combiner_ == Combiner::Regression ? 0 : combine(items, have, 0);
    return;
  }
  // push() keeps the ring at most a window long, so it is the window: what
  // does not depend on the entries' order reads them in place (no walk in
  // recency order; the sum of whole seconds is exact in any order).
  const Entry* b = rb.buf.data();
  const Time common = b[rb.newest()].estimate;
  bool mixed = false;
  for (std::size_t i = 0; i < n; ++i) mixed |= b[i].estimate != common;
  rb.mixed = mixed;
  rb.common = common;
  switch (combiner_) {
    case Combiner::Avg: {
      Time sum = 0;
      for (std::size_t i = 0; i < n; ++i) sum += b[i].runtime;
      rb.combined = average(sum, n);
      return;
    }
    case Combiner::Min:
    case Combiner::Max: {
      Time lo = b[0].runtime, hi = b[0].runtime;
      for (std::size_t i = 1; i < n; ++i) {
        lo = std::min(lo, b[i].runtime);
        hi = std::max(hi, b[i].runtime);
      }
      rb.combined = combiner_ == Combiner::Min ? lo : hi;
      return;
    }
    case Combiner::Median: {  // combine()'s median, from the sorted window
      if (rb.sorted.size() != n) {
        rb.sorted.clear();
        for (std::size_t i = 0; i < n; ++i) rb.sorted.push_back(b[i].runtime);
        std::sort(rb.sorted.begin(), rb.sorted.end());
      }
      rb.combined = median_of_sorted(rb.sorted.data(), n);
      return;
    }
    case Combiner::Ewma:
    case Combiner::Regression: break;  // above
  }
}

std::vector<Predictor::Entry> Predictor::history(UserId user) const {
  std::vector<Entry> out;
  auto u = users_.find(user);
  if (u == users_.end()) return out;
  for (std::size_t i = u->second.size(); i-- > 0;) out.push_back(u->second.recent(i));
  return out;
}

std::vector<Predictor::Ring> Predictor::snapshot() const {
  std::vector<Ring> out;
  auto dump = [&](UserId user, Time key, const RingBuf& rb) {
    Ring r{user, key, {}};
    for (std::size_t i = rb.size(); i-- > 0;) r.entries.push_back(rb.recent(i));
    out.push_back(std::move(r));
  };
  for (const auto& [user, rb] : users_) dump(user, -1, rb);
  for (const auto& [key, rb] : extended_) dump(key.first, key.second, rb);
  // Deterministic order for stable state files.
  std::sort(out.begin(), out.end(), [](const Ring& a, const Ring& b) {
    return a.user != b.user ? a.user < b.user : a.estimate_key < b.estimate_key;
  });
  return out;
}

void Predictor::restore(const std::vector<Ring>& rings) {
  clear();
  for (const Ring& r : rings) {
    if (r.user == kNoUser) continue;
    if (r.estimate_key >= 0 && cfg_.type != HistoryType::Extended) continue;
    RingBuf& rb = r.estimate_key < 0 ? users_[r.user] : extended_[{r.user, r.estimate_key}];
    for (const Entry& e : r.entries) push(rb, e);
    settle(rb);
  }
}

}  // namespace easypp
