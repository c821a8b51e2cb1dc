// The wait queue: waiting jobs in queue order (FCFS / Slurm priority / SJF)
// and, for SJBF, in backfill order (ascending prediction, ties in queue order).
//
// Both orders are maintained incrementally, so a scheduling pass walks them
// without sorting. The simulator and the Slurm plugin share this class.
//
// Queue order is kept by position: each waiting job has a number that orders
// the jobs as their keys do and does not change while it waits (by default
// the push order, or the caller's: the simulator's SJF rank); a bitmap of
// the positions in use walks them in order.
//
// The candidate indexes. During the backfill walk of an EASY pass (one
// reservation) the free width F and the extra width E only shrink while the
// shadow time S and `now` stay fixed, so a waiting job can start only if
//
//     (width <= F and now + q <= S)  or  width <= min(F, E)
//
// (q: its prediction, or its estimate under safe backfilling; with a
// guard's finite room R, now + q <= S also needs now + estimate <= S + R),
// and a job that fails this once fails it for the rest of the pass. The next
// candidate in backfill order is therefore the first job *in the whole
// order* that passes the test (first_in_queue_order(),
// first_in_prediction_order()): the walk costs what the jobs that could
// start cost, not the queue's length.
//   - queue order: a tree over the positions whose nodes keep the smallest
//     width and, per width class, the smallest prediction and estimate of
//     the jobs at or below that class, so subtrees without a candidate are
//     skipped;
//   - SJBF: per distinct width, a heap of the jobs by (prediction, queue
//     order), and a tree over the widths keeping the smallest top: the first
//     job in SJBF order among those of width <= X is one query, and since
//     that order is by prediction, test (a) needs only the first of width
//     <= F. By estimate (safe backfilling, a starving head), a second index
//     by (width, estimate class) answers test (a) (see EstIndex below); with
//     a room, the same index up to the class of S - now + R, whose first
//     job also needs its prediction within S - now (or none of them can).
// Jobs the adapter refuses (and the reserved head) are hidden for the rest
// of the pass (hide(), unhide_all()).
//
// Groups. With propagation, a user's waiting jobs of one estimate share
// one planning value (PredictionBook's groups), and each of the user's
// finishes changes it: on RICC thousands of jobs at a time. A job put in a
// group (set_group()) takes the group's value, and set_group_prediction()
// changes it for all of them at the cost of the index leaves they occupy
// (each group keeps its leaves, how many of its jobs each holds and their
// smallest width class), not of the jobs: an entry reads the value when it
// is next looked at (entry()), a leaf when it is next recomputed. The
// index keeps lower bounds: a longer value changes none, a shorter one
// lowers the leaves' and their ancestors' bounds in place, and a probe
// that finds nothing in a leaf has it recomputed.
// In SJBF order (one reservation, prediction_order() never called) a
// group's visible jobs of one width and estimate form a run, which is one
// item of the width heaps and estimate buckets, under a pseudo entry of
// the pool: its jobs share the value and are ordered by position, so only
// the first can be on top. A change of the group's value re-sifts its
// runs, not its jobs; a run's first job leaving (started, hidden, erased)
// moves the run's item to the next one.
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
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
/// is the prediction, or the estimate when by_estimate (and, with a guard's
/// finite room, estimate - room <= limit too).
/// Conservative passes add steps (the queue-order index only): width <=
/// more[i].width and q <= more[i].limit, the widths descending below free
/// and the limits ascending above limit, for what their reservations leave
/// free further ahead (ProcResources::start_limits).
struct CandidateProbe {
  std::int64_t free = 0;   ///< F: the adapter's free_width()
  std::int64_t extra = 0;  ///< min(F, the adapter's extra_width()): never above free
  Time limit = 0;          ///< S - now
  bool by_estimate = false;
  /// The guard's finite room (PolicyConfig::head_room, > 0), by prediction
  /// only: the estimate must also end by the limit plus the room, as
  /// end_bound()'s max(prediction, estimate - room) says; kNever: no guard.
  Time room = kNever;
  struct Step {
    std::int64_t width = 0;
    Time limit = 0;
    mutable unsigned klass = 0;  ///< the index's width class of `width` (set by the query)
  };
  static constexpr unsigned kMaxSteps = 7;
  Step more[kMaxSteps];
  unsigned n_more = 0;
  bool passes(std::int64_t width, Time prediction, Time estimate) const {
    if (width <= extra) return true;
    const Time q = by_estimate ? estimate : prediction;
    if (width <= free && q <= limit && in_room(estimate, limit)) return true;
    for (unsigned i = 0; i < n_more && width <= more[i].width; ++i)
      if (q <= more[i].limit && in_room(estimate, more[i].limit)) return true;
    return false;
  }
  bool in_room(Time estimate, Time lim) const { return room >= kNever || estimate - room <= lim; }
};

