// The plugin's resource adapter (the resource interface of libpredict's
// resource_api.h) over a cluster of nodes, without Slurm headers: the
// decisions are here, the cluster's answers come from a backend.
//
//   SlurmCluster (slurm_cluster.h)   slurmctld: nodes and partitions as Slurm
//                                    has them, select_g_job_test(WILL_RUN)
//                                    and select_nodes()
//   FakeCluster (tests/unit/)        nodes with CPUs in plain vectors, for the
//                                    adapters' conformance tests
//
// Exact EASY semantics on nodes:
//  - start_now / backfill: the job's usable nodes now, minus the nodes of
//    every reservation of this cycle it could delay (CyclePlan::exclude), a
//    start-now test, then the start. backfill() beyond the partition's own
//    shadow also keeps off its own head's nodes (the paper's "extra" case).
//  - reserve: the shadow time is the smallest planned end T such that the
//    head fits once every running job with planned end <= T is gone, found
//    by a search over the running jobs' planned ends (each probe one
//    backend question) that starts where the CPU counts say the head could
//    first fit (first_fitting(): two probes when that is right, as it is
//    unless node shapes get in the way; the answer is the binary search's
//    whenever fitting is monotone in T, as both assume). The reserved nodes R prefer the nodes those jobs
//    release over nodes free now, so "free now and not in R" is the paper's
//    extra processors when nodes are identical.
//  - fairness caps (easypp_max_job_user, _part, _assoc, _user_part, like
//    sched/backfill's bf_max_job_*): backfill() refuses, untested, a job
//    whose user (partition, association, user in this partition) already
//    had that many backfill candidates tried in this cycle, so one user's
//    flood of short jobs, first in SJBF order, cannot spend the whole budget
//    (easypp_max_job_test). Counted per cycle over every partition's pass;
//    heads and in-order starts are never capped.
//
// Backend requirements (Cluster):
//   types     Nodes (a node set; movable, default-constructible as "none"),
//             Partition, Candidate (one job's test in one partition; has
//             members `Nodes avail`: its usable nodes now,
//             `std::int64_t cpus`: the fewest CPUs it can start with, 0 if
//             unknown, `std::int64_t whole_nodes`: the fewest nodes it
//             needs entirely free, 0 if it is not a whole-node job,
//             `min_nodes`: the fewest nodes it runs on, and `std::int64_t
//             node_cpus`: the fewest idle CPUs a node must have to be one of
//             them, 0 if unknown or if CPUs may be oversubscribed)
//   nodes     static bool any(const Nodes&); static bool test(const Nodes&, int);
//             static void set(Nodes&, int); static Nodes copy(const Nodes&);
//             static void and_not(Nodes&, const Nodes&); static void and_(Nodes&, const Nodes&);
//             static int size(const Nodes&); static int count(const Nodes&) (nodes in the set);
//             Nodes none() const (an empty set);
//   cluster   Time now() const; const std::string& name(const Partition&) const;
//             Nodes usable(const Partition&) const;
//             void idle_cpus(std::vector<std::int64_t>*) const;  (per node index)
//   job tests bool prepare(JobHandle, const Partition&, Candidate*);
//             bool fits_now(JobHandle, Candidate&, const Nodes& on, Nodes* selected);
//             std::vector<Run> runs_on(const Nodes& on) const;  (by planned end, id;
//                                       with each job's CPUs when known)
//             void add_nodes_of(JobHandle running, Nodes* into) const;
//             bool fits_after(JobHandle, Candidate&, const Nodes& on,
//                             const std::vector<Run>&, Time t, Nodes* selected);
//   starting  Started start(JobHandle, Candidate&, const Nodes& avail, const StartNote&);
//             bool still_pending(JobHandle) const;
//             void account_start(JobHandle started, std::vector<std::int64_t>* idle) const;
//   cycle     bool may_continue(); void count_test();
//             JobOwner job_owner(JobHandle) const;  (the fairness caps' keys)
//             void publish(JobHandle head, const std::string& partition, Time shadow,
//                          const Nodes& reserved);   (the planned start users see)
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "easypp/prediction_book.h"
#include "easypp/resource_api.h"
#include "easypp/types.h"

