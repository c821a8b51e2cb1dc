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

// One more or one fewer of `key` in v, counts by key in ascending order (a
// key whose count reaches 0 goes). Adding the largest key yet is an append.
template <class K>
void count_sorted(std::vector<std::pair<K, std::uint32_t>>& v, K key, int delta) {
  if (delta > 0 && (v.empty() || v.back().first < key)) {
    v.emplace_back(key, 1);
    return;
  }
  auto it = std::lower_bound(v.begin(), v.end(), key,
                             [](const auto& x, K k) { return x.first < k; });
  if (delta > 0) {
    if (it != v.end() && it->first == key) ++it->second;
    else v.insert(it, {key, 1});
    return;
  }
  assert(it != v.end() && it->first == key && it->second > 0);
  if (--it->second == 0) v.erase(it);
}

std::uint32_t pow2_at_least(std::uint64_t n) {
  std::uint32_t c = 64;
  while (c < n) c *= 2;
  return c;
}

}  // namespace

WaitQueue::WaitQueue(BackfillOrder order) : order_(order) { tree_.bounds = default_classes(); }

WaitQueue::Slot WaitQueue::push(JobHandle h, QueueKey key, Time prediction, Time estimate,
                                std::int64_t width, Time since, Time first_reservation,
                                std::uint32_t position, std::uint32_t group) {
  const Slot s = new_slot();
  const std::uint32_t gen = pool_[s].gen + 1;
  pool_[s] = Entry{h, key, prediction, estimate, width, since, first_reservation, true, false, 0, gen};
  if (group != kNoGroup) {  // (as set_group() would, without a move)
    assert((indexed() || runs_on()) && !pred_set_on_);
    take_group(pool_[s], group);
  }
  count_width(width, +1);
  ++size_;
  if (position == kAutoPosition) {
    assert(!explicit_positions_);
    if (has_last_ && !(last_key_ < key)) {
      stale_ = true;  // renumbered before the next walk
      ++value_changes_;  // (not at the end: a continued pass would miss it)
    }
    last_key_ = key;
    has_last_ = true;
    if (next_ >= capacity()) {
      // Compact when half the positions are free (FCFS: the started jobs'),
      // else grow.
      if (!stale_ && std::size_t(capacity()) >= 2 * size_) renumber();
      else grow(std::max<std::uint32_t>(64, 2 * capacity()));
    }
    position = next_++;
  } else {
    assert(size_ == 1 || explicit_positions_);
    explicit_positions_ = true;
    ++value_changes_;  // (anywhere in the order, see value_changes())
    if (position >= capacity()) grow(position + 1);
  }
  place(s, position);
  if (pred_set_on_) pred_insert(s);
  if (order_ == BackfillOrder::ShortestPrediction) sj_enter(s);
  return s;
}

void WaitQueue::erase(Slot s) {
  assert(s < pool_.size() && pool_[s].live);
  Entry& e = pool_[s];
  if (pred_set_on_) {
    by_pred_.erase(pred_at_[s]);
    if (pred_last_ == s) pred_last_ = kNoSlot;
  }
  const std::uint32_t p = e.position;
  assert(at_[p] == s);
  at_[p] = kNoSlot;
  mark(p, false);
  const bool was_hidden = e.hidden;
  if (e.group != kNoGroup) {
    if (indexed()) group_leaf(e.group, p, -1);
    e.group = kNoGroup;
  }
  e.live = false;
  e.hidden = false;
  ++e.gen;
  if (indexed()) {
    set_cell(p, kNoSlot);
    tree_touch(p);
  } else if (order_ == BackfillOrder::ShortestPrediction && !was_hidden) {
    // (A hidden job left its width's heap, or its run, when it was hidden.)
    sj_leave(s);
  }
  free_.push_back(s);
  --size_;
  count_width(e.width, -1);
}

void WaitQueue::set_prediction(Slot s, Time p) {
  Entry& e = pool_[s];
  if (e.group != kNoGroup) ungroup(s);
  if (e.prediction == p) return;
  ++value_changes_;
  if (pred_set_on_) {
    // Moved within the set by its node (no allocation per re-prediction:
    // propagation changes thousands of jobs at each of a user's finishes).
    auto node = by_pred_.extract(pred_at_[s]);
    node.value().prediction = p;
    const auto hint = pred_last_ != kNoSlot && pred_last_ != s ? std::next(pred_at_[pred_last_])
                                                               : by_pred_.end();
    pred_at_[s] = by_pred_.insert(hint, std::move(node));
    pred_last_ = s;
  }
  e.prediction = p;
  if (indexed()) {
    // Only the prediction of its cell changes (set_cell() would recompute
    // the width class too: a search per re-predicted job).
    tree_.cells[e.position].prediction = clamp32(p);
    tree_touch(e.position);
  } else if (order_ == BackfillOrder::ShortestPrediction) {
    if (e.hidden) return;  // out of the heaps: unhide_all() pushes it with this value
    ++e.gen;
    sj_update(s);
    se_update(s);
  }
}

WaitQueue::Slot WaitQueue::new_slot() {
  if (free_.empty()) {
    pool_.emplace_back();
    return Slot(pool_.size() - 1);
  }
  const Slot s = free_.back();
  free_.pop_back();
  return s;
}

// --- groups ----------------------------------------------------------------------

void WaitQueue::take_group(Entry& e, std::uint32_t group) {
  if (group >= groups_.size()) groups_.resize(std::size_t(group) + 1);
  const Group& g = groups_[group];
  e.group = group;
  e.gver = g.ver;
  e.prediction = g.value;
}

void WaitQueue::set_group(Slot s, std::uint32_t group) {
  assert((indexed() || runs_on()) && s < pool_.size() && pool_[s].live);
  assert(!pred_set_on_);  // the ordered set keeps a value per job
  Entry& e = pool_[s];
  if (e.group == group) return;
  if (e.group != kNoGroup) ungroup(s);
  if (group == kNoGroup) return;
  if (group >= groups_.size() || groups_[group].value != e.prediction) ++value_changes_;
  take_group(e, group);
  if (runs_on()) {
    // From its own heap items into its run (a hidden job joins it when
    // unhide_all() puts it back).
    if (e.hidden) return;
    sj_remove(s);
    se_remove(s);
    run_add(s);
    return;
  }
  group_leaf(group, e.position, +1);
  set_cell(e.position, s);
  tree_touch(e.position);
}

void WaitQueue::set_group_prediction(std::uint32_t group, Time p) {
  assert(indexed() || runs_on());
  if (group >= groups_.size()) groups_.resize(std::size_t(group) + 1);
  Group& g = groups_[group];
  if (g.value == p) return;
  if (runs_on() ? !g.runs.empty() : !g.leaves.empty()) ++value_changes_;  // (its jobs' values)
  const bool longer = p > g.value;
  g.value = p;
  ++g.ver;
  if (runs_on()) {
    // Its runs move in the heaps as one job would (at the next query).
    for (const std::uint32_t id : g.runs) {
      const Run& run = runs_[id];
      if (!run.in_heaps) continue;
      Entry& pe = pool_[run.pseudo];
      pe.prediction = p;
      ++pe.gen;
      sj_update(run.pseudo);
      se_update(run.pseudo);
    }
    return;
  }
  // The index keeps lower bounds of the values (a probe skips a subtree
  // only when its bound is over the limit): a longer value leaves them
  // true, and a shorter one lowers them in place (no leaf recomputed: a
  // probe that finds nothing in a leaf recomputes it, tree_find). (A leaf takes the
  // longer value when recomputed for another change.)
  if (longer) return;
  const std::int32_t v = clamp32(p);
  for (const Group::Leaf& l : g.leaves) tree_lower(l.leaf, l.klass, v);
}

