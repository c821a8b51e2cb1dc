// Selective reservations in the harness: the paper's derived thresholds and
// its fairness by fair start time (selective_metrics.h).
#include "easypp/sim/selective_metrics.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <vector>
#include <utility>

#include "easypp/sim/metrics.h"

namespace easypp {

std::array<double, 5> derive_selective_thresholds(const Workload& w, const SimOptions& sim,
                                                  Time short_limit, std::int64_t narrow,
                                                  const SchedulerConfig* own) {
  SchedulerConfig cons = *preset("conservative");
  if (own != nullptr) {
    cons = *own;
    cons.name = own->name + " (conservative, for its thresholds)";
    cons.policy.selective = Selective{};
    cons.policy.reservations = 0;  // all
  }
  const RunResult r = Simulator(w, cons, sim).run();
  const MeasuredSet measured(w, r, MetricsOptions{});
  std::array<double, 5> sum = {0, 0, 0, 0, 0};
  std::array<std::uint64_t, 5> n = {0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const Job& j = w.jobs[i];
    if (!measured(i) || j.estimate <= 0) continue;
    // Well estimated: the runtime within a factor of two of the estimate.
    if (2 * j.runtime < j.estimate || j.runtime > 2 * j.estimate) continue;
    const double b = bounded_slowdown(r.jobs[i].start - j.submit, j.runtime);
    const auto c = std::size_t(1 + Selective::category(j.runtime, j.size, short_limit, narrow));
    sum[0] += b, ++n[0];
    sum[c] += b, ++n[c];
  }
  std::array<double, 5> t;
  for (std::size_t c = 0; c < 5; ++c) t[c] = n[c] ? std::max(1.0, sum[c] / double(n[c])) : 1.0;
  return t;
}

void resolve_selective_thresholds(const Workload& w, const SimOptions& sim,
                                  std::vector<SchedulerConfig>& cfgs) {
  std::map<std::pair<Time, std::int64_t>, std::array<double, 5>> derived;
  for (SchedulerConfig& c : cfgs) {
    Selective& s = c.policy.selective;
    if (s.mode != Selective::Mode::Derive) continue;
    std::array<double, 5> own;
    const std::array<double, 5>* found = nullptr;
    if (s.derive_own) {  // planned as this scheduler: one replay each
      own = derive_selective_thresholds(w, sim, s.short_limit, s.narrow_width, &c);
      found = &own;
    } else {
      const auto key = std::make_pair(s.short_limit, s.narrow_width);
      auto it = derived.find(key);
      if (it == derived.end())
        it = derived.emplace(key, derive_selective_thresholds(w, sim, key.first, key.second)).first;
      found = &it->second;
    }
    const std::array<double, 5>& t = *found;
    s.mode = Selective::Mode::Given;
    s.threshold = s.per_category ? std::array<double, 4>{t[1], t[2], t[3], t[4]}
                                 : std::array<double, 4>{t[0], t[0], t[0], t[0]};
  }
}

// Each arrival replays FCFS without backfilling over the whole queue ahead
// of it: O(queue) per arrival, and RICC's queue reaches 32,429 jobs. Exact
// savings (every release taken in the same order, so the same values):
//   - the walk of the last arrival is kept and continued by one job for the
//     next arrival when nothing started or ended between the two and the
//     walk does not depend on the arrival time: same time, or its first
//     placement (and so every later one) lies at or after the new arrival
//     time (the first job had to wait for a release then, and releases do
//     not depend on the arrival time);
//   - the running jobs' releases are kept sorted across arrivals and a walk
//     reads them in place, merged with a heap of only the releases of the
//     jobs it places (the heap of everything was rebuilt at every arrival).
//     They are two sorted vectors: the many, and the few of the latest
//     starts, merged into the many once they are kFresh. Inserting each
//     start into one vector moved O(running) releases (75-84% of LCG's
//     report, thousands of jobs running); a tree instead made RICC's walks,
//     which read long stretches of it, 18% slower;
//   - the waiting jobs are a vector in arrival order with started jobs
//     marked and compacted away now and then, not a tree.
std::vector<Time> fair_start_times(const Workload& w, const RunResult& r) {
  const std::size_t n = w.jobs.size();
  std::vector<Time> fair(n, -1);
  std::vector<std::uint32_t> by_start;
  by_start.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i)
    if (r.jobs[i].start >= 0) by_start.push_back(i);
  std::sort(by_start.begin(), by_start.end(), [&](std::uint32_t a, std::uint32_t b) {
    return r.jobs[a].start != r.jobs[b].start ? r.jobs[a].start < r.jobs[b].start : a < b;
  });
  using Release = std::pair<Time, std::int64_t>;  // (end, processors)
  // The live releases, ascending: running[head..] and fresh[fhead..].
  constexpr std::size_t kFresh = 256;
  std::vector<Release> running, fresh, merged;
  std::size_t head = 0, fhead = 0;
  std::vector<std::uint32_t> waiting;    // queue order: arrival
  std::vector<std::uint8_t> gone(n, 0);  // started (still listed in `waiting`)
  std::size_t gone_listed = 0;
  std::int64_t used = 0;
  std::size_t next_start = 0;
  std::vector<Release> heap;  // min-heap: releases of the jobs the walk placed
  // The kept walk: it stopped at job `last` (placed at fair[last]) with
  // `free` processors, running[cursor..], fresh[fcursor..] and `heap`
  // pending; its first placement at `first`.
  bool kept = false;
  std::uint32_t last = 0;
  Time kept_t = 0, first = 0;
  std::int64_t free = 0;
  std::size_t cursor = 0, fcursor = 0;
  // The next release in (end, processors) order, as one heap of both held.
  auto take = [&](Release& out) {
    // (equal releases may come in any order: they are the same value)
    const Release* r = cursor < running.size() ? &running[cursor] : nullptr;
    const bool from_fresh = fcursor < fresh.size() && (r == nullptr || fresh[fcursor] < *r);
    if (from_fresh) r = &fresh[fcursor];
    if (!heap.empty() && (r == nullptr || heap.front() < *r)) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<Release>());
      out = heap.back();
      heap.pop_back();
      return true;
    }
    if (r == nullptr) return false;
    out = *r;
    ++(from_fresh ? fcursor : cursor);
    return true;
  };
  auto place = [&](std::int64_t size, Time s) {  // when a job of `size` starts, from s on
    Release rel;
    while (free < size && take(rel)) {
      s = std::max(s, rel.first);
      free += rel.second;
    }
    return s;
  };
  for (std::uint32_t j = 0; j < n; ++j) {
    const Time t = w.jobs[j].submit;
    // The snapshot at j's arrival: the scheduler ends jobs, then takes
    // arrivals, then starts jobs (simulator.h), so a job that starts at t
    // is still waiting and one that ends at t has gone.
    while (next_start < by_start.size() && r.jobs[by_start[next_start]].start < t) {
      const std::uint32_t k = by_start[next_start++];
      if (k < j) {  // a job can start before its arrival only in a broken run
        gone[k] = 1;
        ++gone_listed;
      }
      const Release rel(r.jobs[k].start + w.jobs[k].runtime, w.jobs[k].size);
      fresh.insert(std::upper_bound(fresh.begin() + std::ptrdiff_t(fhead), fresh.end(), rel), rel);
      if (fresh.size() - fhead >= kFresh) {  // into the many
        merged.clear();
        std::merge(running.begin() + std::ptrdiff_t(head), running.end(),
                   fresh.begin() + std::ptrdiff_t(fhead), fresh.end(), std::back_inserter(merged));
        running.swap(merged);
        head = 0;
        fresh.clear();
        fhead = 0;
      }
      used += w.jobs[k].size;
      kept = false;
    }
    while (head < running.size() && running[head].first <= t) {
      used -= running[head++].second;
      kept = false;
    }
    while (fhead < fresh.size() && fresh[fhead].first <= t) {
      used -= fresh[fhead++].second;
      kept = false;
    }
    if (head > 1024 && 2 * head > running.size()) {
      running.erase(running.begin(), running.begin() + std::ptrdiff_t(head));
      head = 0;
      kept = false;  // the cursor moved
    }
    if (fhead >= kFresh) {  // (short jobs end before kFresh more start)
      fresh.erase(fresh.begin(), fresh.begin() + std::ptrdiff_t(fhead));
      fhead = 0;
      kept = false;
    }
    if (gone_listed > 64 && 2 * gone_listed > waiting.size()) {
      std::size_t keep = 0;
      for (const std::uint32_t k : waiting)
        if (!gone[k]) waiting[keep++] = k;
      waiting.resize(keep);
      gone_listed = 0;
    }
    waiting.push_back(j);
    if (kept && (t == kept_t || first >= t)) {
      // Continue the last walk: place `last` as a job ahead, then j.
      heap.emplace_back(fair[last] + w.jobs[last].runtime, w.jobs[last].size);
      std::push_heap(heap.begin(), heap.end(), std::greater<Release>());
      free -= w.jobs[last].size;
      fair[j] = place(w.jobs[j].size, fair[last]);
      last = j;
      continue;
    }
    // FCFS without backfilling from t, with the actual runtimes.
    heap.clear();
    cursor = head;
    fcursor = fhead;
    free = w.procs - used;
    Time prev = t;
    bool placed = false;
    for (const std::uint32_t k : waiting) {
      if (gone[k]) continue;
      const std::int64_t size = w.jobs[k].size;
      const Time s = place(size, prev);
      if (!placed) first = s, placed = true;
      if (k == j) {
        fair[j] = s;
        break;
      }
      heap.emplace_back(s + w.jobs[k].runtime, size);
      std::push_heap(heap.begin(), heap.end(), std::greater<Release>());
      free -= size;
      prev = s;
    }
    kept = true;
    kept_t = t;
    last = j;
  }
  return fair;
}

}  // namespace easypp
