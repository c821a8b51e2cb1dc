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
  running_.erase(Run{old_end, h, size});
  running_.insert(Run{new_end, h, size});
}

ProcResources::RunSet::const_iterator ProcResources::first_holding(std::int64_t need,
                                                                  std::int64_t* held) const {
  auto node = running_.node_begin();
  const auto end = running_.node_end();
  std::int64_t acc = 0;
  while (node != end) {
    const auto l = node.get_l_child();
    const std::int64_t in_left = l != end ? l.get_metadata() : 0;
    if (acc + in_left >= need) {
      node = l;
      continue;
    }
    acc += in_left + (**node).size;
    if (acc >= need) {
      *held = acc;
      return *node;
    }
    node = node.get_r_child();
  }
  return running_.end();
}

void ProcResources::begin_pass(Time now) {
  now_ = now;
  nres_ = 0;
  shadow_ = kNever;
  extra_ = 0;
  profile_ = false;
  segs_.clear();
}

// The availability profile: segs_[i].free processors on [segs_[i].t,
// segs_[i+1].t), the last segment open-ended. Predicted ends already in the
// past count as released just after `now` (jobs starting now are checked
// against the actual free processors separately).
void ProcResources::build_profile() {
  segs_.clear();
  std::int64_t avail = free_;
  auto r = running_.begin();
  for (; r != running_.end() && r->end <= now_; ++r) avail += r->size;
  segs_.push_back(Seg{now_, avail});
  for (; r != running_.end(); ++r) {
    avail += r->size;
    if (segs_.back().t == r->end)
      segs_.back().free = avail;
    else
      segs_.push_back(Seg{r->end, avail});
  }
  profile_ = true;
  // The head's reservation, made in the cheap shadow/extra form.
  if (nres_ >= 1 && head_shadow_ < kNever) {
    const Time t0 = std::max(head_shadow_, now_);
    const std::size_t a = split_at(t0), b = split_at(t0 + head_duration_);
    for (std::size_t i = a; i < b; ++i) segs_[i].free -= head_size_;
  }
}

std::size_t ProcResources::split_at(Time t) {
  // First segment starting after t, then step back to the one containing t.
  auto it = std::upper_bound(segs_.begin(), segs_.end(), t,
                             [](Time v, const Seg& s) { return v < s.t; });
  assert(it != segs_.begin());
  const std::size_t i = std::size_t(it - segs_.begin()) - 1;
  if (segs_[i].t == t) return i;
  segs_.insert(segs_.begin() + std::ptrdiff_t(i) + 1, Seg{t, segs_[i].free});
  return i + 1;
}

Time ProcResources::reserve(std::int64_t size, Time duration) {
  duration = std::max<Time>(duration, 1);
  if (nres_ == 0) {
    // EASY: walk running jobs by predicted end until the job fits.
    std::int64_t avail = free_;
    shadow_ = kNever;
    extra_ = 0;
    if (version_ == cached_version_ && size == cached_size_) {
      shadow_ = cached_shadow_;
      extra_ = cached_extra_;
    } else if (avail >= size) {
      shadow_ = now_;
      extra_ = avail - size;
    } else {
      std::int64_t held = 0;
      const auto r = first_holding(size - avail, &held);
      if (r != running_.end()) {
        shadow_ = r->end;
        extra_ = avail + held - size;
      }
    }
    cached_version_ = version_;
    cached_size_ = size;
    cached_shadow_ = shadow_;
    cached_extra_ = extra_;
    head_shadow_ = shadow_;
    head_size_ = size;
    head_duration_ = duration;
    nres_ = 1;
    return shadow_;
  }
  // Deeper reservations (conservative): earliest hole in the profile.
  if (!profile_) build_profile();
  ++nres_;
  std::size_t i = 0;
  while (i < segs_.size()) {
    const Time t0 = segs_[i].t;
    std::size_t j = i;
    bool ok = true;
    for (; j < segs_.size() && segs_[j].t < t0 + duration; ++j) {
      if (segs_[j].free < size) {
        ok = false;
        break;
      }
    }
    if (ok) {
      const std::size_t a = split_at(t0), b = split_at(t0 + duration);
      for (std::size_t k = a; k < b; ++k) segs_[k].free -= size;
      return t0;
    }
    i = j + 1;
  }
  return kNever;  // wider than the machine
}

bool ProcResources::may_backfill(std::int64_t size, Time end_bound) const {
  if (size > free_) return false;
  if (nres_ == 0) return true;
  if (!profile_) return end_bound <= shadow_ || size <= extra_;
  for (std::size_t i = 0; i < segs_.size() && segs_[i].t < end_bound; ++i)
    if (segs_[i].free < size) return false;
  return true;
}

void ProcResources::start(JobHandle h, std::int64_t size, Time end_bound, Time predicted_end) {
  ++version_;
  free_ -= size;
  if (nres_ >= 1) {
    if (!profile_) {
      if (end_bound > shadow_) extra_ -= size;
    } else {
      // Held until end_bound, as may_backfill() checked: under the safe rule
      // that is the estimate, and later reservations of this pass must not
      // plan on these processors before it.
      const std::size_t a = 0, b = split_at(std::max(end_bound, now_ + 1));
      for (std::size_t k = a; k < b; ++k) segs_[k].free -= size;
    }
  }
  running_.insert(Run{predicted_end, h, size});
}

}  // namespace easypp
