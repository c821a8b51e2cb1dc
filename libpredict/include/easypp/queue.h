// The wait queue: waiting jobs in queue order (FCFS / Slurm priority / SJF)
// and, for SJBF, in backfill order (ascending prediction, ties in queue order).
//
// Both orders are maintained incrementally, so a scheduling pass walks them
// without sorting. The simulator and the Slurm plugin share this class.
//
// The candidate indexes. During the backfill walk of an EASY pass (one
// reservation) the free width F and the extra width E only shrink while the
// shadow time S and `now` stay fixed, so a waiting job can start only if
//
//     (width <= F and now + q <= S)  or  width <= min(F, E)
//
// (q: its prediction, or its estimate under safe backfilling), and a job
// that fails this once fails it for the rest of the pass. The next
// candidate in backfill order is therefore the first job *in the whole
// order* that passes the test (first_candidate()): the walk costs what the
// jobs that could start cost, not the queue's length.
//   - queue order: a tree over stable queue positions (the push order, or
//     positions the caller gives) whose nodes keep the smallest width and,
//     per width class, the smallest prediction and estimate of the jobs at
//     or below that class, so subtrees without a candidate are skipped;
//   - SJBF: per distinct width, a heap of the jobs by (prediction, queue
//     order), and a tree over the widths keeping the smallest top: the first
//     job in SJBF order among those of width <= X is one query, and since
//     that order is by prediction, test (a) needs only the first of width
//     <= F. (Under safe backfilling the pass walks prediction_order().)
// Jobs the adapter refuses (and the reserved head) are hidden for the rest
// of the pass (hide(), unhide_all()).
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

/// What a backfill candidate must pass in this state of the pass (see the
/// file comment): width <= extra, or width <= free and q <= limit, where q
/// is the prediction, or the estimate when by_estimate.
struct CandidateProbe {
  std::int64_t free = 0;   ///< F: the adapter's free_width()
  std::int64_t extra = 0;  ///< min(F, the adapter's extra_width()): never above free
  Time limit = 0;          ///< S - now
  bool by_estimate = false;
  bool passes(std::int64_t width, Time prediction, Time estimate) const {
    return width <= extra || (width <= free && (by_estimate ? estimate : prediction) <= limit);
  }
};

class WaitQueue {
 public:
  using Slot = std::uint32_t;
  static constexpr Slot kNoSlot = ~Slot(0);
  /// push(): let the queue number the job (see push).
  static constexpr std::uint32_t kAutoPosition = ~std::uint32_t(0);

  struct Entry {
    JobHandle handle = 0;
    QueueKey key;
    Time prediction = 0;  ///< planning value
    Time estimate = 0;    ///< the user's time limit (kill time)
    std::int64_t width = 0;  ///< resource demand hint (see push)
    Time since = kNever;     ///< waiting since (submit time); kNever: unknown
    bool live = false;
    bool hidden = false;        ///< refused in this pass (candidate indexes)
    std::uint8_t klass = 0;     ///< width class (queue-order index)
    std::uint32_t position = 0; ///< queue position (queue-order index)
    std::uint32_t gen = 0;      ///< bumped on every change (SJBF heaps)
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
  /// `position`: a number that orders the jobs as their keys do and never
  /// changes while the job waits (the simulator's SJF rank); by default the
  /// queue numbers jobs in push order, which is right when they are pushed
  /// in queue order (FCFS arrivals, the plugin's rebuilt queue) and costs a
  /// renumbering of the queue when they are not.
  Slot push(JobHandle h, QueueKey key, Time prediction, Time estimate, std::int64_t width = 0,
            Time since = kNever, std::uint32_t position = kAutoPosition);
  void erase(Slot s);
  void set_prediction(Slot s, Time p);

  /// The smallest width among waiting jobs (0 if empty): when the adapter's
  /// free_width() is below it, no waiting job can start and a pass can stop.
  std::int64_t min_width() const { return min_width_; }

  bool empty() const { return by_queue_.empty(); }
  std::size_t size() const { return by_queue_.size(); }
  const Entry& entry(Slot s) const { return pool_[s]; }

  // --- candidate indexes (see the file comment) ---------------------------------