void WaitQueue::ungroup(Slot s) {
  sync(s);
  Entry& e = pool_[s];
  if (runs_on()) {
    // From its run to heap items of its own (a hidden job is in neither).
    const bool was_in = in_run(s);
    if (was_in) run_remove(s);
    e.group = kNoGroup;
    if (was_in) {
      ++e.gen;
      sj_push(s);
    }
    return;
  }
  group_leaf(e.group, e.position, -1);
  e.group = kNoGroup;
  set_cell(e.position, s);  // the same value, now its own
}

void WaitQueue::group_leaf(std::uint32_t group, std::uint32_t position, int delta) const {
  // (Like count_sorted, with the class.)
  std::vector<Group::Leaf>& v = groups_[group].leaves;
  const std::uint32_t leaf = position / kBlock;
  const std::uint8_t k = delta > 0 ? class_of(pool_[at_[position]].width) : 0;
  if (delta > 0 && (v.empty() || v.back().leaf < leaf)) {
    v.push_back(Group::Leaf{leaf, 1, k});
    return;
  }
  auto it = std::lower_bound(v.begin(), v.end(), leaf,
                             [](const Group::Leaf& x, std::uint32_t l) { return x.leaf < l; });
  if (delta > 0) {
    if (it != v.end() && it->leaf == leaf) {
      ++it->jobs;
      it->klass = std::min(it->klass, k);
    } else {
      v.insert(it, Group::Leaf{leaf, 1, k});
    }
    return;
  }
  assert(it != v.end() && it->leaf == leaf && it->jobs > 0);
  if (--it->jobs == 0) v.erase(it);
}

// --- SJBF runs ---------------------------------------------------------------------

void WaitQueue::sj_enter(Slot s) {
  if (runs_on() && pool_[s].group != kNoGroup) run_add(s);
  else sj_push(s);
}

void WaitQueue::sj_leave(Slot s) {
  if (in_run(s)) {
    run_remove(s);
  } else {
    sj_remove(s);
    se_remove(s);
  }
}

void WaitQueue::run_add(Slot s) {
  const Entry e = pool_[s];  // (a copy: a new run's entry may move the pool)
  std::uint32_t id = kNoRun;
  for (const std::uint32_t r : groups_[e.group].runs) {  // (its runs with jobs: few)
    if (runs_[r].width == e.width && runs_[r].estimate == e.estimate) {
      id = r;
      break;
    }
  }
  if (id == kNoRun) {
    // A run without jobs again, or a new one with its entry.
    Slot ps;
    if (!free_runs_.empty()) {
      id = free_runs_.back();
      free_runs_.pop_back();
      ps = runs_[id].pseudo;
    } else {
      id = std::uint32_t(runs_.size());
      ps = new_slot();
      runs_.emplace_back();
    }
    Entry& pe = pool_[ps];
    const std::uint32_t gen = pe.gen + 1;
    pe = Entry{};
    pe.handle = JobHandle(id);
    pe.estimate = e.estimate;
    pe.width = e.width;
    pe.gen = gen;
    pe.is_run = true;
    Run& run = runs_[id];
    run.group = e.group;
    run.pseudo = ps;
    run.width = e.width;
    run.estimate = e.estimate;
    assert(run.count == 0 && run.members.empty() && !run.in_heaps);
    groups_[e.group].runs.push_back(id);
  }
  if (run_of_.size() < pool_.size()) {
    run_of_.resize(pool_.size(), kNoRun);
    rstamp_.resize(pool_.size(), 0);
  }
  Run& run = runs_[id];
  run_of_[s] = id;
  run.members.push_back(RunMember{e.position, s, ++rstamp_[s]});
  std::push_heap(run.members.begin(), run.members.end(), MemberAfter());
  ++run.count;
  if (!run.in_heaps || e.position < pool_[run.pseudo].position) run_place(id);
}

void WaitQueue::run_remove(Slot s) {
  const std::uint32_t id = run_of_[s];
  Run& run = runs_[id];
  run_of_[s] = kNoRun;  // its record is stale from now on
  --run.count;
  if (pool_[run.pseudo].position == pool_[s].position) {
    run_place(id);  // it was the first
  } else if (run.members.size() > 2 * std::size_t(run.count) + 16) {
    // Stale records outnumber the jobs: keep the live ones (the top stays).
    auto& m = run.members;
    m.erase(std::remove_if(m.begin(), m.end(), [&](const RunMember& x) { return stale(id, x); }),
            m.end());
    std::make_heap(m.begin(), m.end(), MemberAfter());
  }
}

void WaitQueue::run_top(std::uint32_t id) const {
  Run& run = runs_[id];
  auto& m = run.members;
  while (!m.empty() && stale(id, m.front())) {
    std::pop_heap(m.begin(), m.end(), MemberAfter());
    m.pop_back();
  }
}

void WaitQueue::run_place(std::uint32_t id) {
  Run& run = runs_[id];
  const Slot ps = run.pseudo;
  run_top(id);
  if (run.count == 0) {
    // Out of the heaps and of its group, for the next run to take.
    assert(run.members.empty());
    run.members.clear();
    if (run.in_heaps) {
      sj_remove(ps);
      se_remove(ps);
      run.in_heaps = false;
    }
    std::vector<std::uint32_t>& of_group = groups_[run.group].runs;
    const auto at = std::find(of_group.begin(), of_group.end(), id);
    assert(at != of_group.end());
    *at = of_group.back();
    of_group.pop_back();
    free_runs_.push_back(id);
    return;
  }
  Entry& pe = pool_[ps];
  pe.position = run.members.front().position;
  pe.prediction = groups_[run.group].value;
  ++pe.gen;
  if (!run.in_heaps) {
    sj_push(ps);
    run.in_heaps = true;
    return;
  }
  // In place: one sift in its width heap and in its bucket (the reserved
  // head, hidden and put back every pass, is often a run's first job). A
  // pending listing of it stays: applying it again changes nothing.
  const HeapItem v{pe.prediction, pe.position, ps, pe.gen};
  const std::uint32_t r = wrank_[ps];
  if (heap_set(sj_.heaps[r], hpos_, v)) sj_fix(r);
  if (se_.on && !se_.dirty) {
    const std::size_t b = std::size_t(r) * se_.classes + se_.klass[ps];
    if (heap_set(se_.bucket[b], se_.bpos, v)) se_changed(b);
  }
}

