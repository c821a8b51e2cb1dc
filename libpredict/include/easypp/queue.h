// The wait queue: waiting jobs in queue order (FCFS / Slurm priority / SJF)
// and, for SJBF, in backfill order (ascending prediction, ties in queue order).
//
// Both orders are maintained incrementally, so a scheduling pass walks them
// without sorting. The simulator and the Slurm plugin share this class.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "easypp/types.h"

namespace easypp {

/// Position in queue order, compared lexicographically, smallest first.
/// Simulator FCFS: (submit, seq); SJF: (estimate, seq); Slurm: (-priority, ...).
struct QueueKey {
  std::int64_t primary = 0;
  std::int64_t secondary = 0;
  friend bool operator<(const QueueKey& a, const QueueKey& b) {
    return a.primary != b.primary ? a.primary < b.primary : a.secondary < b.secondary;
  }
  friend bool operator==(const QueueKey& a, const QueueKey& b) {
    return a.primary == b.primary && a.secondary == b.secondary;
  }
};

/// Which order the wait queue keeps for backfilling (the named orders that
/// walk it are in backfill_order.h).
enum class BackfillOrder {
  None,                ///< no backfilling at all (plain FCFS)
  Queue,               ///< candidates in queue order (EASY)
  ShortestPrediction,  ///< SJBF: ascending prediction, ties in queue order
};

class WaitQueue {
 public:
  using Slot = std::uint32_t;
  static constexpr Slot kNoSlot = ~Slot(0);

  struct Entry {
    JobHandle handle = 0;
    QueueKey key;
    Time prediction = 0;  ///< planning value
    Time estimate = 0;    ///< the user's time limit (kill time)
    std::int64_t width = 0;  ///< resource demand hint (see push)
    Time since = kNever;     ///< waiting since (submit time); kNever: unknown
    bool live = false;
  };

  /// What the ordered sets hold: enough to order and pre-filter candidates
  /// without touching the entry (the scheduling pass is the hot path).
  struct Item {
    QueueKey key;
    Time prediction;
    std::int64_t width;
    Slot slot;
  };

  explicit WaitQueue(BackfillOrder order = BackfillOrder::Queue);
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  BackfillOrder order() const { return order_; }

  /// Add a waiting job. `width` is a lower bound of what it needs, in the
  /// unit of the adapter's free_width() (processors in the simulator, CPUs in
  /// Slurm); a candidate wider than free_width() is skipped without asking
  /// the adapter. `since` is when the job started waiting (its submit time),
  /// used by the starvation guard (PolicyConfig::safe_after).
  Slot push(JobHandle h, QueueKey key, Time prediction, Time estimate, std::int64_t width = 0,
            Time since = kNever);
  void erase(Slot s);
  void set_prediction(Slot s, Time p);

  /// The smallest width among waiting jobs (0 if empty): when the adapter's
  /// free_width() is below it, no waiting job can start and a pass can stop.
  std::int64_t min_width() const { return min_width_; }

  bool empty() const { return by_queue_.empty(); }
  std::size_t size() const { return by_queue_.size(); }
  const Entry& entry(Slot s) const { return pool_[s]; }

 private:
  struct QueueCmp {
    bool operator()(const Item& a, const Item& b) const {
      if (a.key == b.key) return a.slot < b.slot;
      return a.key < b.key;
    }
  };
  struct PredCmp {
    bool operator()(const Item& a, const Item& b) const {
      if (a.prediction != b.prediction) return a.prediction < b.prediction;
      if (a.key == b.key) return a.slot < b.slot;
      return a.key < b.key;
    }
  };
  Item item(Slot s) const {
    const Entry& e = pool_[s];
    return Item{e.key, e.prediction, e.width, s};
  }

 public:
  using QueueSet = std::set<Item, QueueCmp>;
  using PredSet = std::set<Item, PredCmp>;

  /// Queue order. Erasing a slot invalidates only iterators to that slot.
  const QueueSet& queue_order() const { return by_queue_; }
  /// SJBF order; empty unless order() == ShortestPrediction.
  const PredSet& prediction_order() const { return by_pred_; }

 private:
  BackfillOrder order_;
  std::vector<Entry> pool_;
  std::vector<Slot> free_;
  QueueSet by_queue_;
  PredSet by_pred_;
  // Waiting jobs per width, for min_width(): widths below kSmall counted in
  // an array with a bit per width in use (the minimum is one ctz away), the
  // rest in a vector sorted by width (few distinct large widths).
  static constexpr unsigned kSmallWords = 4, kSmall = kSmallWords * 64;
  std::uint32_t small_[kSmall] = {};
  std::uint64_t small_mask_[kSmallWords] = {};
  std::vector<std::pair<std::int64_t, std::uint32_t>> widths_;
  std::int64_t min_width_ = 0;  // 0 when empty
  void count_width(std::int64_t width, int delta) {
    if (width >= 0 && width < std::int64_t(kSmall)) {
      const unsigned w = unsigned(width);
      if (delta > 0 ? small_[w]++ == 0 : --small_[w] == 0) small_mask_[w / 64] ^= 1ull << (w % 64);
    } else {
      count_large_width(width, delta);
    }
    if (delta > 0) {
      if (by_queue_.empty() || width < min_width_) min_width_ = width;  // before its insertion
    } else if (width == min_width_) {
      find_min_width();
    }
  }
  void count_large_width(std::int64_t width, int delta);
  void find_min_width();
};

}  // namespace easypp