class WaitQueue {
 public:
  using Slot = std::uint32_t;
  static constexpr Slot kNoSlot = ~Slot(0);
  /// Entry::group of a job with a value of its own.
  static constexpr std::uint32_t kNoGroup = ~std::uint32_t(0);
  /// push(): let the queue number the job (see push).
  static constexpr std::uint32_t kAutoPosition = ~std::uint32_t(0);

  struct Entry {
    JobHandle handle = 0;
    QueueKey key;
    Time prediction = 0;  ///< planning value
    Time estimate = 0;    ///< the user's time limit (kill time)
    std::int64_t width = 0;  ///< resource demand hint (see push)
    Time since = kNever;     ///< waiting since (submit time); kNever: unknown
    /// Its first reservation as the head (PredictionBook's JobPlan), kNever
    /// if it has had none: the delay cap's reference.
    Time first_reservation = kNever;
    bool live = false;
    bool hidden = false;        ///< refused in this pass (candidate indexes)
    mutable std::uint32_t position = 0; ///< queue position (renumbered by a walk)
    std::uint32_t gen = 0;      ///< bumped on every change (SJBF heaps)
    std::uint32_t group = kNoGroup;  ///< set_group(); kNoGroup: its own value
    std::uint32_t gver = 0;     ///< the group's version `prediction` was read at
    bool is_run = false;        ///< a run's pseudo entry (SJBF groups), never live
  };

  /// A waiting job as the orders yield it.
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
  /// changes while the job waits (the simulator's SJF rank; every push then
  /// gives one); by default the queue numbers jobs in push order, which is
  /// right when they are pushed in queue order (FCFS arrivals, the plugin's
  /// rebuilt queue) and costs a renumbering of the queue when they are not.
  /// `group`: put it in that group at once (as set_group() would, but
  /// without first indexing it on its own); `prediction` is then unused.
  Slot push(JobHandle h, QueueKey key, Time prediction, Time estimate, std::int64_t width = 0,
            Time since = kNever, Time first_reservation = kNever,
            std::uint32_t position = kAutoPosition, std::uint32_t group = kNoGroup);
  void erase(Slot s);
  void set_prediction(Slot s, Time p);
  /// Hints for a caller about to set_prediction() many jobs whose slots lie
  /// apart (propagation): ask for the entry first, a few jobs later for
  /// what set_prediction() writes beside it (the entry must be there by
  /// then: it is read to find that). No effect on the queue.
  void prefetch_entry(Slot s) const {
    if (s < pool_.size()) __builtin_prefetch(&pool_[s]);
  }
  void prefetch_index(Slot s) const {
    if (s >= pool_.size() || !indexed()) return;
    const std::uint32_t p = pool_[s].position;
    if (p < tree_.cells.size()) __builtin_prefetch(&tree_.cells[p], 1);
  }
  void set_first_reservation(Slot s, Time t) { pool_[s].first_reservation = t; }

  /// Put a waiting job in group `group` (a small number: the caller's, e.g.
  /// PredictionBook::group_of()), whose planning value becomes its own
  /// (give a new group its value with set_group_prediction() first: 0 until
  /// then).
  /// kNoGroup takes it out (it keeps the group's value). set_prediction()
  /// on a job in a group takes it out first. For BackfillOrder::Queue, and
  /// for ShortestPrediction when prediction_order() is never called (passes
  /// of one reservation, not selective; it asserts): there a group's jobs
  /// of one width and estimate are one item of the candidate index.
  void set_group(Slot s, std::uint32_t group);
  /// The planning value of every job in `group` (and of those put in it
  /// later, until the next call).
  void set_group_prediction(std::uint32_t group, Time p);

  /// Re-predictions listed but not yet applied to the SJBF heaps and the
  /// estimate index (stale listings included): bounded by a multiple of the
  /// queue's size (for tests).
  std::size_t pending_listed() const {
    std::size_t n = 0;
    for (const auto& l : sj_.pending.list) n += l.size();
    for (const auto& l : se_.stale.list) n += l.size();
    return n;
  }