void WaitQueue::runs_renumbered(const std::vector<Slot>& order) const {
  // Each run's records anew from its jobs, which `order` gives in queue
  // order: ascending positions, a heap as they come. (The runs without
  // jobs hold no record.)
  for (const Slot s : order)
    if (in_run(s)) runs_[run_of_[s]].members.clear();
  for (const Slot s : order) {
    if (!in_run(s)) continue;
    Run& run = runs_[run_of_[s]];
    run.members.push_back(RunMember{pool_[s].position, s, rstamp_[s]});
    if (run.members.size() == 1) pool_[run.pseudo].position = pool_[s].position;
  }
}

void WaitQueue::regroup_leaves() const {
  for (Group& g : groups_) g.leaves.clear();
  for (std::uint32_t p = next_position(0); p != kEnd; p = next_position(p + 1)) {
    const Entry& e = pool_[at_[p]];
    if (e.group != kNoGroup) group_leaf(e.group, p, +1);
  }
}

void WaitQueue::count_large_width(std::int64_t width, int delta) {
  count_sorted(widths_, width, delta);
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

// --- orders ------------------------------------------------------------------------

WaitQueue::QueueRange WaitQueue::queue_order() const {
  if (stale_) renumber();
  return QueueRange{QueueIterator(this, next_position(0)), QueueIterator(this, kEnd)};
}

WaitQueue::QueueIterator WaitQueue::queue_order_from(Slot s) const {
  assert(s < pool_.size() && pool_[s].live);
  if (stale_) renumber();
  return QueueIterator(this, pool_[s].position);
}

const WaitQueue::PredSet& WaitQueue::prediction_order() {
  assert(order_ == BackfillOrder::ShortestPrediction);
  assert(runs_.empty());  // the set keeps a value per job: no groups (set_group)
  if (!pred_set_on_) {
    pred_set_on_ = true;
    for (Slot s = 0; s < pool_.size(); ++s)
      if (pool_[s].live) pred_insert(s);
  }
  return by_pred_;
}

// --- positions ---------------------------------------------------------------------

std::uint32_t WaitQueue::next_position(std::uint32_t from) const {
  if (from >= capacity()) return kEnd;
  std::uint64_t idx = from;
  std::size_t lvl = 0;
  for (;;) {
    const std::vector<std::uint64_t>& words = used_[lvl];
    const std::size_t w = std::size_t(idx >> 6);
    if (w >= words.size()) return kEnd;
    const std::uint64_t bits = words[w] & (~0ull << (idx & 63));
    if (bits != 0) {
      idx = (std::uint64_t(w) << 6) + std::uint64_t(__builtin_ctzll(bits));
      break;
    }
    if (lvl + 1 == used_.size()) return kEnd;
    idx = w + 1;  // the next word, one level up
    ++lvl;
  }
  while (lvl > 0) {
    --lvl;
    idx = (idx << 6) + std::uint64_t(__builtin_ctzll(used_[lvl][std::size_t(idx)]));
  }
  return std::uint32_t(idx);
}

void WaitQueue::mark(std::uint32_t p, bool on) const {
  std::uint64_t idx = p;
  for (std::vector<std::uint64_t>& words : used_) {
    std::uint64_t& w = words[std::size_t(idx >> 6)];
    const std::uint64_t bit = 1ull << (idx & 63);
    const bool was_zero = w == 0;
    if (on) {
      const bool had = (w & bit) != 0;
      w |= bit;
      if (had || !was_zero) return;  // the levels above know already
    } else {
      w &= ~bit;
      if (w != 0) return;
    }
    idx >>= 6;
  }
}

void WaitQueue::grow(std::uint32_t cap) const {
  cap = pow2_at_least(cap);
  at_.resize(cap, kNoSlot);
  used_.clear();
  std::size_t n = cap;
  do {
    n = (n + 63) / 64;
    used_.emplace_back(n, 0);
  } while (n > 1);
  for (std::uint32_t p = 0; p < cap; ++p)
    if (at_[p] != kNoSlot) mark(p, true);
  if (indexed()) {
    tree_.cells.resize(cap, Cell{kNoWidth, kNoValue, kNoValue, 0, false, kNoGroup});
    tree_rebuild();
  }
}

void WaitQueue::renumber() const {
  std::vector<Slot> order;
  order.reserve(size_);
  for (std::uint32_t p = next_position(0); p != kEnd; p = next_position(p + 1)) order.push_back(at_[p]);
  if (stale_) {
    std::sort(order.begin(), order.end(), [&](Slot a, Slot b) {
      const QueueKey &ka = pool_[a].key, &kb = pool_[b].key;
      return ka == kb ? a < b : ka < kb;
    });
  }
  const std::uint32_t n = std::uint32_t(order.size());
  at_.assign(0, kNoSlot);
  if (indexed()) tree_.cells.assign(0, Cell{});
  // Room for 3n more pushes before the next renumbering (FCFS: one per
  // arrival), whose cost is linear in the capacity: a constant per push.
  grow(std::max<std::uint64_t>(kMinRenumbered, 4 * std::uint64_t(n) + 4));
  for (std::uint32_t i = 0; i < n; ++i) {
    pool_[order[i]].position = i;
    at_[i] = order[i];
    mark(i, true);
    if (indexed()) set_cell(i, order[i]);
  }
  if (indexed()) tree_rebuild();
  if (indexed() && !groups_.empty()) regroup_leaves();
  if (!runs_.empty()) runs_renumbered(order);  // (before the heaps read the positions)
  next_ = n;
  stale_ = false;
  // The next automatic position comes after every job's: in order only if
  // its key comes after the last one's (not just after the last pushed).
  if (n > 0 && !explicit_positions_) {
    last_key_ = pool_[order[n - 1]].key;
    has_last_ = true;
  }
  if (order_ == BackfillOrder::ShortestPrediction) sj_rebuild_heaps();
}

void WaitQueue::place(Slot s, std::uint32_t p) {
  assert(at_[p] == kNoSlot);
  at_[p] = s;
  pool_[s].position = p;
  mark(p, true);
  if (indexed() && pool_[s].group != kNoGroup) group_leaf(pool_[s].group, p, +1);
  if (indexed()) {
    set_cell(p, s);
    tree_touch(p);
  }
}

// --- width classes -----------------------------------------------------------------

void WaitQueue::set_width_classes(std::vector<std::int64_t> lower_bounds) {
  assert(empty());
  std::sort(lower_bounds.begin(), lower_bounds.end());
  lower_bounds.erase(std::unique(lower_bounds.begin(), lower_bounds.end()), lower_bounds.end());
  if (lower_bounds.empty()) lower_bounds.push_back(0);
  if (lower_bounds.size() > 64) lower_bounds.resize(64);
  tree_.bounds = std::move(lower_bounds);
  if (indexed() && capacity() > 0) {
    for (std::uint32_t p = 0; p < capacity(); ++p) set_cell(p, at_[p]);
    tree_rebuild();
  }
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
  const auto it = std::upper_bound(tree_.bounds.begin() + 1, tree_.bounds.end(), width);
  return std::uint8_t(it - tree_.bounds.begin() - 1);
}

// --- the queue-order index ------------------------------------------------------------

void WaitQueue::set_cell(std::uint32_t p, Slot s) const {
  Cell& c = tree_.cells[p];
  if (s == kNoSlot) {
    c = Cell{kNoWidth, kNoValue, kNoValue, 0, false, kNoGroup};
    return;
  }
  const Entry& e = entry(s);
  c = Cell{e.width, clamp32(e.prediction), clamp32(e.estimate), class_of(e.width),
           e.live && !e.hidden, e.group};
}

void WaitQueue::tree_rebuild() const {
  const std::uint32_t leaves = std::max<std::uint32_t>(1, capacity() / kBlock);
  tree_.leaves = leaves;
  const std::size_t nodes = 2 * std::size_t(leaves), c = classes();
  tree_.min_w.assign(nodes, kNoWidth);
  tree_.pm_pred.assign(nodes * c, kNoValue);
  if (tree_.by_estimate) tree_.pm_est.assign(nodes * c, kNoValue);
  for (std::uint32_t n = leaves; n < 2 * leaves; ++n) tree_leaf(n);
  for (std::uint32_t n = leaves - 1; n >= 1; --n) tree_merge(n);
  tree_.dirty.clear();
  tree_.is_dirty.assign(leaves, 0);
}

bool WaitQueue::tree_leaf(std::uint32_t node) const {
  const unsigned c = classes();
  std::int32_t pred[64], est[64];
  std::fill(pred, pred + c, kNoValue);
  std::int64_t minw = kNoWidth;
  const std::size_t first = std::size_t(node - tree_.leaves) * kBlock;
  const Cell* cell = &tree_.cells[first];
  if (tree_.by_estimate) std::fill(est, est + c, kNoValue);
  std::uint32_t last_group = kNoGroup;  // a leaf's jobs are mostly of one group
  std::int32_t last_value = kNoValue;
  for (unsigned i = 0; i < kBlock; ++i) {
    const Cell& x = cell[i];
    if (!x.visible) continue;
    minw = std::min(minw, x.width);
    std::int32_t v = x.prediction;
    if (x.group != kNoGroup) {
      if (x.group != last_group) {
        last_group = x.group;
        last_value = clamp32(groups_[x.group].value);
      }
      v = last_value;
    }
    pred[x.klass] = std::min(pred[x.klass], v);
    if (tree_.by_estimate) est[x.klass] = std::min(est[x.klass], x.estimate);
  }
  bool changed = tree_.min_w[node] != minw;
  tree_.min_w[node] = minw;
  std::int32_t* pp = &tree_.pm_pred[std::size_t(node) * c];
  std::int32_t run = kNoValue;
  for (unsigned k = 0; k < c; ++k) {
    run = std::min(run, pred[k]);
    changed |= pp[k] != run;
    pp[k] = run;
  }
  if (tree_.by_estimate) {
    std::int32_t* pe = &tree_.pm_est[std::size_t(node) * c];
    run = kNoValue;
    for (unsigned k = 0; k < c; ++k) {
      run = std::min(run, est[k]);
      changed |= pe[k] != run;
      pe[k] = run;
    }
  }
  return changed;
}

void WaitQueue::tree_lower(std::uint32_t leaf, unsigned klass, std::int32_t value) const {
  const unsigned c = classes();
  for (std::uint32_t n = tree_.leaves + leaf; n >= 1; n >>= 1) {
    std::int32_t* p = &tree_.pm_pred[std::size_t(n) * c];
    // Prefix minima: at or below `value` at klass, so at every class above.
    if (p[klass] <= value) return;
    for (unsigned k = klass; k < c; ++k) p[k] = std::min(p[k], value);
  }
}

bool WaitQueue::tree_merge(std::uint32_t node) const {
  const unsigned c = classes();
  const std::uint32_t l = 2 * node, r = l + 1;
  const std::int64_t minw = std::min(tree_.min_w[l], tree_.min_w[r]);
  bool changed = tree_.min_w[node] != minw;
  tree_.min_w[node] = minw;
  std::int32_t* p = &tree_.pm_pred[std::size_t(node) * c];
  const std::int32_t* a = &tree_.pm_pred[std::size_t(l) * c];
  const std::int32_t* b = &tree_.pm_pred[std::size_t(r) * c];
  for (unsigned k = 0; k < c; ++k) {
    const std::int32_t v = std::min(a[k], b[k]);
    changed |= p[k] != v;
    p[k] = v;
  }
  if (tree_.by_estimate) {
    std::int32_t* pe = &tree_.pm_est[std::size_t(node) * c];
    const std::int32_t* ae = &tree_.pm_est[std::size_t(l) * c];
    const std::int32_t* be = &tree_.pm_est[std::size_t(r) * c];
    for (unsigned k = 0; k < c; ++k) {
      const std::int32_t v = std::min(ae[k], be[k]);
      changed |= pe[k] != v;
      pe[k] = v;
    }
  }
  return changed;
}

void WaitQueue::tree_touch(std::uint32_t p) const {
  const std::uint32_t leaf = p / kBlock;
  if (tree_.is_dirty[leaf]) return;
  tree_.is_dirty[leaf] = 1;
  tree_.dirty.push_back(tree_.leaves + leaf);
}

// Every dirty leaf, then the parents of the nodes whose bounds changed,
// level by level, each node once: a node that comes out as it was leaves
// its ancestors as they are (they were merged from these very bounds; a
// job that leaves without being its leaf's least, the common case, stops
// at the leaf).
void WaitQueue::tree_flush() const {
  std::vector<std::uint32_t>& level = tree_.dirty;
  if (level.empty()) return;
  std::size_t m = 0;
  for (std::uint32_t n : level) {
    tree_.is_dirty[n - tree_.leaves] = 0;
    if (tree_leaf(n)) level[m++] = n;
  }
  level.resize(m);
  // Then the parents of the nodes just changed, until the root. The leaves
  // are all at one depth (a power of two of them: grow()), so a level's
  // parents, sorted, are the next level.
  std::sort(level.begin(), level.end());
  while (!level.empty()) {
    std::size_t k = 0;
    std::uint32_t last = 0;
    for (std::uint32_t n : level) {
      if (n <= 1) continue;
      const std::uint32_t up = n >> 1;  // sorted in, sorted out
      if (up == last) continue;
      last = up;
      if (tree_merge(up)) level[k++] = up;
    }
    level.resize(k);
  }
}

// May a job of this subtree pass the probe? (From its bounds: maybe.)
bool WaitQueue::tree_may_pass(std::uint32_t node, const CandidateProbe& p, unsigned cls) const {
  const std::int64_t minw = tree_.min_w[node];
  if (minw > p.free) return false;
  if (minw <= p.extra) return true;
  // Only test (a) or the steps can pass in this subtree.
  const std::int32_t* pm =
      &(p.by_estimate ? tree_.pm_est : tree_.pm_pred)[std::size_t(node) * classes()];
  // (With a room, both bounds must let test (a) or a step in: the least
  // prediction and the least estimate need not be one job's, so this is
  // still a maybe. Without the estimate's bound on the steps, a queue of
  // jobs whose predictions fit a step and whose estimates end past the
  // room, the guard's usual case, was read block by block at every query:
  // RICC conservative:plan=prediction:correction=estimate:max-delay=3600,
  // 225 s of CPU, 75% of it in these queries; with it, 31.5 s.)
  auto may = [&](unsigned klass, Time limit) {
    return Time(pm[klass]) <= limit &&
           (p.room >= kNever ||
            Time(tree_.pm_est[std::size_t(node) * classes() + klass]) - p.room <= limit);
  };
  if (may(cls, p.limit)) return true;
  for (unsigned i = 0; i < p.n_more && minw <= p.more[i].width; ++i)
    if (may(p.more[i].klass, p.more[i].limit)) return true;
  return false;
}

WaitQueue::Slot WaitQueue::tree_find_from(std::uint32_t node, std::uint32_t lo,
                                          std::uint32_t hi, const CandidateProbe& p,
                                          unsigned cls, std::uint32_t from) const {
  if (hi <= from) return kNoSlot;
  if (lo >= from) return tree_find(node, p, cls);
  // The subtree holds `from`: one path down the tree.
  if (!tree_may_pass(node, p, cls)) return kNoSlot;
  if (node >= tree_.leaves) {
    ++tree_.blocks_read;
    for (std::uint32_t i = from; i < hi; ++i) {
      if (!tree_.cells[i].visible) continue;
      const Entry& e = entry(at_[i]);
      if (p.passes(e.width, e.prediction, e.estimate)) return at_[i];
    }
    return kNoSlot;  // (the jobs before `from` may be what let it in)
  }
  const std::uint32_t mid = lo + (hi - lo) / 2;
  const Slot s = tree_find_from(2 * node, lo, mid, p, cls, from);
  return s != kNoSlot ? s : tree_find_from(2 * node + 1, mid, hi, p, cls, from);
}

WaitQueue::Slot WaitQueue::tree_find(std::uint32_t node, const CandidateProbe& p,
                                     unsigned cls) const {
  if (!tree_may_pass(node, p, cls)) return kNoSlot;
  if (node >= tree_.leaves) {
    ++tree_.blocks_read;
    const std::uint32_t first = (node - tree_.leaves) * kBlock;
    for (std::uint32_t i = first; i < first + kBlock; ++i) {
      const Cell& x = tree_.cells[i];
      if (!x.visible) continue;
      const Entry& e = entry(at_[i]);
      if (p.passes(e.width, e.prediction, e.estimate)) return at_[i];
    }
    // Its bounds let the probe in for nothing: recomputed at the next
    // query (they may be lower than its values since tree_lower()).
    tree_touch(first);
    return kNoSlot;
  }
  const Slot s = tree_find(2 * node, p, cls);
  return s != kNoSlot ? s : tree_find(2 * node + 1, p, cls);
}

WaitQueue::Slot WaitQueue::first_in_queue_order(const CandidateProbe& p, Slot from) {
  assert(indexed());
  if (size_ == 0) return kNoSlot;
  if (stale_) renumber();
  if ((p.by_estimate || p.room < kNever) && !tree_.by_estimate) {
    tree_.by_estimate = true;
    tree_rebuild();
  }
  tree_flush();
  for (unsigned i = 0; i < p.n_more; ++i) p.more[i].klass = class_of(p.more[i].width);
  if (from == kNoSlot) return tree_find(1, p, class_of(p.free));
  assert(pool_[from].live);
  // The leaves are a power of two (grow), each node a range of positions.
  return tree_find_from(1, 0, tree_.leaves * kBlock, p, class_of(p.free), pool_[from].position);
}

// --- the SJBF index -----------------------------------------------------------------

std::uint32_t WaitQueue::sj_rank(std::int64_t width) {
  if (width >= 0 && std::uint64_t(width) < rank_of_width_.size() &&
      rank_of_width_[std::size_t(width)] != 0)
    return rank_of_width_[std::size_t(width)] - 1;
  const auto it = std::lower_bound(sj_.widths.begin(), sj_.widths.end(), width);
  const std::uint32_t r = std::uint32_t(it - sj_.widths.begin());
  if (it != sj_.widths.end() && *it == width) return r;
  // A new width: the ranks above it move up (rare: a log has few widths).
  sj_flush_all();  // the pending lists are per rank
  sj_.widths.insert(it, width);
  sj_.heaps.insert(sj_.heaps.begin() + r, std::vector<HeapItem>());
  sj_.pending.list.resize(sj_.heaps.size());  // (all empty: flushed above)
  sj_.pending.listed.resize(sj_.heaps.size(), 0);
  for (Slot s = 0; s < wrank_.size(); ++s)
    if ((pool_[s].live || pool_[s].is_run) && wrank_[s] >= r) ++wrank_[s];
  // Widths below 2^16 find their rank in a table (0: not in it). It grows
  // by doubling, and only the ranks from r up changed: rewriting the whole
  // table for each new width (up to 2^16 entries) was 3% of easy++ on CEA
  // Curie, whose jobs have 778 widths.
  constexpr std::size_t kTable = std::size_t(1) << 16;
  if (width >= 0 && std::uint64_t(width) < kTable && std::size_t(width) >= rank_of_width_.size())
    rank_of_width_.resize(std::min(kTable, std::max(std::size_t(width) + 1, 2 * rank_of_width_.size())), 0);
  for (std::uint32_t i = r; i < sj_.widths.size(); ++i) {
    const std::int64_t w = sj_.widths[i];
    if (w >= 0 && std::uint64_t(w) < rank_of_width_.size()) rank_of_width_[std::size_t(w)] = i + 1;
  }
  sj_rebuild_tree();
  se_.dirty = true;  // its columns are the ranks
  return r;
}

void WaitQueue::sj_rebuild_tree() const {
  std::uint32_t size = 1;
  while (size < sj_.widths.size()) size *= 2;
  sj_.size = size;
  sj_.best.assign(2 * std::size_t(size), kNone);
  for (std::uint32_t r = 0; r < sj_.widths.size(); ++r)
    if (!sj_.heaps[r].empty()) sj_.best[size + r] = sj_.heaps[r].front();
  for (std::uint32_t n = size - 1; n >= 1; --n) sj_.best[n] = first_of(sj_.best[2 * n], sj_.best[2 * n + 1]);
}

void WaitQueue::sj_rebuild_heaps() const {
  sj_.pending.discard();
  for (std::vector<HeapItem>& h : sj_.heaps) {
    for (HeapItem& it : h) {
      const Entry& e = pool_[it.slot];
      it.position = e.position;
      it.prediction = e.prediction;
      it.gen = e.gen;
    }
    std::make_heap(h.begin(), h.end(), HeapAfter());
    for (std::uint32_t i = 0; i < h.size(); ++i) hpos_[h[i].slot] = i;
  }
  sj_rebuild_tree();
  se_.dirty = true;  // its items hold positions
}

template <class InHeap>
void WaitQueue::refresh_heap(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Pending& p,
                             std::size_t heap, InHeap in_h) const {
  const std::vector<Slot>& list = p.list[heap];
  std::vector<std::uint8_t>& flag = p.flag;
  // (A listed slot may have left this heap and, reused, be pending in
  // another: only the flagged slots still in this one count.)
  auto here = [&](Slot s) { return flag[s] && in_h(s); };
  std::size_t n = 0;
  for (Slot s : list) n += here(s);
  std::size_t depth = 1;
  while ((std::size_t(1) << depth) <= h.size()) ++depth;
  if (n * depth > 3 * h.size()) {  // many: one heapify (about 2 comparisons an item)
    for (HeapItem& it : h) {
      const Entry& e = pool_[it.slot];
      it.prediction = e.prediction;
      it.gen = e.gen;
    }
    std::make_heap(h.begin(), h.end(), HeapAfter());
    for (std::uint32_t i = 0; i < h.size(); ++i) at[h[i].slot] = i;
    for (Slot s : list)
      if (here(s)) flag[s] = 0;
  } else {
    for (Slot s : list) {
      if (!here(s)) continue;
      flag[s] = 0;
      const Entry& e = pool_[s];
      heap_update(h, at, s, e.prediction, e.gen);
    }
  }
  p.done(heap);
}

void WaitQueue::sj_flush_rank(std::uint32_t r) const {
  refresh_heap(sj_.heaps[r], hpos_, sj_.pending, r, [&](Slot s) { return wrank_[s] == r; });
  sj_fix(r);
}

void WaitQueue::sj_flush_upto(std::uint32_t last) const {
  std::vector<std::uint32_t>& ranks = sj_.pending.heaps;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] <= last) sj_flush_rank(ranks[i]);
    else ranks[keep++] = ranks[i];
  }
  ranks.resize(keep);
}

