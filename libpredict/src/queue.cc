#include "easypp/queue.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace easypp {

namespace {

constexpr std::int64_t kNoWidth = std::numeric_limits<std::int64_t>::max();
constexpr std::int32_t kNoValue = std::numeric_limits<std::int32_t>::max();

std::int32_t clamp32(Time v) {
  if (v > Time(kNoValue)) return kNoValue;
  if (v < Time(std::numeric_limits<std::int32_t>::min())) return std::numeric_limits<std::int32_t>::min();
  return std::int32_t(v);
}

std::vector<std::int64_t> default_classes() {
  std::vector<std::int64_t> b{0};
  for (int k = 0; k < 31; ++k) b.push_back(std::int64_t(1) << k);
  return b;
}

}  // namespace

WaitQueue::WaitQueue(BackfillOrder order) : order_(order) {
  pos_.bounds = default_classes();
}

WaitQueue::Slot WaitQueue::push(JobHandle h, QueueKey key, Time prediction, Time estimate,
                                std::int64_t width, Time since, std::uint32_t position) {
  Slot s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = Slot(pool_.size());
    pool_.emplace_back();
  }
  const std::uint32_t gen = pool_[s].gen + 1;
  pool_[s] = Entry{h, key, prediction, estimate, width, since, true, false, 0, 0, gen};
  count_width(width, +1);
  // Arrivals usually come in queue order: hint at the end.
  by_queue_.insert(by_queue_.end(), item(s));
  if (order_ == BackfillOrder::ShortestPrediction) {
    by_pred_.insert(item(s));
    sj_push(s);
  } else if (order_ == BackfillOrder::Queue) {
    pool_[s].klass = class_of(width);
    if (position == kAutoPosition) {
      assert(!pos_.explicit_positions);
      if (pos_.has_last && !(pos_.last_key < key)) pos_.stale = true;
      pos_.last_key = key;
      pos_.has_last = true;
      const std::uint32_t capacity = pos_.leaves * kBlock;
      if (pos_.next >= capacity && !pos_.stale && std::size_t(capacity) >= 2 * by_queue_.size()) {
        // Compact: the waiting jobs renumbered from 0 (this one included).
        pool_[s].live = false;  // not placed yet
        pos_renumber();
        pool_[s].live = true;
      }
      position = pos_.next++;
    } else {
      assert(by_queue_.size() == 1 || pos_.explicit_positions);
      pos_.explicit_positions = true;
    }
    pos_place(s, position);
  }
  return s;
}

void WaitQueue::erase(Slot s) {
  assert(s < pool_.size() && pool_[s].live);
  const Item it = item(s);
  by_queue_.erase(it);
  Entry& e = pool_[s];
  e.live = false;
  e.hidden = false;
  ++e.gen;
  if (order_ == BackfillOrder::ShortestPrediction) {
    by_pred_.erase(it);
    const std::uint32_t r = sj_find_rank(e.width);
    --sj_.live[r];
    sj_clean(r);
  } else if (order_ == BackfillOrder::Queue) {
    if (e.position < pos_.at.size() && pos_.at[e.position] == s) {
      pos_.at[e.position] = kNoSlot;
      pos_touch(e.position);
    }
  }
  free_.push_back(s);
  count_width(e.width, -1);
}

void WaitQueue::count_large_width(std::int64_t width, int delta) {
  auto w = std::lower_bound(widths_.begin(), widths_.end(), width,
                            [](const auto& e, std::int64_t v) { return e.first < v; });
  if (delta > 0) {
    if (w != widths_.end() && w->first == width) ++w->second;
    else widths_.insert(w, {width, 1});
    return;
  }
  assert(w != widths_.end() && w->first == width && w->second > 0);
  if (--w->second == 0) widths_.erase(w);
}