  /// The smallest width among waiting jobs (0 if empty): when the adapter's
  /// free_width() is below it, no waiting job can start and a pass can stop.
  std::int64_t min_width() const { return min_width_; }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Entry& entry(Slot s) const {
    sync(s);
    return pool_[s];
  }

  // --- queue order ---------------------------------------------------------------

  /// Walks queue order; erasing the job just visited is allowed.
  class QueueIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Item;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Item;
    QueueIterator() = default;
    Item operator*() const {
      const Entry& e = q_->entry(q_->at_[pos_]);
      return Item{e.key, e.prediction, e.width, q_->at_[pos_]};
    }
    QueueIterator& operator++() {
      pos_ = q_->next_position(pos_ + 1);
      // A walk reads the entries in queue order, which is not the pool's
      // (slots are reused): the one a few positions on is asked for now
      // (a position past the last, or freed, is skipped or prefetched for
      // nothing). RICC conservative walks 520 million entries.
      const std::size_t ahead = std::size_t(pos_) + 8;
      if (ahead < q_->at_.size() && q_->at_[ahead] < q_->pool_.size())
        __builtin_prefetch(&q_->pool_[q_->at_[ahead]]);
      return *this;
    }
    friend bool operator==(const QueueIterator& a, const QueueIterator& b) { return a.pos_ == b.pos_; }
    friend bool operator!=(const QueueIterator& a, const QueueIterator& b) { return a.pos_ != b.pos_; }