void WaitQueue::sj_flush_all() const {
  for (std::uint32_t r : sj_.pending.heaps) sj_flush_rank(r);
  sj_.pending.heaps.clear();
}

void WaitQueue::sj_fix(std::uint32_t rank) const {
  std::uint32_t n = sj_.size + rank;
  const std::vector<HeapItem>& h = sj_.heaps[rank];
  sj_.best[n] = h.empty() ? kNone : h.front();
  for (n >>= 1; n >= 1; n >>= 1) {
    const HeapItem& w = first_of(sj_.best[2 * n], sj_.best[2 * n + 1]);
    HeapItem& cur = sj_.best[n];
    if (cur.slot == w.slot && cur.gen == w.gen && cur.prediction == w.prediction) break;
    cur = w;  // a winner that did not change changes nothing above
  }
}

void WaitQueue::sj_push(Slot s) {
  const Entry& e = pool_[s];
  if (wrank_.size() <= s) {
    wrank_.resize(pool_.size());
    hpos_.resize(pool_.size());
  }
  if (sj_.pending.flag.size() <= s) sj_.pending.flag.resize(pool_.size());
  sj_.pending.flag[s] = 0;  // pushed with its current value
  const std::uint32_t r = sj_rank(e.width);
  wrank_[s] = r;
  std::vector<HeapItem>& h = sj_.heaps[r];
  h.push_back(HeapItem{e.prediction, e.position, s, e.gen});
  if (heap_up(h, hpos_, std::uint32_t(h.size() - 1)) == 0) sj_fix(r);
  se_push(s);
}

