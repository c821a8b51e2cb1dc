#include "easypp/queue.h"

#include <algorithm>
#include <cassert>

namespace easypp {

WaitQueue::WaitQueue(BackfillOrder order) : order_(order) {}

WaitQueue::Slot WaitQueue::push(JobHandle h, QueueKey key, Time prediction, Time estimate,
                                std::int64_t width, Time since) {
  Slot s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = Slot(pool_.size());
    pool_.emplace_back();
  }
  pool_[s] = Entry{h, key, prediction, estimate, width, since, true};
  count_width(width, +1);
  // Arrivals usually come in queue order: hint at the end.
  by_queue_.insert(by_queue_.end(), item(s));
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.insert(item(s));
  return s;
}

void WaitQueue::erase(Slot s) {
  assert(s < pool_.size() && pool_[s].live);
  const Item it = item(s);
  by_queue_.erase(it);
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.erase(it);
  pool_[s].live = false;
  free_.push_back(s);
  count_width(pool_[s].width, -1);
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
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.insert(item(s));
}

}  // namespace easypp