void WaitQueue::find_min_width() {
  for (unsigned i = 0; i < kSmallWords; ++i) {
    if (small_mask_[i] != 0) {
      min_width_ = std::int64_t(i * 64 + unsigned(__builtin_ctzll(small_mask_[i])));
      return;
    }
  }
  min_width_ = widths_.empty() ? 0 : widths_.front().first;
}

void WaitQueue::set_prediction(Slot s, Time p) {
  Entry& e = pool_[s];
  if (e.prediction == p) return;
  by_queue_.erase(item(s));
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.erase(item(s));
  e.prediction = p;
  by_queue_.insert(item(s));
  if (order_ == BackfillOrder::ShortestPrediction) {
    by_pred_.insert(item(s));
    const std::uint32_t r = sj_find_rank(e.width);
    ++e.gen;  // the old heap item is stale
    --sj_.live[r];
    sj_push(s);
    sj_clean(r);
  } else if (order_ == BackfillOrder::Queue) {
    pos_touch(e.position);
  }
}

// --- width classes ---------------------------------------------------------------

void WaitQueue::set_width_classes(std::vector<std::int64_t> lower_bounds) {
  assert(empty());
  std::sort(lower_bounds.begin(), lower_bounds.end());
  lower_bounds.erase(std::unique(lower_bounds.begin(), lower_bounds.end()), lower_bounds.end());
  if (lower_bounds.empty()) lower_bounds.push_back(0);
  if (lower_bounds.size() > 64) lower_bounds.resize(64);
  PosIndex fresh;
  fresh.bounds = std::move(lower_bounds);
  pos_ = std::move(fresh);
}

std::vector<std::int64_t> WaitQueue::width_classes_for(
    const std::vector<std::pair<std::int64_t, std::uint64_t>>& histogram, unsigned max_classes) {
  if (histogram.empty() || max_classes == 0) return default_classes();
  max_classes = std::min(max_classes, 64u);
  std::uint64_t n = 0;
  for (const auto& [w, jobs] : histogram) n += jobs;
  // A class ends once it holds about n / max_classes jobs.
  const std::uint64_t target = std::max<std::uint64_t>(1, n / max_classes);
  std::vector<std::int64_t> bounds{histogram.front().first};
  std::uint64_t in_class = 0;
  for (const auto& [w, jobs] : histogram) {
    if (in_class >= target && bounds.size() < max_classes) {
      bounds.push_back(w);
      in_class = 0;
    }
    in_class += jobs;
  }
  return bounds;
}

std::uint8_t WaitQueue::class_of(std::int64_t width) const {
  const auto it = std::upper_bound(pos_.bounds.begin() + 1, pos_.bounds.end(), width);
  return std::uint8_t(it - pos_.bounds.begin() - 1);
}

// --- the queue-order index ------------------------------------------------------------

void WaitQueue::pos_rebuild(std::uint32_t capacity) {
  std::uint32_t leaves = 1;
  while (std::uint64_t(leaves) * kBlock < capacity) leaves *= 2;
  pos_.leaves = leaves;
  pos_.at.resize(std::size_t(leaves) * kBlock, kNoSlot);
  const std::size_t nodes = 2 * std::size_t(leaves), c = classes();
  pos_.min_w.assign(nodes, kNoWidth);
  pos_.pm_pred.assign(nodes * c, kNoValue);
  if (pos_.by_estimate) pos_.pm_est.assign(nodes * c, kNoValue);
  for (std::uint32_t n = leaves; n < 2 * leaves; ++n) pos_leaf(n);
  for (std::uint32_t n = leaves - 1; n >= 1; --n) pos_merge(n);
}

void WaitQueue::pos_place(Slot s, std::uint32_t position) {
  if (std::size_t(position) >= pos_.at.size()) {
    std::uint32_t cap = std::max<std::uint32_t>(kBlock, pos_.leaves * kBlock);
    while (cap <= position) cap *= 2;
    pos_rebuild(cap);
  }
  assert(pos_.at[position] == kNoSlot);
  pos_.at[position] = s;
  pool_[s].position = position;
  pos_touch(position);
}