namespace easypp::plugin {

/// A running job as reserve() walks them: its planned end and id, and the
/// CPUs it holds (0 if unknown; more than it holds on the probed nodes is
/// fine: only a lower bound of the shadow time is read from them).
struct Run {
  Time end;
  JobHandle id;
  std::int64_t cpus = 0;
};

/// The smallest i < n with fits(i), n if none, for a monotone fits (false
/// up to some index, true from there on), asking as few questions as it
/// can when `hint` is a good guess: fits(hint), and if true fits(hint - 1)
/// to confirm it (two questions when the hint is right); if fits(hint) is
/// false, steps of 1, 2, 4 ... up from it, then a binary search of the
/// last step. A wrong hint costs questions, never a wrong answer.
template <class Fits>
std::size_t first_fitting(std::size_t n, std::size_t hint, Fits&& fits) {
  if (n == 0) return 0;
  hint = std::min(hint, n - 1);
  std::size_t lo = 0, hi = 0;  // every index below lo fails; hi fits
  if (fits(hint)) {
    if (hint == 0 || !fits(hint - 1)) return hint;
    hi = hint - 1;  // the hint was too high: search below it
  } else {
    std::size_t failed = hint;
    for (std::size_t step = 1;; step *= 2) {
      if (failed == n - 1) return n;
      const std::size_t next = n - 1 - failed <= step ? n - 1 : failed + step;
      if (fits(next)) {
        lo = failed + 1;
        hi = next;
        break;
      }
      failed = next;
    }
  }
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (fits(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Why a job is being started (for the backend's log line).
struct StartNote {
  bool backfilled = false;
  bool beyond_shadow = false;  ///< backfilled into the "extra" room
  Time prediction = 0;
};

/// What a start attempt did.
struct Started {
  enum Status { kStarted, kNoFit, kCompleting } status = kNoFit;
  JobHandle as = 0;    ///< the job that started (an array's task, else the job)
  Time start = 0;      ///< its start time (+ suspended time: 0)
  bool more = false;   ///< an array's meta record with tasks left to try
};

/// Who a job belongs to, for the fairness caps.
struct JobOwner {
  std::uint32_t user = 0;
  std::uint32_t assoc = 0;  ///< 0: no association (no accounting): no assoc cap
};

/// Caps on backfill candidates tried per cycle (0: none).
struct FairCaps {
  int user = 0, part = 0, assoc = 0, user_part = 0;
  bool any() const { return user > 0 || part > 0 || assoc > 0 || user_part > 0; }
};

/// Backfill candidates tried in this cycle, by user, partition,
/// association and user in a partition; and those skipped by a cap.
struct CapCounts {
  std::map<std::uint32_t, int> user, assoc;
  std::map<std::string, int> part;
  std::map<std::pair<std::uint32_t, std::string>, int> user_part;
  std::uint32_t skipped = 0;
};

/// A partition head's reservation in this cycle.
template <class Nodes>
struct Reservation {
  std::string partition;
  JobHandle job = 0;
  Time shadow = kNever;
  Nodes nodes;           ///< R: the nodes the head will use at the shadow time
  /// The head's room (PolicyConfig::head_room): how far past the shadow a
  /// job's estimate may end (kNever: no guard; 0: a switch fired, safe).
  Time room = kNever;
};

/// What one cycle's passes share: every partition's reservation, the idle
/// CPUs per node (kept current as jobs start), and whether a start is
/// waiting for completing nodes.
template <class Nodes>
struct CyclePlan {
  std::deque<Reservation<Nodes>> reservations;  // stable addresses
  std::vector<std::int64_t> idle;
  bool retry_soon = false;
  FairCaps caps;
  CapCounts tried;
};

template <class Cluster>
class NodeAdapter {
 public:
  using Nodes = typename Cluster::Nodes;
  using Partition = typename Cluster::Partition;
  using Candidate = typename Cluster::Candidate;

  NodeAdapter(Cluster& cluster, CyclePlan<Nodes>& plan, PredictionBook& book, Partition part)
      : c_(cluster), plan_(plan), book_(book), part_(std::move(part)), name_(c_.name(part_)) {
    usable_ = c_.usable(part_);
    recount();
  }

  // --- the resource interface (resource_api.h) -------------------------------------

  bool start_now(JobHandle h, Time end_bound) { return test_and_start(h, end_bound, false, false); }

  bool backfill(JobHandle h, Time end_bound) {
    if (!admit(h)) return false;
    // Beyond the earliest of this partition's reservations (one under EASY;
    // the starving jobs' under selective reservations): exclude() then keeps
    // off the nodes of each one it would still hold at its shadow time.
    const bool beyond = res_ != nullptr && end_bound > first_shadow_;
    return test_and_start(h, end_bound, beyond, true);
  }

  Time reserve(JobHandle h, Time /*duration*/, bool is_head) {
    Nodes chosen;
    const Time shadow = find_shadow(h, &chosen);
    plan_.reservations.push_back(Reservation<Nodes>{});
    Reservation<Nodes>& r = plan_.reservations.back();
    r.partition = name_;
    r.job = h;
    r.shadow = shadow;
    if (shadow < kNever) r.nodes = std::move(chosen);
    res_ = &r;
    first_shadow_ = std::min(first_shadow_, shadow);
    recount();
    if (is_head && shadow < kNever) {
      book_.reserved_as_head(h, shadow, c_.now());
      c_.publish(h, name_, shadow, r.nodes);
    }
    return shadow;
  }

  bool can_start_more() const { return part_idle_ > 0; }
  std::int64_t free_width() const { return part_idle_; }
  std::int64_t extra_width() const { return outside_idle_; }
  bool may_continue() { return c_.may_continue(); }

  // --- beyond the interface -----------------------------------------------------------

  /// Start job h now if it fits, keeping off every reservation it could
  /// delay (jobs in advanced reservations: never the head, never reserved).
  bool try_start_now(JobHandle h) { return test_and_start(h, book_.end_bound(h, c_.now()), false, false); }

  /// This partition's reservation, once made.
  Reservation<Nodes>* reservation() const { return res_; }

  /// Remove from `avail` the nodes of every reservation of this cycle that
  /// job h could delay: those of another partition's head when h would still
  /// hold them at its shadow time (by the one end bound, with that head's
  /// room), and, with include_own, this partition's head's nodes.
  void exclude(Nodes& avail, JobHandle h, Time own_bound, bool include_own) const {
    for (const Reservation<Nodes>& r : plan_.reservations) {
      if (!Cluster::any(r.nodes)) continue;
      const bool own = r.partition == name_;
      const Time bound = own ? own_bound : book_.end_bound(h, c_.now(), r.room);
      if (own ? include_own && own_bound > r.shadow : bound > r.shadow)
        Cluster::and_not(avail, r.nodes);
    }
  }

 private:
  // The fairness caps: false (the job skipped, not tested) once one of its
  // counts reached its cap in this cycle; else the job is counted.
  bool admit(JobHandle h) {
    const FairCaps& k = plan_.caps;
    if (!k.any()) return true;
    const JobOwner o = c_.job_owner(h);
    CapCounts& t = plan_.tried;
    int& user = t.user[o.user];
    int& part = t.part[name_];
    int& user_part = t.user_part[{o.user, name_}];
    int none = 0;
    int& assoc = o.assoc != 0 ? t.assoc[o.assoc] : none;
    if ((k.user > 0 && user >= k.user) || (k.part > 0 && part >= k.part) ||
        (k.assoc > 0 && o.assoc != 0 && assoc >= k.assoc) ||
        (k.user_part > 0 && user_part >= k.user_part)) {
      ++t.skipped;
      return false;
    }
    ++user, ++part, ++user_part, ++assoc;
    return true;
  }

  bool test_and_start(JobHandle h, Time end_bound, bool include_own, bool backfilled) {
    c_.count_test();
    const JobPlan* p = book_.find(h);
    StartNote note{backfilled, backfilled && include_own, p ? p->prediction : 0};
    bool any = false;
    // An array's meta record starts task after task while they fit.
    for (int task = 0; task < 1000; ++task) {
      Candidate cand;
      if (!c_.prepare(h, part_, &cand)) break;
      exclude(cand.avail, h, end_bound, include_own);
      if (!could_fit_now(cand, cand.avail)) break;  // not worth the backend's test
      const Started s = c_.start(h, cand, cand.avail, note);
      if (s.status == Started::kCompleting) plan_.retry_soon = true;
      if (s.status != Started::kStarted) break;
      any = true;
      book_.start_as(h, s.as, s.start);
      c_.account_start(s.as, &plan_.idle);
      recount();
      if (!s.more) break;
    }
    return any && !c_.still_pending(h);
  }

  // Could the idle CPUs of `on` hold the job at all: enough nodes with the
  // job's per-node minimum idle, and enough idle CPUs on them? Asked before
  // the backend's test (in slurmctld a cons_tres test allocates per-node
  // core maps for every node offered: milliseconds at thousands of nodes),
  // so candidates that cannot fit (a fragmented machine) cost no test.
  // Only when the backend gives the per-node minimum (node_cpus > 0: it
  // says the idle counts bound what the job can get: no shared CPUs, no
  // gang scheduling or preemption of lower tiers, nothing suspended; and
  // completing jobs' CPUs count as idle), so "no" is exact and "maybe" is
  // asked.
  bool could_fit_now(const Candidate& cand, const Nodes& on) const {
    if (cand.node_cpus <= 0) return true;
    std::int64_t nodes = 0, cpus = 0;
    const std::int64_t want_nodes = std::max<std::int64_t>(cand.min_nodes, 1);
    const int n = std::min<int>(Cluster::size(on), int(plan_.idle.size()));
    for (int i = 0; i < n; i++) {
      if (!Cluster::test(on, i)) continue;
      const std::int64_t idle = plan_.idle[std::size_t(i)];
      if (idle < cand.node_cpus) continue;
      ++nodes;
      cpus += idle;
      if (nodes >= want_nodes && cpus >= cand.cpus) return true;
    }
    return false;
  }

  // The head's shadow time and its nodes R (see the file comment); kNever
  // (and no nodes) if it cannot run in this partition even when everything
  // running has ended.
  Time find_shadow(JobHandle h, Nodes* chosen) {
    Candidate cand;
    if (!c_.prepare(h, part_, &cand)) return kNever;
    // Other partitions' heads keep their nodes (highest priority first).
    for (const Reservation<Nodes>& r : plan_.reservations)
      if (r.partition != name_ && Cluster::any(r.nodes)) Cluster::and_not(cand.avail, r.nodes);
    // This partition's earlier reservations (several under selective
    // reservations, or easypp_reservations > 1): each holds its nodes from
    // its shadow until its planned end; this job may have them only after.
    std::vector<std::pair<Time, const Nodes*>> held;
    for (const Reservation<Nodes>& r : plan_.reservations)
      if (r.partition == name_ && r.shadow < kNever && Cluster::any(r.nodes))
        held.emplace_back(book_.end_bound(r.job, r.shadow), &r.nodes);
    if (!held.empty()) return find_shadow_after(h, cand, held, chosen);
    const Nodes& avail = cand.avail;
    if (c_.fits_now(h, cand, avail, chosen)) return c_.now();  // e.g. on completing nodes
    const std::vector<Run> runs = c_.runs_on(avail);
    // The smallest index whose end releases enough. Each question is a
    // WILL_RUN probe (in slurmctld a walk of the job list and a copy of the
    // node usage), so the search starts where the CPU counts say the head
    // could first fit: usually right, and then two probes instead of
    // log2(running jobs).
    const std::size_t hint = first_of_end(runs, std::max(cpu_bound(cand, avail, runs),
                                                         node_bound(cand, avail, runs)));
    const std::size_t i = first_fitting(runs.size(), hint, [&](std::size_t k) {
      return c_.fits_after(h, cand, avail, runs, runs[k].end, nullptr);
    });
    if (i == runs.size()) return kNever;
    const Time shadow = runs[i].end;
    choose_nodes(h, cand, runs, shadow, chosen);
    return shadow;
  }

  // find_shadow() behind earlier reservations of the partition: the usable
  // nodes at time T are those not held at T (held until the planned end of
  // the job reserved on them), so the candidate times are the running jobs'
  // planned ends and the held nodes' ends; fitting is monotone in T (more
  // nodes free, more jobs gone), a binary search finds the first.
  Time find_shadow_after(JobHandle h, Candidate& cand,
                         const std::vector<std::pair<Time, const Nodes*>>& held, Nodes* chosen) {
    const Nodes base = Cluster::copy(cand.avail);
    auto avail_at = [&](Time t) {
      Nodes a = Cluster::copy(base);
      for (const auto& [end, nodes] : held)
        if (end > t) Cluster::and_not(a, *nodes);
      return a;
    };
    const Time now = c_.now();
    {
      const Nodes a = avail_at(now);
      if (c_.fits_now(h, cand, a, chosen)) return now;
    }
    const std::vector<Run> runs = c_.runs_on(base);
    std::vector<Time> times;
    for (const Run& run : runs) times.push_back(run.end);
    for (const auto& held_end : held) times.push_back(std::max(held_end.first, now));
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    if (times.empty() || !c_.fits_after(h, cand, avail_at(times.back()), runs, times.back(), nullptr))
      return kNever;
    std::size_t lo = 0, hi = times.size() - 1;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (c_.fits_after(h, cand, avail_at(times[mid]), runs, times[mid], nullptr)) hi = mid;
      else lo = mid + 1;
    }
    const Time shadow = times[lo];
    cand.avail = avail_at(shadow);
    choose_nodes(h, cand, runs, shadow, chosen);
    return shadow;
  }

  // R: the nodes the jobs ending by the shadow release first, then as few
  // other usable nodes as needed.
  void choose_nodes(JobHandle h, Candidate& cand, const std::vector<Run>& runs, Time shadow,
                    Nodes* chosen) {
    const Nodes& avail = cand.avail;
    Nodes released = c_.none();
    for (const Run& run : runs) {
      if (run.end > shadow) break;
      c_.add_nodes_of(run.id, &released);
    }
    Cluster::and_(released, avail);
    if (c_.fits_after(h, cand, released, runs, shadow, chosen)) return;
    std::vector<int> others;
    for (int i = 0, n = Cluster::size(avail); i < n; i++)
      if (Cluster::test(avail, i) && !Cluster::test(released, i)) others.push_back(i);
    auto with_others = [&](std::size_t k) {
      Nodes cand_nodes = Cluster::copy(released);
      for (std::size_t j = 0; j < k && j < others.size(); ++j) Cluster::set(cand_nodes, others[j]);
      return cand_nodes;
    };
    // The smallest k >= 1 such that the released nodes and the first k
    // others suffice (k = all of them is the shadow probe itself), from
    // where the CPU counts at the shadow say. Every probe that fits writes
    // *chosen; the last one to fit is the answer's (first_fitting).
    std::size_t hint = 0;  // k others needed by the counts
    if (cand.cpus > 0) {
      std::int64_t free = idle_on(released);
      for (const Run& run : runs) {
        if (run.end > shadow) break;
        free += run.cpus;
      }
      for (; hint < others.size() && free < cand.cpus; ++hint) free += idle_at(others[hint]);
    }
    if (cand.whole_nodes > 0) {  // others with idle CPUs (a whole node needs them all)
      std::int64_t nodes = Cluster::count(released);
      std::size_t k = 0;
      for (; k < others.size() && nodes < cand.whole_nodes; ++k) nodes += idle_at(others[k]) > 0;
      hint = std::max(hint, k);
    }
    if (hint > 0) --hint;  // the index of the k-th
    const std::size_t i = first_fitting(others.size(), hint, [&](std::size_t k) {
      return c_.fits_after(h, cand, with_others(k + 1), runs, shadow, chosen);
    });
    if (i == others.size()) c_.fits_after(h, cand, avail, runs, shadow, chosen);
  }

  std::int64_t idle_at(int i) const {
    return i >= 0 && std::size_t(i) < plan_.idle.size() ? plan_.idle[std::size_t(i)] : 0;
  }
  // Idle CPUs now of the nodes in `on`.
  std::int64_t idle_on(const Nodes& on) const {
    std::int64_t free = 0;
    const int n = std::min<int>(Cluster::size(on), int(plan_.idle.size()));
    for (int i = 0; i < n; i++)
      if (Cluster::test(on, i)) free += plan_.idle[std::size_t(i)];
    return free;
  }

  // The first index of runs (by planned end) at which the idle CPUs of
  // `on` plus the CPUs of the jobs ended so far reach the head's CPU count:
  // it cannot fit earlier (a job's CPUs outside `on` are counted too, which
  // only makes the bound earlier). runs.size() if never; 0 if unknown.
  std::size_t cpu_bound(const Candidate& cand, const Nodes& on, const std::vector<Run>& runs) const {
    if (cand.cpus <= 0) return 0;
    std::int64_t free = idle_on(on);
    std::size_t k = 0;
    for (; k < runs.size(); ++k) {
      free += runs[k].cpus;
      if (free >= cand.cpus) break;
    }
    return k;
  }

  // A whole-node head: the first index at which enough nodes of `on` are
  // entirely free, each from the planned end of the last job on it (nodes
  // no job runs on count as free now). 0 if not a whole-node job.
  std::size_t node_bound(const Candidate& cand, const Nodes& on, const std::vector<Run>& runs) const {
    if (cand.whole_nodes <= 0 || runs.empty()) return 0;
    std::vector<std::int64_t> freed(runs.size(), 0);
    Nodes seen = c_.none();  // nodes of the jobs ending later
    for (std::size_t k = runs.size(); k-- > 0;) {
      Nodes mine = c_.none();
      c_.add_nodes_of(runs[k].id, &mine);
      Cluster::and_(mine, on);
      Cluster::and_not(mine, seen);  // its last job: this one
      freed[k] = Cluster::count(mine);
      c_.add_nodes_of(runs[k].id, &seen);
    }
    Nodes idle_now = Cluster::copy(on);
    Cluster::and_not(idle_now, seen);
    std::int64_t free = Cluster::count(idle_now);
    std::size_t k = 0;
    for (; k < runs.size(); ++k) {
      free += freed[k];
      if (free >= cand.whole_nodes) break;
    }
    return k;
  }

  // A probe at an end releases every job ending then: the first of them.
  static std::size_t first_of_end(const std::vector<Run>& runs, std::size_t k) {
    while (k > 0 && k < runs.size() && runs[k - 1].end == runs[k].end) --k;
    return k;
  }

  // Idle CPUs of the partition's usable nodes, and of those outside R.
  void recount() {
    part_idle_ = 0;
    outside_idle_ = 0;
    if (!Cluster::any(usable_)) return;
    const int n = std::min<int>(Cluster::size(usable_), int(plan_.idle.size()));
    for (int i = 0; i < n; i++) {
      if (!Cluster::test(usable_, i)) continue;
      part_idle_ += plan_.idle[std::size_t(i)];
      if (res_ == nullptr || !Cluster::any(res_->nodes) || !Cluster::test(res_->nodes, i))
        outside_idle_ += plan_.idle[std::size_t(i)];
    }
  }

  Cluster& c_;
  CyclePlan<Nodes>& plan_;
  PredictionBook& book_;
  Partition part_;
  std::string name_;
  Nodes usable_;  ///< partition nodes that are up and not drained
  std::int64_t part_idle_ = 0;
  std::int64_t outside_idle_ = 0;  ///< idle CPUs of usable nodes outside R
  Reservation<Nodes>* res_ = nullptr;
  Time first_shadow_ = kNever;  ///< the earliest shadow of this partition's reservations
};

}  // namespace easypp::plugin
