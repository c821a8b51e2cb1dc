#include "easypp/sim/proc_resources.h"

#include <algorithm>
#include <cassert>

namespace easypp {

void ProcResources::remove_running(JobHandle h, std::int64_t size, Time predicted_end) {
  ++version_;
  [[maybe_unused]] const bool erased = running_.erase(Run{predicted_end, h, size});
  assert(erased);
  free_ += size;
}

void ProcResources::move_predicted_end(JobHandle h, std::int64_t size, Time old_end,
                                       Time new_end) {
  ++version_;
  [[maybe_unused]] const bool erased = running_.erase(Run{old_end, h, size});
  assert(erased);
  running_.insert(Run{new_end, h, size});
}

// --- the running jobs by predicted end -------------------------------------------------

std::size_t ProcResources::RunsByEnd::block_of(const Run& r) const {
  std::size_t lo = 0, hi = blocks_.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (blocks_[mid].runs.back() < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void ProcResources::RunsByEnd::insert(const Run& r) {
  if (blocks_.empty()) {
    blocks_.emplace_back();
    blocks_.back().runs.push_back(r);
    blocks_.back().procs = r.size;
    ++size_;
    return;
  }
  std::size_t b = block_of(r);
  if (b == blocks_.size()) --b;  // beyond every run: the last block
  Block& blk = blocks_[b];
  blk.runs.insert(std::upper_bound(blk.runs.begin(), blk.runs.end(), r), r);
  blk.procs += r.size;
  ++size_;
  if (blk.runs.size() > 2 * kBlock) {  // split in two
    Block upper;
    upper.runs.assign(blk.runs.begin() + std::ptrdiff_t(kBlock), blk.runs.end());
    blk.runs.resize(kBlock);
    for (const Run& x : upper.runs) upper.procs += x.size;
    blk.procs -= upper.procs;
    blocks_.insert(blocks_.begin() + std::ptrdiff_t(b) + 1, std::move(upper));
  }
}

bool ProcResources::RunsByEnd::erase(const Run& r) {
  const std::size_t b = block_of(r);
  if (b == blocks_.size()) return false;
  Block& blk = blocks_[b];
  const auto it = std::lower_bound(blk.runs.begin(), blk.runs.end(), r);
  if (it == blk.runs.end() || it->h != r.h || it->end != r.end) return false;
  blk.procs -= it->size;
  blk.runs.erase(it);
  --size_;
  if (blk.runs.empty()) blocks_.erase(blocks_.begin() + std::ptrdiff_t(b));
  return true;
}

bool ProcResources::RunsByEnd::first_holding(std::int64_t need, Run* run,
                                             std::int64_t* held) const {
  std::int64_t acc = 0;
  for (const Block& blk : blocks_) {
    if (acc + blk.procs < need) {
      acc += blk.procs;
      continue;
    }
    for (const Run& r : blk.runs) {
      acc += r.size;
      if (acc >= need) {
        *run = r;
        *held = acc;
        return true;
      }
    }
  }
  return false;
}

void ProcResources::begin_pass(Time now) {
  ++pass_;  // forgets the hints
  now_ = now;
  nres_ = 0;
  shadow_ = kNever;
  extra_ = 0;
  profile_ = false;
  segs_.clear();
  stack_ = Stack{};
  held_.clear();
  pass_version_ = version_;
  at_now_ = false;
}

bool ProcResources::continue_pass(Time now) {
  if (version_ != pass_version_ || now < now_ || !held_.empty()) return false;
  const Time last = now_;
  now_ = now;  // (head_fit() reads it)
  if (nres_ == 1 && !profile_) {
    // The head's shadow form, as a pass would find it now: the jobs this
    // pass started run now, and the walk counts runs up to the one that
    // makes the head fit, so one that ends exactly at the shadow time may
    // count or not and the extra differ from what the last pass left.
    Time shadow;
    std::int64_t extra;
    head_fit(head_size_, &shadow, &extra);
    if (shadow != shadow_ || extra != extra_) {
      now_ = last;
      return false;
    }
  }
  if (profile_) {
    if (at_now_ || (segs_.size() > 1 && segs_[1].t <= now)) {
      now_ = last;
      return false;
    }
    segs_[0].t = now;
  }
  return true;
}

// The availability profile: segs_[i].free processors on [segs_[i].t,
// segs_[i+1].t), the last segment open-ended. Predicted ends already in the
// past count as released just after `now` (jobs starting now are checked
// against the actual free processors separately).
void ProcResources::build_profile() {
  segs_.clear();
  std::int64_t avail = free_;
  segs_.push_back(Seg{now_, avail});
  running_.for_each([&](const Run& r) {
    avail += r.size;
    if (r.end <= now_ || segs_.back().t == r.end)
      segs_.back().free = avail;
    else
      segs_.push_back(Seg{r.end, avail});
  });
  profile_ = true;
  // The head's reservation, made in the cheap shadow/extra form.
  if (nres_ >= 1 && head_shadow_ < kNever) {
    const Time t0 = std::max(head_shadow_, now_);
    if (t0 == now_) at_now_ = true;
    hold(t0, t0 + head_duration_, head_size_);
  }
  // Jobs started in this pass before the profile, held past their
  // predicted ends (safe backfilling: until their estimates).
  for (const Held& h : held_) hold(std::max(h.from, now_), h.to, h.size);
}

std::size_t ProcResources::segment_of(Time t) const {
  const auto it = std::upper_bound(segs_.begin(), segs_.end(), t,
                                   [](Time v, const Seg& s) { return v < s.t; });
  assert(it != segs_.begin());
  return std::size_t(it - segs_.begin()) - 1;
}

void ProcResources::hold(Time from, Time to, std::int64_t size) {
  const std::size_t a = split_at(from), b = split_at(to);
  for (std::size_t k = a; k < b; ++k) segs_[k].free -= size;
}

std::size_t ProcResources::split_at(Time t) {
  const std::size_t i = segment_of(t);
  if (segs_[i].t == t) return i;
  segs_.insert(segs_.begin() + std::ptrdiff_t(i) + 1, Seg{t, segs_[i].free});
  return i + 1;
}

// EASY: walk running jobs by predicted end until the job fits (cached while
// the running set and the size are the same).
inline void ProcResources::head_fit(std::int64_t size, Time* shadow, std::int64_t* extra) {
  if (version_ == cached_version_ && size == cached_size_) {
    *shadow = cached_shadow_;
    *extra = cached_extra_;
    return;
  }
  const std::int64_t avail = free_;
  *shadow = kNever;
  *extra = 0;
  if (avail >= size) {
    *shadow = now_;
    *extra = avail - size;
  } else {
    std::int64_t held = 0;
    Run r{};
    if (running_.first_holding(size - avail, &r, &held)) {
      *shadow = r.end;
      *extra = avail + held - size;
    }
  }
  cached_version_ = version_;
  cached_size_ = size;
  cached_shadow_ = *shadow;
  cached_extra_ = *extra;
}

Time ProcResources::reserve(std::int64_t size, Time duration) {
  duration = std::max<Time>(duration, 1);
  if (nres_ == 0) {
    head_fit(size, &shadow_, &extra_);
    head_shadow_ = shadow_;
    head_size_ = size;
    head_duration_ = duration;
    nres_ = 1;
    return shadow_;
  }
  // Deeper reservations (conservative): earliest hole in the profile.
  if (!profile_) build_profile();
  ++nres_;
  // Within a pass the profile only loses processors, so a job of the same
  // size and duration as one reserved earlier in the pass cannot fit before
  // that one's start: the search begins there (queues hold runs of
  // identical jobs, and each would otherwise walk the same full stretch).
  Hint& hint = hints_[hint_slot(size, duration)];
  if (stack_.on && stack_.size == size && stack_.duration == duration && stack_.room >= size) {
    stack_.room -= size;
    stack_.pending += size;
    return segs_[stack_.i].t;  // this shape's hint
  }
  settle();
  stack_.on = false;
  std::size_t i = 0;
  if (hint.is(pass_, size, duration)) {
    if (hint.start >= kNever) return kNever;
    i = segment_of(hint.start);
  }
  Time found = kNever;
  std::size_t j = i;
  const std::size_t n = segs_.size();
  while (i < n) {
    // (a window cannot start in a segment too full for it: most of a
    // crowded profile, passed over in a tight loop)
    while (i < n && segs_[i].free < size) ++i;
    if (i == n) break;
    const Time t0 = segs_[i].t;
    j = i;
    bool ok = true;
    for (++j; j < n && segs_[j].t < t0 + duration; ++j) {
      if (segs_[j].free < size) {
        ok = false;
        break;
      }
    }
    if (ok) {
      found = t0;
      break;
    }
    i = j + 1;
  }
  hint = Hint{pass_, size, duration, found};
  if (found >= kNever) return kNever;  // wider than the machine
  if (found == now_) at_now_ = true;
  // hold(found, found + duration, size), knowing where: segment i starts
  // at found, and j is the first at or after its end (j > i).
  const Time end = found + duration;
  if (j == segs_.size() || segs_[j].t != end)
    segs_.insert(segs_.begin() + std::ptrdiff_t(j), Seg{end, segs_[j - 1].free});
  std::int64_t room = total_;
  for (std::size_t k = i; k < j; ++k) room = std::min(room, segs_[k].free -= size);
  stack_ = Stack{true, size, duration, i, j, room, 0};
  return found;
}

bool ProcResources::may_backfill(std::int64_t size, Time end_bound) const {
  if (size > free_) return false;
  if (nres_ == 0) return true;
  if (!profile_) return end_bound <= shadow_ || size <= extra_;
  settle();
  // A job of this shape found no room before a later start in this pass:
  // none now either (reserve's argument).
  const Time duration = end_bound - now_;
  if (duration >= 1) {
    const Hint& hint = hints_[hint_slot(size, duration)];
    if (hint.is(pass_, size, duration) && hint.start > now_) return false;
  }
  for (std::size_t i = 0; i < segs_.size() && segs_[i].t < end_bound; ++i)
    if (segs_[i].free < size) return false;
  return true;
}

StartLimits ProcResources::start_limits() const {
  StartLimits l;
  l.free = start_width();
  l.limit = kNever;
  l.extra = l.free;
  // Before the profile exists (no reservation, or the head's alone in its
  // shadow/extra form) only the free processors bound it: the profile,
  // once built, is exact and may accept what the shadow/extra form refused
  // (its extra counts one of several runs ending at the shadow time).
  if (!profile_) return l;
  // The least free over [now, t) drops at some segments: a job as wide as
  // it was before a drop may last until the drop. Consecutive drops are
  // merged into one step (the first's width, the last's time) while the
  // width stays above half the step's, so that a few steps cover the
  // profile; past the last step only a job no wider than the least free so
  // far can start (extra). The walk goes on to the profile's end (or until
  // nothing is free): stopped earlier, `extra` would let in narrow long
  // jobs that meet a drop further on, and a run of identical ones is then
  // found, asked and refused one by one (RICC conservative, a 256-segment
  // cut-off: 65.2 million jobs asked, 64.4 million of them refused by
  // may_backfill's hint; the whole walk: 1.0 million asked, CPU halved).
  std::int64_t least = l.free;  // the least free on [now, segs_[i].t)
  std::int64_t width = l.free;  // the open step's width
  Time until = kNever;          // the open step's limit (kNever: no drop yet)
  unsigned n = 0;               // steps closed: the first is free/limit
  auto close = [&] {
    if (n == 0) l.limit = until;
    else l.steps[n - 1] = StartLimits::Step{width, until};
    ++n;
  };
  for (std::size_t i = 1; i < segs_.size() && least > 0; ++i) {
    if (segs_[i].free >= least) continue;
    if (until < kNever && 2 * least < width) {  // `least` opens a step of its own
      if (n == StartLimits::kMaxSteps) break;   // no room: the rest is extra
      close();
      width = least;
    }
    until = segs_[i].t - now_;
    least = segs_[i].free;
  }
  if (until < kNever) close();
  l.n_steps = n > 0 ? n - 1 : 0;
  l.extra = std::max<std::int64_t>(least, 0);
  return l;
}

void ProcResources::start(JobHandle h, std::int64_t size, Time end_bound, Time predicted_end) {
  pass_version_ = ++version_;
  free_ -= size;
  if (nres_ >= 1) {
    if (!profile_) {
      if (end_bound > shadow_) extra_ -= size;
      // The profile, if this pass builds one, releases the job at its
      // predicted end (the running set's); it must hold it until end_bound
      // as below.
      if (end_bound > predicted_end) held_.push_back(Held{size, predicted_end, end_bound});
    } else {
      // Held until end_bound, as may_backfill() checked: under the safe rule
      // that is the estimate, and later reservations of this pass must not
      // plan on these processors before it.
      settle();
      stack_.on = false;  // (hold moves the segments)
      hold(now_, std::max(end_bound, now_ + 1), size);
    }
  }
  running_.insert(Run{predicted_end, h, size});
}

}  // namespace easypp