void WaitQueue::pos_renumber() {
  std::uint32_t n = 0;
  for (const Item& it : by_queue_) n += pool_[it.slot].live ? 1 : 0;  // not the one being pushed
  std::uint32_t cap = kBlock;
  while (cap < 2 * n + 1) cap *= 2;
  pos_.at.assign(cap, kNoSlot);
  n = 0;
  for (const Item& it : by_queue_) {
    if (!pool_[it.slot].live) continue;
    pool_[it.slot].position = n;
    pos_.at[n++] = it.slot;
  }
  pos_.next = n;
  pos_.stale = false;
  pos_rebuild(cap);
}

void WaitQueue::pos_leaf(std::uint32_t node) {
  const unsigned c = classes();
  std::int32_t pred[64], est[64];
  std::fill(pred, pred + c, kNoValue);
  std::fill(est, est + c, kNoValue);
  std::int64_t minw = kNoWidth;
  const std::size_t first = std::size_t(node - pos_.leaves) * kBlock;
  for (std::size_t i = first; i < first + kBlock; ++i) {
    const Slot s = pos_.at[i];
    if (s == kNoSlot) continue;
    const Entry& e = pool_[s];
    if (e.hidden || !e.live) continue;
    minw = std::min(minw, e.width);
    pred[e.klass] = std::min(pred[e.klass], clamp32(e.prediction));
    est[e.klass] = std::min(est[e.klass], clamp32(e.estimate));
  }
  pos_.min_w[node] = minw;
  std::int32_t* pp = &pos_.pm_pred[std::size_t(node) * c];
  std::int32_t run = kNoValue;
  for (unsigned k = 0; k < c; ++k) pp[k] = run = std::min(run, pred[k]);
  if (pos_.by_estimate) {
    std::int32_t* pe = &pos_.pm_est[std::size_t(node) * c];
    run = kNoValue;
    for (unsigned k = 0; k < c; ++k) pe[k] = run = std::min(run, est[k]);
  }
}

void WaitQueue::pos_merge(std::uint32_t node) {
  const unsigned c = classes();
  const std::uint32_t l = 2 * node, r = l + 1;
  pos_.min_w[node] = std::min(pos_.min_w[l], pos_.min_w[r]);
  std::int32_t* p = &pos_.pm_pred[std::size_t(node) * c];
  const std::int32_t* a = &pos_.pm_pred[std::size_t(l) * c];
  const std::int32_t* b = &pos_.pm_pred[std::size_t(r) * c];
  for (unsigned k = 0; k < c; ++k) p[k] = std::min(a[k], b[k]);
  if (pos_.by_estimate) {
    std::int32_t* pe = &pos_.pm_est[std::size_t(node) * c];
    const std::int32_t* ae = &pos_.pm_est[std::size_t(l) * c];
    const std::int32_t* be = &pos_.pm_est[std::size_t(r) * c];
    for (unsigned k = 0; k < c; ++k) pe[k] = std::min(ae[k], be[k]);
  }
}

void WaitQueue::pos_touch(std::uint32_t position) {
  std::uint32_t node = pos_.leaves + position / kBlock;
  pos_leaf(node);
  for (node >>= 1; node >= 1; node >>= 1) pos_merge(node);
}

WaitQueue::Slot WaitQueue::pos_find(std::uint32_t node, const CandidateProbe& p,
                                    unsigned cls) const {
  const std::int64_t minw = pos_.min_w[node];
  if (minw > p.free) return kNoSlot;
  if (minw > p.extra) {  // only test (a) can pass in this subtree
    const std::vector<std::int32_t>& pm = p.by_estimate ? pos_.pm_est : pos_.pm_pred;
    if (Time(pm[std::size_t(node) * classes() + cls]) > p.limit) return kNoSlot;
  }
  if (node >= pos_.leaves) {
    const std::size_t first = std::size_t(node - pos_.leaves) * kBlock;
    for (std::size_t i = first; i < first + kBlock; ++i) {
      const Slot s = pos_.at[i];
      if (s == kNoSlot) continue;
      const Entry& e = pool_[s];
      if (!e.hidden && p.passes(e.width, e.prediction, e.estimate)) return s;
    }
    return kNoSlot;
  }
  const Slot s = pos_find(2 * node, p, cls);
  return s != kNoSlot ? s : pos_find(2 * node + 1, p, cls);
}