   private:
    friend class WaitQueue;
    QueueIterator(const WaitQueue* q, std::uint32_t pos) : q_(q), pos_(pos) {}
    const WaitQueue* q_ = nullptr;
    std::uint32_t pos_ = kEnd;
  };
  struct QueueRange {
    QueueIterator b, e;
    QueueIterator begin() const { return b; }
    QueueIterator end() const { return e; }
  };
  /// Queue order.
  QueueRange queue_order() const;
  /// Queue order from waiting job `s` on (the iterator at it).
  QueueIterator queue_order_from(Slot s) const;

  /// Counts the changes of waiting jobs' planning values (set_prediction(),
  /// set_group_prediction() on a group with waiting jobs, a job taking a
  /// group's different value in set_group()) and the pushes that do not
  /// join the end of the queue order (an explicit position, or a key not
  /// after the last one); other pushes and erases do not count (size()
  /// tells of erases). A pass may continue the last one only while it is
  /// unchanged (policy.h, PassCarry).
  std::uint64_t value_changes() const { return value_changes_; }

  // --- SJBF order ---------------------------------------------------------------

 private:
  struct PredCmp {
    bool operator()(const Item& a, const Item& b) const {
      if (a.prediction != b.prediction) return a.prediction < b.prediction;
      if (a.key == b.key) return a.slot < b.slot;
      return a.key < b.key;
    }
  };

 public:
  using PredSet = std::set<Item, PredCmp>;
  /// SJBF order (BackfillOrder::ShortestPrediction only): an ordered set
  /// kept from the first call on (the passes that walk the order call it:
  /// deeper reservations). Erasing a slot invalidates only
  /// iterators to that slot.
  const PredSet& prediction_order();

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
  /// (kNoSlot: none); with `from` (a waiting job), the first at or after
  /// it. Only for BackfillOrder::Queue.
  Slot first_in_queue_order(const CandidateProbe& p, Slot from = kNoSlot);
  /// Blocks of jobs first_in_queue_order() has read one by one since the
  /// queue was made (its index's bounds let the probe in): the query's cost
  /// beyond one path down the tree, for tests and benchmarks.
  std::uint64_t queue_order_blocks_read() const { return tree_.blocks_read; }
  /// The same in SJBF order. Only for BackfillOrder::ShortestPrediction.
  /// By estimate, a job found too long for the probe (its estimate class is
  /// the limit's) and too wide for the extra width cannot pass for the rest
  /// of the pass: it is hidden on the way (as the adapter's refusals are).
  Slot first_in_prediction_order(const CandidateProbe& p);
  /// Hide a job from the two queries above until unhide_all() (the pass
  /// calls it at its end). The job must have been returned by one of them.
  void hide(Slot s);
  void unhide_all();

 private:
  static constexpr std::uint32_t kEnd = ~std::uint32_t(0);
  static constexpr std::uint32_t kMinRenumbered = 64;  // capacity after a renumbering
  Item item(Slot s) const {
    const Entry& e = entry(s);
    return Item{e.key, e.prediction, e.width, s};
  }

  BackfillOrder order_;
  mutable std::vector<Entry> pool_;  // mutable: entry() reads a group's value into it

  // --- groups (see the file comment) -------------------------------------------
  struct Group {
    Time value = 0;
    std::uint32_t ver = 0;
    // The index leaves holding its jobs (ascending), how many each and the
    // smallest width class among them (kept while jobs leave: a lower
    // bound): a user's jobs arrive together, so mostly one append per 32
    // jobs.
    struct Leaf {
      std::uint32_t leaf;
      std::uint16_t jobs;
      std::uint8_t klass;
    };
    std::vector<Leaf> leaves;
    std::vector<std::uint32_t> runs;  // SJBF: its runs with jobs (one per width and estimate)
  };
  mutable std::vector<Group> groups_;  // mutable: regroup_leaves() in a renumbering
  void sync(Slot s) const {
    Entry& e = pool_[s];
    if (e.group == kNoGroup) return;
    const Group& g = groups_[e.group];
    if (e.gver == g.ver) return;
    e.prediction = g.value;
    e.gver = g.ver;
  }
  void group_leaf(std::uint32_t group, std::uint32_t position, int delta) const;
  void take_group(Entry& e, std::uint32_t group);  // its group and the group's value
  Slot new_slot();  // a free slot of the pool, or a new one
  void ungroup(Slot s);  // out of its group, keeping the value (synced)
  void regroup_leaves() const;  // every group's leaves anew (after a renumbering)

  // --- SJBF runs (see the file comment) -----------------------------------------
  // A run's jobs: (position, slot, stamp) in a min-heap by position, with
  // stale records (jobs that left) dropped when they reach the top or when
  // they outnumber the jobs; a record counts while the slot's run_of_ and
  // rstamp_ still match it. The pseudo entry holds the group's value, the
  // estimate, the width and the first job's position; it is in the heaps
  // while the run has a job.
  static constexpr std::uint32_t kNoRun = ~std::uint32_t(0);
  struct RunMember {
    std::uint32_t position;
    Slot slot;
    std::uint32_t stamp;
  };
  struct MemberAfter {  // std heap functions: the smallest position on top
    bool operator()(const RunMember& a, const RunMember& b) const { return a.position > b.position; }
  };
  struct Run {
    std::uint32_t group = 0;
    Slot pseudo = kNoSlot;    // its entry (handle: the run's number)
    std::uint32_t count = 0;  // its jobs (visible, live)
    bool in_heaps = false;    // count > 0, once run_place() ran
    std::int64_t width = 0;   // its jobs'
    Time estimate = 0;        // its jobs'
    std::vector<RunMember> members;
  };
  mutable std::vector<Run> runs_;              // mutable: positions follow a renumbering
  std::vector<std::uint32_t> free_runs_;       // runs without jobs (out of their group's list)
  std::vector<std::uint32_t> run_of_;          // per slot: its run, kNoRun if none
  std::vector<std::uint32_t> rstamp_;          // per slot: bumped at each join
  bool runs_on() const { return order_ == BackfillOrder::ShortestPrediction; }
  bool in_run(Slot s) const { return s < run_of_.size() && run_of_[s] != kNoRun; }
  bool stale(std::uint32_t run, const RunMember& m) const {  // its job left the run since
    return run_of_[m.slot] != run || rstamp_[m.slot] != m.stamp;
  }
  Slot job_of(Slot s) const {  // a heap item's job: a run's first
    return pool_[s].is_run ? at_[pool_[s].position] : s;
  }
  void sj_enter(Slot s);   // into the SJBF heaps (its run, if grouped)
  void sj_leave(Slot s);   // out of them
  void run_add(Slot s);
  void run_remove(Slot s);
  void run_top(std::uint32_t run) const;  // drop stale records on top
  void run_place(std::uint32_t run);      // the pseudo entry follows its first job
  void runs_renumbered(const std::vector<Slot>& order) const;  // records anew (jobs in queue order)
  std::vector<Slot> free_;
  std::size_t size_ = 0;
  std::vector<Slot> hidden_;
  bool pred_set_on_ = false;
  PredSet by_pred_;
  // Each live slot's node in by_pred_ (while pred_set_on_), and the slot
  // re-predicted last: a user's jobs re-predicted to one value follow each
  // other in that order, so the next one goes right after it (an insertion
  // with a hint, O(1), instead of a search from the root).
  std::vector<PredSet::iterator> pred_at_;
  Slot pred_last_ = kNoSlot;
  void pred_insert(Slot s) {
    if (pred_at_.size() < pool_.size()) pred_at_.resize(pool_.size());
    pred_at_[s] = by_pred_.insert(item(s)).first;
  }

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
      if (size_ == 0 || width < min_width_) min_width_ = width;  // before its insertion
    } else if (width == min_width_) {
      find_min_width();
    }
  }
  void count_large_width(std::int64_t width, int delta);
  void find_min_width();

  // --- positions ----------------------------------------------------------------
  // at_[p]: the job at position p (kNoSlot: none); used_: a bitmap of the
  // positions in use, with levels above it (a bit per non-zero word).
  // Mutable: a const walk may first renumber (positions pushed out of order).
  mutable std::vector<Slot> at_;
  mutable std::vector<std::vector<std::uint64_t>> used_;
  mutable std::uint32_t next_ = 0;  // next automatic position
  mutable bool stale_ = false;      // automatic positions out of queue order
  std::uint64_t value_changes_ = 0;  // value_changes()
  bool explicit_positions_ = false;
  mutable QueueKey last_key_;  // the last key pushed; after a renumbering, the largest
  mutable bool has_last_ = false;
  std::uint32_t capacity() const { return std::uint32_t(at_.size()); }
  std::uint32_t next_position(std::uint32_t from) const;  // kEnd: none
  void mark(std::uint32_t p, bool on) const;
  void grow(std::uint32_t capacity) const;
  void renumber() const;  // automatic positions 0..size-1 in queue order
  void place(Slot s, std::uint32_t p);

  // --- the queue-order index: a tree over positions -------------------------------
  // Leaves are blocks of kBlock positions; every node keeps the smallest
  // width of its visible jobs and, per width class c, the smallest
  // prediction (and, once a probe by estimate came, estimate) among its
  // visible jobs of class <= c, clamped to 32 bits (a larger value only
  // makes a probe look into a subtree in vain, never skip a candidate).
  static constexpr unsigned kBlock = 32;
  struct Cell {  // a position's job, for the index (visible: in use, not hidden)
    std::int64_t width;
    std::int32_t prediction, estimate;  // prediction: unless in a group
    std::uint8_t klass;
    bool visible;
    std::uint32_t group;  // kNoGroup, or the group whose value it has
  };
  struct Tree {
    std::vector<std::int64_t> bounds;   // class lower bounds (bounds[0] unused)
    mutable std::vector<Cell> cells;    // per position
    mutable std::vector<std::int64_t> min_w;    // per node
    mutable std::vector<std::int32_t> pm_pred;  // per node x class
    mutable std::vector<std::int32_t> pm_est;   // same, by estimate (when used)
    mutable std::uint32_t leaves = 0;           // capacity / kBlock
    mutable bool by_estimate = false;           // pm_est maintained
    mutable std::uint64_t blocks_read = 0;      // queue_order_blocks_read()
    // Leaves whose cells changed since the last query: their leaf and the
    // paths up are recomputed once, at the next query (tree_flush), not at
    // every change (propagation re-predicts a user's whole queue at each
    // of its finishes: thousands of changes between two passes).
    mutable std::vector<std::uint32_t> dirty;   // leaf nodes, each once
    mutable std::vector<std::uint8_t> is_dirty; // per leaf
  } tree_;
  bool indexed() const { return order_ == BackfillOrder::Queue; }
  unsigned classes() const { return unsigned(tree_.bounds.size()); }
  std::uint8_t class_of(std::int64_t width) const;
  void set_cell(std::uint32_t p, Slot s) const;  // from the entry (s == kNoSlot: empty)
  void tree_touch(std::uint32_t p) const;        // its leaf and the path up, at the next flush
  void tree_flush() const;                        // recompute what changed since the last
  void tree_rebuild() const;
  bool tree_leaf(std::uint32_t node) const;  // (true: its bounds changed)
  // A leaf's jobs of class >= klass now have a value as short as `value`:
  // its bounds and those above it lowered in place.
  void tree_lower(std::uint32_t leaf, unsigned klass, std::int32_t value) const;
  bool tree_merge(std::uint32_t node) const;  // (true: its bounds changed)
  bool tree_may_pass(std::uint32_t node, const CandidateProbe& p, unsigned cls) const;
  Slot tree_find(std::uint32_t node, const CandidateProbe& p, unsigned cls) const;
  // The same among positions >= from; the node holds positions [lo, hi).
  Slot tree_find_from(std::uint32_t node, std::uint32_t lo, std::uint32_t hi,
                      const CandidateProbe& p, unsigned cls, std::uint32_t from) const;

  // --- the SJBF index: per-width heaps, a tree over the widths -------------------
  // heaps[r]: the jobs of the r-th smallest width by (prediction, queue
  // position) (queue order breaks ties, and positions are in queue order),
  // each job once, at hpos_[slot] (re-predicted jobs move in place when a
  // query reads their rank, see `pending`; erased and hidden ones are taken
  // out); best[]: a tournament tree over the width
  // ranks holding each subtree's smallest top (kNone: none). Renumbering
  // the positions rebuilds the heaps.
  struct HeapItem {
    Time prediction;
    std::uint32_t position;
    Slot slot;
    std::uint32_t gen;
  };
  static constexpr HeapItem kNone{std::numeric_limits<Time>::max(), ~std::uint32_t(0), kNoSlot, 0};
  // Re-predictions not yet in a set of heaps (the width heaps, the estimate
  // buckets): a heap item keeps the value it was sifted with until a query
  // reads its heap (refresh_heap), so a job re-predicted several times in
  // between is sifted once (propagation re-predicts a user's whole queue at
  // each of its finishes). A slot counts while flagged: a listed slot that
  // left its heap (erased, hidden, pushed again) is unflagged and skipped.
  struct Pending {
    std::vector<std::vector<Slot>> list;  // per heap
    std::vector<std::uint8_t> listed;     // per heap: in `heaps`
    std::vector<std::uint32_t> heaps;     // heaps with a list, each once
    std::vector<std::uint8_t> flag;       // per slot
    void mark(Slot s, std::size_t heap) {  // flag[s] sized, not set
      flag[s] = 1;
      list[heap].push_back(s);
      if (!listed[heap]) {
        listed[heap] = 1;
        heaps.push_back(std::uint32_t(heap));
      }
    }
    void done(std::size_t heap) {  // its list was applied (refresh_heap)
      list[heap].clear();
      listed[heap] = 0;
    }
    void discard() {  // every heap rebuilt from the entries
      for (std::uint32_t h : heaps) {
        for (Slot s : list[h]) flag[s] = 0;
        done(h);
      }
      heaps.clear();
    }
  };
  struct WidthHeaps {  // (its items' positions change with a renumbering)
    std::vector<std::int64_t> widths;          // distinct, ascending
    std::vector<std::vector<HeapItem>> heaps;  // per width rank
    std::vector<HeapItem> best;                // the tournament tree
    std::uint32_t size = 0;                    // its leaves (power of two)
    std::vector<std::pair<Slot, std::uint32_t>> popped;  // hidden in this pass
    // Per rank; flushed when a query reads the rank (sj_flush_upto), so
    // ranks wider than any query's free width are not sifted at all.
    Pending pending;
  };
  mutable WidthHeaps sj_;
  std::vector<std::uint32_t> wrank_;  // per slot: its width's rank
  mutable std::vector<std::uint32_t> hpos_;  // per slot: its index in that rank's heap
  std::vector<std::uint32_t> rank_of_width_;  // width -> rank + 1 (0: none), small widths
  static bool heap_after(const HeapItem& a, const HeapItem& b) {  // a comes after b
    return a.prediction != b.prediction ? a.prediction > b.prediction : a.position > b.position;
  }
  static bool better(const HeapItem& a, const HeapItem& b) { return heap_after(b, a); }
  // heap_after as a type, for std::make_heap: a function pointer is called
  // through, not inlined (a third of a heapify's time on RICC under site).
  struct HeapAfter {
    bool operator()(const HeapItem& a, const HeapItem& b) const { return heap_after(a, b); }
  };
  // The winner of two tournament cells (the left one on a tie).
  static const HeapItem& first_of(const HeapItem& left, const HeapItem& right) {
    return better(right, left) ? right : left;
  }
  // Into `best`, the best of leaves 0..last of a tournament tree (`leaves`
  // leaves from index `leaves` on, node n's children 2n and 2n+1).
  static void best_of_prefix(const HeapItem* tree, std::size_t leaves, std::size_t last,
                             HeapItem& best);

  // --- the SJBF index by estimate (safe passes; built at the first one) ---------
  // The same items again, in buckets by (width rank, estimate class), and a
  // two-dimensional tournament over them: rows the estimate classes, columns
  // the width ranks, each cell of a row node and a column node the smallest
  // bucket top below both. The first job in SJBF order of width <= F and
  // estimate class <= c is one query of O(log classes x log widths) cells.
  // Estimate classes: each distinct estimate of the waiting jobs when they
  // are few (users pick a few round values), else about as many jobs each
  // (at most 128, fewer when the widths are many: kMaxEstCells);
  // a job in the limit's own class may still be too long, which the probe
  // checks, hiding it for the pass; when such jobs add up to several times
  // the queue, the classes are fitted again. Changed buckets are fixed at
  // the next query, each once (propagation changes thousands in between).
  // A query reads it only when the width index's first job is too long
  // (first_in_prediction_order), so most queries leave it alone.
  static constexpr std::uint32_t kMaxEstClasses = 128;
  // A query by estimate (or with a room) hides this many jobs found too
  // long in the width index before it reads the estimate index.
  static constexpr unsigned kHideBeforeEstIndex = 8;
  static constexpr std::size_t kMaxEstCells = std::size_t(1) << 18;  // 6 MB of cells
  struct EstIndex {
    bool on = false;
    bool dirty = false;            // ranks, positions or classes changed: rebuilt at the next query
    std::vector<Time> bounds;      // class lower bounds, ascending (bounds[0]: the lowest estimate)
    std::uint32_t classes = 0;     // bounds.size()
    std::uint32_t rows = 0, cols = 0;  // leaves (powers of two >= classes, widths)
    std::vector<std::vector<HeapItem>> bucket;  // [rank * classes + class]
    std::vector<std::uint8_t> changed;          // per bucket: in `pending`
    std::vector<std::uint32_t> pending;         // buckets to fix at the next query
    std::vector<HeapItem> cell;                 // [row * 2 * cols + column]
    std::vector<std::uint32_t> klass;           // per slot, its class
    std::vector<std::uint32_t> bpos;            // per slot, its index in its bucket
    std::uint64_t waste = 0;  // jobs hidden for their class since the last build
    Pending stale;  // per bucket; applied at the next query (se_flush)
  };
  mutable EstIndex se_;
  std::uint32_t se_class(Time estimate) const;
  void se_build() const;  // (re)build from the live, visible jobs
  void se_push(Slot s) const;
  void se_remove(Slot s) const;  // erased or hidden
  void se_update(Slot s) const;  // re-predicted
  void se_changed(std::size_t bucket) const;  // its top changed: fixed at the next flush
  void se_flush() const;        // fix the changed buckets' cells
  HeapItem se_best(std::uint32_t last_rank, std::uint32_t last_class) const;

  std::uint32_t sj_rank(std::int64_t width);  // adds the width if new
  void sj_push(Slot s);
  // Heaps of HeapItems kept by hand, `at[slot]` each job's index: sift
  // (the final index), take a job out or move it in place (whether the top
  // was concerned).
  static std::uint32_t heap_up(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at,
                               std::uint32_t i);
  static std::uint32_t heap_down(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at,
                                 std::uint32_t i);
  static bool heap_remove(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Slot s);
  static bool heap_update(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Slot s,
                          Time prediction, std::uint32_t gen);
  static bool heap_set(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at,
                       const HeapItem& v);  // v.slot's item becomes v
  void sj_remove(Slot s);  // out of its width's heap
  void sj_update(Slot s);  // its prediction changed: pending until its rank is read
  // Into heap h (`at`: each item's index), the current values of the slots
  // pending for it (heap number `heap` of `p`; `in_h`: still in h), one
  // sift each, or one heapify when they are many; unflags them.
  template <class InHeap>
  void refresh_heap(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Pending& p,
                    std::size_t heap, InHeap in_h) const;
  void sj_fix(std::uint32_t rank) const;
  void sj_flush_rank(std::uint32_t rank) const;  // pending re-predictions into its heap
  void sj_flush_upto(std::uint32_t last_rank) const;  // ranks 0..last_rank
  void sj_flush_all() const;
  void sj_rebuild_tree() const;
  void sj_rebuild_heaps() const;  // after a renumbering
  HeapItem sj_best_upto(std::uint32_t last_rank) const;
};

}  // namespace easypp