// The heaps are kept by hand (each job's index in hpos_), so that a job
// re-predicted moves in place (at the next query of its rank) and a job
// leaving is taken out: no stale items (propagation re-predicts a user's
// whole queue at each finish).
std::uint32_t WaitQueue::heap_up(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at,
                                 std::uint32_t i) {
  const HeapItem it = h[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!better(it, h[parent])) break;
    h[i] = h[parent];
    at[h[i].slot] = i;
    i = parent;
  }
  h[i] = it;
  at[it.slot] = i;
  return i;
}

std::uint32_t WaitQueue::heap_down(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at,
                                   std::uint32_t i) {
  const std::uint32_t n = std::uint32_t(h.size());
  const HeapItem it = h[i];
  for (;;) {
    std::uint32_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && better(h[c + 1], h[c])) ++c;
    if (!better(h[c], it)) break;
    h[i] = h[c];
    at[h[i].slot] = i;
    i = c;
  }
  h[i] = it;
  at[it.slot] = i;
  return i;
}

bool WaitQueue::heap_remove(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Slot s) {
  const std::uint32_t i = at[s];
  assert(i < h.size() && h[i].slot == s);
  if (i >= h.size() || h[i].slot != s) return false;  // not there: touch no other job's item
  const HeapItem last = h.back();
  h.pop_back();
  if (i < h.size()) {
    h[i] = last;
    // (From below the top, the moved item never rises to it.)
    if (heap_up(h, at, i) == i) heap_down(h, at, i);
  }
  return i == 0;
}