  /// Width classes of the queue-order index, by their lower bounds
  /// (ascending; at most 64): the finer they separate the widths of the
  /// jobs, the fewer subtrees a probe visits in vain. Default: powers of two.
  /// Only while empty.
  void set_width_classes(std::vector<std::int64_t> lower_bounds);
  /// Lower bounds of at most `max_classes` classes holding about as many
  /// jobs each, from a histogram of widths (width, jobs), ascending by
  /// width; each distinct width is its own class when they are few.
  static std::vector<std::int64_t> width_classes_for(
      const std::vector<std::pair<std::int64_t, std::uint64_t>>& histogram,
      unsigned max_classes = 32);

  /// The first job in queue order that passes `p` and is not hidden
  /// (kNoSlot: none). Only for BackfillOrder::Queue.
  Slot first_in_queue_order(const CandidateProbe& p);
  /// The same in SJBF order; `p.by_estimate` must be false. Only for
  /// BackfillOrder::ShortestPrediction.
  Slot first_in_prediction_order(const CandidateProbe& p);
  /// Hide a job from the two queries above until unhide_all() (the pass
  /// calls it at its end). The job must have been returned by one of them.
  void hide(Slot s);
  void unhide_all();

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
  std::vector<Slot> hidden_;
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

  // --- the queue-order index: a tree over positions ------------------------------
  // Leaves are blocks of kBlock positions; every node keeps the smallest
  // width of its visible jobs and, per width class c, the smallest
  // prediction (and, once a probe by estimate came, estimate) among its
  // visible jobs of class <= c, clamped to 32 bits (a larger value only
  // makes a probe look into a subtree in vain, never skip a candidate).
  static constexpr unsigned kBlock = 32;
  struct PosIndex {
    std::vector<std::int64_t> bounds;   // class lower bounds (bounds[0] unused)
    std::vector<Slot> at;               // position -> slot (kNoSlot: none)
    std::vector<std::int64_t> min_w;    // per node
    std::vector<std::int32_t> pm_pred;  // per node x class
    std::vector<std::int32_t> pm_est;   // same, by estimate (when used)
    std::uint32_t leaves = 0;           // a power of two
    std::uint32_t next = 0;             // next automatic position
    bool explicit_positions = false;
    bool stale = false;                 // renumber before the next query
    bool by_estimate = false;           // pm_est maintained
    QueueKey last_key;
    bool has_last = false;
  } pos_;
  unsigned classes() const { return unsigned(pos_.bounds.size()); }
  std::uint8_t class_of(std::int64_t width) const;
  void pos_place(Slot s, std::uint32_t position);
  void pos_touch(std::uint32_t position);  // recompute its leaf and the path up
  void pos_rebuild(std::uint32_t capacity);
  void pos_renumber();
  void pos_leaf(std::uint32_t node);
  void pos_merge(std::uint32_t node);
  Slot pos_find(std::uint32_t node, const CandidateProbe& p, unsigned cls) const;

  // --- the SJBF index: per-width heaps, a tree over the widths -------------------
  struct HeapItem {
    Time prediction;
    QueueKey key;
    Slot slot;
    std::uint32_t gen;
  };
  struct WidthHeaps {
    std::vector<std::int64_t> widths;          // distinct, ascending
    std::vector<std::vector<HeapItem>> heaps;  // per width rank
    std::vector<std::uint32_t> live;           // valid items per width rank
    std::vector<std::int32_t> best;            // tree: width rank of the smallest top, -1
    std::uint32_t size = 0;                    // tree leaves (power of two)
    std::vector<std::pair<Slot, std::uint32_t>> popped;  // hidden in this pass
  } sj_;
  static bool heap_after(const HeapItem& a, const HeapItem& b);  // a comes after b
  bool heap_valid(const HeapItem& it) const {
    const Entry& e = pool_[it.slot];
    return e.live && !e.hidden && e.gen == it.gen;
  }
  std::uint32_t sj_rank(std::int64_t width);  // adds the width if new
  std::uint32_t sj_find_rank(std::int64_t width) const;
  void sj_push(Slot s);
  void sj_clean(std::uint32_t rank);  // drop invalid tops, compact, fix the tree
  void sj_fix(std::uint32_t rank);
  void sj_rebuild_tree();
  bool sj_less(std::int32_t a, std::int32_t b) const;  // tops of two width ranks
  std::int32_t sj_best_upto(std::uint32_t last_rank) const;
};

}  // namespace easypp
