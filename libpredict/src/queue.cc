#include "easypp/queue.h"

#include <cassert>

namespace easypp {

WaitQueue::WaitQueue(BackfillOrder order)
    : order_(order), by_queue_(QueueCmp{&pool_}), by_pred_(PredCmp{&pool_}) {}

WaitQueue::Slot WaitQueue::push(JobHandle h, QueueKey key, Time prediction, Time estimate) {
  Slot s;
  if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = Slot(pool_.size());
    pool_.emplace_back();
  }
  pool_[s] = Entry{h, key, prediction, estimate, true};
  // Arrivals usually come in queue order: hint at the end.
  by_queue_.insert(by_queue_.end(), s);
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.insert(s);
  return s;
}

void WaitQueue::erase(Slot s) {
  assert(s < pool_.size() && pool_[s].live);
  by_queue_.erase(s);
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.erase(s);
  pool_[s].live = false;
  free_.push_back(s);
}

void WaitQueue::set_prediction(Slot s, Time p) {
  Entry& e = pool_[s];
  if (e.prediction == p) return;
  if (order_ == BackfillOrder::ShortestPrediction) {
    by_pred_.erase(s);
    e.prediction = p;
    by_pred_.insert(s);
  } else {
    e.prediction = p;
  }
}

void WaitQueue::set_key(Slot s, QueueKey k) {
  Entry& e = pool_[s];
  if (e.key == k) return;
  by_queue_.erase(s);
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.erase(s);
  e.key = k;
  by_queue_.insert(s);
  if (order_ == BackfillOrder::ShortestPrediction) by_pred_.insert(s);
}

void WaitQueue::clear() {
  by_queue_.clear();
  by_pred_.clear();
  pool_.clear();
  free_.clear();
}

}  // namespace easypp