bool WaitQueue::heap_set(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, const HeapItem& v) {
  const std::uint32_t i = at[v.slot];
  assert(i < h.size() && h[i].slot == v.slot);
  if (i >= h.size() || h[i].slot != v.slot) return false;
  h[i] = v;
  std::uint32_t to = heap_up(h, at, i);
  if (to == i) to = heap_down(h, at, i);
  return i == 0 || to == 0;
}

bool WaitQueue::heap_update(std::vector<HeapItem>& h, std::vector<std::uint32_t>& at, Slot s,
                            Time prediction, std::uint32_t gen) {
  const std::uint32_t i = at[s];
  assert(i < h.size() && h[i].slot == s);
  if (i >= h.size() || h[i].slot != s) return false;
  h[i].prediction = prediction;
  h[i].gen = gen;
  std::uint32_t to = heap_up(h, at, i);
  if (to == i) to = heap_down(h, at, i);
  return i == 0 || to == 0;
}

void WaitQueue::sj_remove(Slot s) {
  const std::uint32_t r = wrank_[s];
  sj_.pending.flag[s] = 0;  // (its heap, whose items all hold the values they were sifted with, stays valid)
  if (heap_remove(sj_.heaps[r], hpos_, s)) sj_fix(r);
}

// A rank or bucket no query reads (wider than every free width so far)
// would pile up listed slots: a slot that left its heap is listed again
// when reused. Its list is applied at once when it outgrows its heap, so
// memory stays linear in the queue (the values are the same either way).
static bool pending_too_long(std::size_t listed, std::size_t heap) {
  return listed > 2 * heap + 64;
}

void WaitQueue::sj_update(Slot s) {
  if (sj_.pending.flag[s]) return;  // the flush reads its entry
  const std::uint32_t r = wrank_[s];
  sj_.pending.mark(s, r);
  if (!pending_too_long(sj_.pending.list[r].size(), sj_.heaps[r].size())) return;
  sj_flush_rank(r);
  std::vector<std::uint32_t>& ranks = sj_.pending.heaps;
  ranks.erase(std::find(ranks.begin(), ranks.end(), r));
}

void WaitQueue::best_of_prefix(const HeapItem* tree, std::size_t leaves, std::size_t last,
                               HeapItem& best) {
  std::size_t lo = leaves, hi = leaves + last + 1;  // [lo, hi)
  while (lo < hi) {
    if (lo & 1) {
      if (better(tree[lo], best)) best = tree[lo];
      ++lo;
    }
    if (hi & 1) {
      --hi;
      if (better(tree[hi], best)) best = tree[hi];
    }
    lo >>= 1;
    hi >>= 1;
  }
}

WaitQueue::HeapItem WaitQueue::sj_best_upto(std::uint32_t last) const {
  HeapItem best = kNone;
  best_of_prefix(sj_.best.data(), sj_.size, last, best);
  return best;
}