WaitQueue::Slot WaitQueue::first_in_queue_order(const CandidateProbe& p) {
  assert(order_ == BackfillOrder::Queue);
  if (by_queue_.empty()) return kNoSlot;
  if (pos_.stale) pos_renumber();
  if (p.by_estimate && !pos_.by_estimate) {
    pos_.by_estimate = true;
    pos_rebuild(pos_.leaves * kBlock);
  }
  return pos_find(1, p, class_of(p.free));
}

// --- the SJBF index -----------------------------------------------------------------

bool WaitQueue::heap_after(const HeapItem& a, const HeapItem& b) {
  if (a.prediction != b.prediction) return a.prediction > b.prediction;
  if (a.key == b.key) return a.slot > b.slot;
  return b.key < a.key;
}

std::uint32_t WaitQueue::sj_find_rank(std::int64_t width) const {
  const auto it = std::lower_bound(sj_.widths.begin(), sj_.widths.end(), width);
  assert(it != sj_.widths.end() && *it == width);
  return std::uint32_t(it - sj_.widths.begin());
}

std::uint32_t WaitQueue::sj_rank(std::int64_t width) {
  const auto it = std::lower_bound(sj_.widths.begin(), sj_.widths.end(), width);
  const std::uint32_t r = std::uint32_t(it - sj_.widths.begin());
  if (it != sj_.widths.end() && *it == width) return r;
  sj_.widths.insert(it, width);
  sj_.heaps.insert(sj_.heaps.begin() + r, std::vector<HeapItem>());
  sj_.live.insert(sj_.live.begin() + r, 0);
  sj_rebuild_tree();
  return r;
}

bool WaitQueue::sj_less(std::int32_t a, std::int32_t b) const {
  if (a < 0) return false;
  if (b < 0) return true;
  return heap_after(sj_.heaps[std::size_t(b)].front(), sj_.heaps[std::size_t(a)].front());
}

void WaitQueue::sj_rebuild_tree() {
  std::uint32_t size = 1;
  while (size < sj_.widths.size()) size *= 2;
  sj_.size = size;
  sj_.best.assign(2 * std::size_t(size), -1);
  for (std::uint32_t r = 0; r < sj_.widths.size(); ++r)
    sj_.best[size + r] = sj_.heaps[r].empty() ? -1 : std::int32_t(r);
  for (std::uint32_t n = size - 1; n >= 1; --n) {
    const std::int32_t a = sj_.best[2 * n], b = sj_.best[2 * n + 1];
    sj_.best[n] = sj_less(b, a) ? b : a;
  }
}

void WaitQueue::sj_fix(std::uint32_t rank) {
  std::uint32_t n = sj_.size + rank;
  sj_.best[n] = sj_.heaps[rank].empty() ? -1 : std::int32_t(rank);
  for (n >>= 1; n >= 1; n >>= 1) {
    const std::int32_t a = sj_.best[2 * n], b = sj_.best[2 * n + 1];
    const std::int32_t v = sj_less(b, a) ? b : a;
    sj_.best[n] = v;
  }
}

void WaitQueue::sj_push(Slot s) {
  const Entry& e = pool_[s];
  const std::uint32_t r = sj_rank(e.width);
  std::vector<HeapItem>& h = sj_.heaps[r];
  h.push_back(HeapItem{e.prediction, e.key, s, e.gen});
  std::push_heap(h.begin(), h.end(), heap_after);
  ++sj_.live[r];
  if (h.front().slot == s && h.front().gen == e.gen) sj_fix(r);
}

