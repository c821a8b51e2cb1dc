#include "easypp/queue.h"

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
  ++widths_[width];
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
  auto w = widths_.find(pool_[s].width);
  if (--w->second == 0) widths_.erase(w);
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