WaitQueue::Slot WaitQueue::first_in_prediction_order(const CandidateProbe& p) {
  assert(order_ == BackfillOrder::ShortestPrediction);
  assert(p.n_more == 0);  // steps: the queue-order index only
  if (stale_) renumber();
  auto last_rank = [&](std::int64_t w) -> std::int64_t {
    return std::int64_t(std::upper_bound(sj_.widths.begin(), sj_.widths.end(), w) -
                        sj_.widths.begin()) - 1;
  };
  const std::int64_t rf = last_rank(p.free);
  if (rf < 0) return kNoSlot;
  if (!sj_.pending.heaps.empty()) sj_flush_upto(std::uint32_t(rf));
  const std::int64_t rg = last_rank(p.extra);
  assert(rg <= rf);  // extra <= free: the ranks read below were flushed above
  if (!p.by_estimate && p.room >= kNever) {
    const HeapItem a = sj_best_upto(std::uint32_t(rf));
    if (a.slot == kNoSlot) return kNoSlot;
    // The first job of width <= F in SJBF order has the smallest prediction
    // among them: if it fails test (a), they all do.
    if (a.prediction <= p.limit) return job_of(a.slot);
    const Slot b = rg < 0 ? kNoSlot : sj_best_upto(std::uint32_t(rg)).slot;
    return b == kNoSlot ? kNoSlot : job_of(b);
  }
  // By estimate: the first of width <= E (any estimate), or the first of
  // width <= F whose estimate class is the limit's or below, if it comes
  // before and its estimate is short enough. One that is not (in the
  // limit's own class) is too wide for E and too long: it cannot pass for
  // the rest of the pass (F and E only shrink, the limit stays), and is
  // hidden.
  // With a guard's room the same, the estimate's limit being limit + room,
  // and test (a) also needs the prediction within the limit: the first of
  // those classes in SJBF order has the smallest prediction among them, so
  // if it fails, they all do (as above) and only E is left. (Before the
  // room was indexed, the adapter refused each job whose estimate was too
  // long, one test each: on RICC 66 million tests under max-delay=86400.)
  const Time est_limit = p.by_estimate ? p.limit : p.limit + p.room;
  // First the width index alone: its first job of width <= F comes first
  // in SJBF order among all that may pass, so if it passes it is the
  // answer, and the estimate index is not read (its pending changes merge
  // until it is). One too long (and too wide for E: b comes first
  // otherwise) cannot pass for the rest of the pass: while the estimate
  // index waits for a rebuild (a new width came: CEA Curie under site
  // would rebuild it a thousand times), a few are hidden here first;
  // while it is up to date, it is read at once (hiding costs more than
  // reading it: RICC under site).
  const unsigned budget = se_.on && !se_.dirty ? 0 : kHideBeforeEstIndex;
  const HeapItem b = rg < 0 ? kNone : sj_best_upto(std::uint32_t(rg));
  for (unsigned hidden = 0;; ++hidden) {
    const HeapItem a = sj_best_upto(std::uint32_t(rf));
    if (a.slot == kNoSlot) return kNoSlot;
    if (!better(a, b)) return job_of(b.slot);  // (a is b: it passes by E)
    if (!p.by_estimate && a.prediction > p.limit) return b.slot == kNoSlot ? kNoSlot : job_of(b.slot);
    const Slot j = job_of(a.slot);
    if (pool_[j].estimate <= est_limit) return j;
    if (hidden == budget) break;
    hide(j);
  }
  if (se_.on && !se_.dirty && se_.waste > 4 * std::uint64_t(size_) + 1024) se_.dirty = true;
  if (!se_.on || se_.dirty) {
    se_.on = true;
    se_build();
  }
  se_flush();
  const std::uint32_t klass = se_class(est_limit);
  // (Hiding a job wider than E leaves b as it is, and b's run too: a run's
  // jobs share their width.)
  for (;;) {
    const HeapItem a = se_best(std::uint32_t(rf), klass);
    if (a.slot == kNoSlot || !better(a, b) || (!p.by_estimate && a.prediction > p.limit))
      return b.slot == kNoSlot ? kNoSlot : job_of(b.slot);
    const Slot j = job_of(a.slot);
    if (pool_[j].estimate <= est_limit) return j;
    ++se_.waste;
    hide(j);
    se_flush();
  }
}

// --- the SJBF index by estimate -------------------------------------------------------

std::uint32_t WaitQueue::se_class(Time estimate) const {
  const auto it = std::upper_bound(se_.bounds.begin() + 1, se_.bounds.end(), estimate);
  return std::uint32_t(it - se_.bounds.begin() - 1);
}

void WaitQueue::se_build() const {
  // The classes, from the live jobs' estimates.
  std::vector<Time> est;
  est.reserve(size_);
  for (const Entry& e : pool_)
    if (e.live) est.push_back(e.estimate);
  std::sort(est.begin(), est.end());
  se_.bounds.clear();
  std::vector<Time> values(est);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const std::size_t distinct = values.size();
  // At most kMaxEstCells cells: fewer classes when the widths are many
  // (Slurm CPU counts), more jobs of the limit's class then hidden one by
  // one.
  const std::uint32_t ranks = std::uint32_t(sj_.widths.size());
  se_.cols = 1;
  while (se_.cols < ranks) se_.cols *= 2;
  std::uint32_t max_classes = kMaxEstClasses;
  while (max_classes > 1 && 4 * std::size_t(max_classes) * se_.cols > kMaxEstCells) max_classes /= 2;
  if (distinct <= max_classes) {
    se_.bounds = std::move(values);
  } else {
    const std::size_t per = est.size() / max_classes + 1;
    for (std::size_t i = 0; i < est.size(); i += per)
      if (se_.bounds.empty() || est[i] != se_.bounds.back()) se_.bounds.push_back(est[i]);
  }
  if (se_.bounds.empty()) se_.bounds.push_back(0);
  se_.classes = std::uint32_t(se_.bounds.size());
  se_.rows = 1;
  while (se_.rows < se_.classes) se_.rows *= 2;
  se_.dirty = false;
  se_.waste = 0;
  const std::size_t buckets = std::size_t(ranks) * se_.classes;
  se_.bucket.assign(buckets, std::vector<HeapItem>());
  se_.changed.assign(buckets, 0);
  se_.pending.clear();
  // Built from the entries' current values: nothing pending.
  se_.stale.list.assign(buckets, std::vector<Slot>());
  se_.stale.listed.assign(buckets, 0);
  se_.stale.heaps.clear();
  se_.stale.flag.assign(pool_.size(), 0);
  if (se_.klass.size() < pool_.size()) se_.klass.resize(pool_.size());
  // (The classes come from the jobs; the runs' entries stand for theirs in
  // the buckets.)
  for (Slot s = 0; s < pool_.size(); ++s) {
    const Entry& e = pool_[s];
    if (e.is_run) {
      if (!runs_[std::size_t(e.handle)].in_heaps) continue;
    } else if (!e.live) {
      continue;
    }
    se_.klass[s] = se_class(e.estimate);
    if (e.hidden || in_run(s)) continue;  // pushed again by unhide_all(); in its run's item
    const std::size_t b = std::size_t(wrank_[s]) * se_.classes + se_.klass[s];
    se_.bucket[b].push_back(HeapItem{e.prediction, e.position, s, e.gen});
  }
  if (se_.bpos.size() < pool_.size()) se_.bpos.resize(pool_.size());
  const std::size_t w2 = 2 * std::size_t(se_.cols);
  se_.cell.assign(2 * std::size_t(se_.rows) * w2, kNone);
  auto cell = [&](std::size_t row, std::size_t col) -> HeapItem& { return se_.cell[row * w2 + col]; };
  for (std::uint32_t r = 0; r < ranks; ++r) {
    for (std::uint32_t k = 0; k < se_.classes; ++k) {
      std::vector<HeapItem>& h = se_.bucket[std::size_t(r) * se_.classes + k];
      if (h.empty()) continue;
      std::make_heap(h.begin(), h.end(), HeapAfter());
      for (std::uint32_t i = 0; i < h.size(); ++i) se_.bpos[h[i].slot] = i;
      cell(se_.rows + k, se_.cols + r) = h.front();
    }
  }
  for (std::size_t row = se_.rows; row < 2 * std::size_t(se_.rows); ++row)
    for (std::size_t c = se_.cols - 1; c >= 1; --c)
      cell(row, c) = first_of(cell(row, 2 * c), cell(row, 2 * c + 1));
  for (std::size_t row = se_.rows - 1; row >= 1; --row)
    for (std::size_t c = 1; c < w2; ++c)
      cell(row, c) = first_of(cell(2 * row, c), cell(2 * row + 1, c));
}