void WaitQueue::sj_clean(std::uint32_t rank) {
  std::vector<HeapItem>& h = sj_.heaps[rank];
  bool changed = false;
  while (!h.empty() && !heap_valid(h.front())) {
    std::pop_heap(h.begin(), h.end(), heap_after);
    h.pop_back();
    changed = true;
  }
  if (h.size() > 2 * std::size_t(sj_.live[rank]) + 16) {
    h.erase(std::remove_if(h.begin(), h.end(), [&](const HeapItem& it) { return !heap_valid(it); }),
            h.end());
    std::make_heap(h.begin(), h.end(), heap_after);
  }
  if (changed) sj_fix(rank);
}

std::int32_t WaitQueue::sj_best_upto(std::uint32_t last) const {
  std::int32_t best = -1;
  std::uint32_t lo = sj_.size, hi = sj_.size + last + 1;  // [lo, hi)
  while (lo < hi) {
    if (lo & 1) {
      if (sj_less(sj_.best[lo], best)) best = sj_.best[lo];
      ++lo;
    }
    if (hi & 1) {
      --hi;
      if (sj_less(sj_.best[hi], best)) best = sj_.best[hi];
    }
    lo >>= 1;
    hi >>= 1;
  }
  return best;
}

WaitQueue::Slot WaitQueue::first_in_prediction_order(const CandidateProbe& p) {
  assert(order_ == BackfillOrder::ShortestPrediction && !p.by_estimate);
  auto last_rank = [&](std::int64_t w) -> std::int64_t {
    return std::int64_t(std::upper_bound(sj_.widths.begin(), sj_.widths.end(), w) -
                        sj_.widths.begin()) - 1;
  };
  const std::int64_t rf = last_rank(p.free);
  if (rf < 0) return kNoSlot;
  const std::int32_t a = sj_best_upto(std::uint32_t(rf));
  if (a < 0) return kNoSlot;
  // The first job of width <= F in SJBF order has the smallest prediction
  // among them: if it fails test (a), they all do.
  const HeapItem& top = sj_.heaps[std::size_t(a)].front();
  if (top.prediction <= p.limit) return top.slot;
  const std::int64_t rg = last_rank(p.extra);
  if (rg < 0) return kNoSlot;
  const std::int32_t b = sj_best_upto(std::uint32_t(rg));
  return b < 0 ? kNoSlot : sj_.heaps[std::size_t(b)].front().slot;
}

// --- hiding refused candidates for the rest of a pass --------------------------------

void WaitQueue::hide(Slot s) {
  Entry& e = pool_[s];
  assert(e.live && !e.hidden);
  if (order_ == BackfillOrder::ShortestPrediction) {
    const std::uint32_t r = sj_find_rank(e.width);
    std::vector<HeapItem>& h = sj_.heaps[r];
    assert(!h.empty() && h.front().slot == s && h.front().gen == e.gen);
    std::pop_heap(h.begin(), h.end(), heap_after);
    h.pop_back();
    --sj_.live[r];
    e.hidden = true;
    sj_.popped.emplace_back(s, e.gen);
    sj_clean(r);
    sj_fix(r);
    return;
  }
  e.hidden = true;
  hidden_.push_back(s);
  if (order_ == BackfillOrder::Queue) pos_touch(e.position);
}

void WaitQueue::unhide_all() {
  for (Slot s : hidden_) {
    Entry& e = pool_[s];
    if (!e.hidden) continue;
    e.hidden = false;
    if (e.live && order_ == BackfillOrder::Queue) pos_touch(e.position);
  }
  hidden_.clear();
  for (const auto& [s, gen] : sj_.popped) {
    Entry& e = pool_[s];
    if (!e.live || e.gen != gen) continue;
    e.hidden = false;
    sj_push(s);
  }
  sj_.popped.clear();
}

}  // namespace easypp
