// The order in which backfill candidates are tried: the paper's third idea,
// SJBF (shortest job backfilled first), next to EASY's own FCFS order.
//
// Each order is a small named policy the scheduling pass is instantiated
// with (policy.h): it names the sequence of candidates, an ordered range of
// the wait queue (which keeps both orders sorted, so a pass never sorts),
// and what the pass may assume about it, and its candidate index: the first
// job in the order that could start in the current state of the pass.
#pragma once

#include "easypp/queue.h"

namespace easypp {

/// EASY: the candidates in queue order, behind the reserved jobs.
struct FcfsBackfill {
  static constexpr BackfillOrder kOrder = BackfillOrder::Queue;
  /// The sequence holds reserved jobs too (the pass skips them).
  static constexpr bool kHasReserved = false;
  /// Candidates come by ascending prediction (the pass may stop early).
  static constexpr bool kAscendingPredictions = false;

  /// `after_reserved`: the first job in queue order behind the reservations.
  static WaitQueue::QueueIterator first(WaitQueue&, WaitQueue::QueueIterator after_reserved) {
    return after_reserved;
  }
  static WaitQueue::QueueIterator last(WaitQueue& q) { return q.queue_order().end(); }
  /// The candidate index (queue.h): the first job in this order that passes
  /// the probe; it answers probes by estimate (safe backfilling) too.
  static WaitQueue::Slot first_passing(WaitQueue& q, const CandidateProbe& p) {
    return q.first_in_queue_order(p);
  }
  static constexpr bool kIndexedByEstimate = true;
};

/// SJBF (Tsafrir, Etsion & Feitelson 2007): the candidates by ascending
/// prediction, ties in queue order. The reservation stays with the first
/// job in queue order; only the order of the others changes.
struct ShortestJobBackfilledFirst {
  static constexpr BackfillOrder kOrder = BackfillOrder::ShortestPrediction;
  static constexpr bool kHasReserved = true;
  static constexpr bool kAscendingPredictions = true;

  static WaitQueue::PredSet::const_iterator first(WaitQueue& q, WaitQueue::QueueIterator) {
    return q.prediction_order().begin();
  }
  static WaitQueue::PredSet::const_iterator last(WaitQueue& q) {
    return q.prediction_order().end();
  }
  /// The candidate index (queue.h); it answers probes by estimate (safe
  /// backfilling, a starving head) too.
  static WaitQueue::Slot first_passing(WaitQueue& q, const CandidateProbe& p) {
    return q.first_in_prediction_order(p);
  }
  static constexpr bool kIndexedByEstimate = true;
};

}  // namespace easypp