void WaitQueue::se_changed(std::size_t b) const {
  if (se_.changed[b]) return;
  se_.changed[b] = 1;
  se_.pending.push_back(std::uint32_t(b));
}

void WaitQueue::se_push(Slot s) const {
  if (!se_.on || se_.dirty) return;
  const Entry& e = pool_[s];
  if (se_.klass.size() < pool_.size()) {
    se_.klass.resize(pool_.size());
    se_.bpos.resize(pool_.size());
  }
  const std::uint32_t k = se_class(e.estimate);
  se_.klass[s] = k;
  if (se_.stale.flag.size() <= s) se_.stale.flag.resize(pool_.size());
  se_.stale.flag[s] = 0;  // pushed with its current value
  const std::size_t b = std::size_t(wrank_[s]) * se_.classes + k;
  std::vector<HeapItem>& h = se_.bucket[b];
  h.push_back(HeapItem{e.prediction, e.position, s, e.gen});
  if (heap_up(h, se_.bpos, std::uint32_t(h.size() - 1)) == 0) se_changed(b);
}

void WaitQueue::se_remove(Slot s) const {
  if (!se_.on || se_.dirty) return;
  const std::size_t b = std::size_t(wrank_[s]) * se_.classes + se_.klass[s];
  se_.stale.flag[s] = 0;
  if (heap_remove(se_.bucket[b], se_.bpos, s)) se_changed(b);
}

void WaitQueue::se_update(Slot s) const {
  if (!se_.on || se_.dirty || se_.stale.flag[s]) return;
  const std::size_t b = std::size_t(wrank_[s]) * se_.classes + se_.klass[s];
  se_.stale.mark(s, b);
  if (!pending_too_long(se_.stale.list[b].size(), se_.bucket[b].size())) return;
  refresh_heap(se_.bucket[b], se_.bpos, se_.stale, b, [&](Slot x) {
    return std::size_t(wrank_[x]) * se_.classes + se_.klass[x] == b;
  });
  se_changed(b);
  std::vector<std::uint32_t>& buckets = se_.stale.heaps;
  buckets.erase(std::find(buckets.begin(), buckets.end(), std::uint32_t(b)));
}

void WaitQueue::se_flush() const {
  for (const std::uint32_t b : se_.stale.heaps) {
    refresh_heap(se_.bucket[b], se_.bpos, se_.stale, b, [&](Slot s) {
      return std::size_t(wrank_[s]) * se_.classes + se_.klass[s] == b;
    });
    se_changed(b);
  }
  se_.stale.heaps.clear();
  const std::size_t w2 = 2 * std::size_t(se_.cols);
  auto cell = [&](std::size_t row, std::size_t col) -> HeapItem& { return se_.cell[row * w2 + col]; };
  for (const std::uint32_t b : se_.pending) {
    se_.changed[b] = 0;
    const std::vector<HeapItem>& h = se_.bucket[b];
    const std::size_t rank = b / se_.classes, klass = b % se_.classes;
    std::size_t row = se_.rows + klass;
    const std::size_t leaf = se_.cols + rank;
    const HeapItem top = h.empty() ? kNone : h.front();
    HeapItem& at = cell(row, leaf);
    if (at.slot == top.slot && at.gen == top.gen && at.prediction == top.prediction) continue;
    at = top;
    for (std::size_t c = leaf >> 1; c >= 1; c >>= 1)
      cell(row, c) = first_of(cell(row, 2 * c), cell(row, 2 * c + 1));
    for (row >>= 1; row >= 1; row >>= 1)
      for (std::size_t c = leaf; c >= 1; c >>= 1)
        cell(row, c) = first_of(cell(2 * row, c), cell(2 * row + 1, c));
  }
  se_.pending.clear();
}

WaitQueue::HeapItem WaitQueue::se_best(std::uint32_t last_rank, std::uint32_t last_class) const {
  const std::size_t w2 = 2 * std::size_t(se_.cols);
  HeapItem best = kNone;
  auto row_best = [&](std::size_t row) { best_of_prefix(&se_.cell[row * w2], se_.cols, last_rank, best); };
  std::size_t lo = se_.rows, hi = se_.rows + std::size_t(last_class) + 1;
  while (lo < hi) {
    if (lo & 1) row_best(lo++);
    if (hi & 1) row_best(--hi);
    lo >>= 1;
    hi >>= 1;
  }
  return best;
}

// --- hiding refused candidates for the rest of a pass --------------------------------

void WaitQueue::hide(Slot s) {
  Entry& e = pool_[s];
  assert(e.live && !e.hidden);
  if (!e.live || e.hidden) return;
  if (order_ == BackfillOrder::ShortestPrediction) {
    // Out of its heaps; unhide_all() pushes it again.
    e.hidden = true;
    ++e.gen;
    sj_.popped.emplace_back(s, e.gen);
    sj_leave(s);
    return;
  }
  e.hidden = true;
  hidden_.push_back(s);
  if (indexed()) {
    set_cell(e.position, s);
    tree_touch(e.position);
  }
}

void WaitQueue::unhide_all() {
  for (Slot s : hidden_) {
    Entry& e = pool_[s];
    if (!e.hidden) continue;
    e.hidden = false;
    if (e.live && indexed()) {
      set_cell(e.position, s);
      tree_touch(e.position);
    }
  }
  hidden_.clear();
  for (const auto& [s, gen] : sj_.popped) {
    Entry& e = pool_[s];
    if (!e.live || e.gen != gen) continue;
    e.hidden = false;
    sj_enter(s);
  }
  sj_.popped.clear();
}

}  // namespace easypp
