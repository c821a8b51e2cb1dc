// The scheduling pass (spec section 4): EASY backfilling with predictions,
// written once against the resource interface (resource_api.h) so that the
// SWF simulator (processor counts) and the Slurm plugin (nodes through
// select_g_job_test) run exactly the same policy.
//
// EASY and conservative backfilling differ only in reservation depth: the
// first `reservations` blocked jobs in queue order get reservations (EASY: 1,
// the head; conservative: all); the other waiting jobs are tried for
// backfilling in the backfill order (backfill_order.h: FCFS or SJBF).
//
// The planning values come from the wait queue's entries, which the caller
// filled from its PredictionBook (prediction_book.h); each started job's end
// bound is PolicyConfig::end_bound() (config.h), the one place where the
// prediction, the estimate under safe backfilling and the guards (the head's
// room, PolicyConfig::head_room) meet.
#pragma once

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdint>
#include <vector>

#include "easypp/backfill_order.h"
#include "easypp/config.h"
#include "easypp/queue.h"
#include "easypp/resource_api.h"
#include "easypp/types.h"

namespace easypp {

struct PassResult {
  std::uint32_t started_in_order = 0;  ///< started before any job was blocked
  std::uint32_t started_backfill = 0;  ///< started by backfilling
  std::uint32_t tested = 0;            ///< backfill candidates examined (backfill() calls)
  std::uint32_t reservations = 0;      ///< reservations made
  bool head_reserved = false;          ///< a reservation was made for the head
  JobHandle head = 0;                  ///< the head (valid if head_reserved)
  Time shadow = kNever;                ///< the head's shadow time
  bool interrupted = false;            ///< the adapter ended the pass early
  bool starving_head = false;          ///< a guard's switch made this pass safe
  /// The head's room (PolicyConfig::head_room): kNever without a guard, 0
  /// when starving_head; what the plugin's other partitions respect.
  Time head_room = kNever;
  bool continued = false;  ///< it continued the last pass (PassCarry)
};

/// What a pass leaves for the next one to continue from
/// (schedule_pass() with a carry, below). When only arrivals came since
/// the last pass (no job ended, started or was re-planned, no planning
/// value changed, and the adapter kept its state: continue_pass()), a new
/// pass would first redo the last one's work and reach the same outcome:
/// the state the last pass ended in is the state the new one starts from,
/// every job it left waiting fails the same tests again (time only shortens
/// what may end before a reservation), and the new jobs come after all of
/// them in queue order. So the new pass continues instead: EASY tries the
/// new jobs alone, in queue order; deeper reservations go on from the job
/// the last pass stopped at. Same starts and reservations, fewer tests.
struct PassCarry {
  bool ok = false;       ///< the last pass left a state to continue from
  /// Its head, shadow, room and reservations made (a chain of continued
  /// passes counts on); its starts and tests are not carried.
  PassResult head;
  Time room = kNever;    ///< (pass-local state of the last pass)
  bool trusted = true;
  /// Deeper reservations: the first job the last pass did not pass yet
  /// (kNoSlot: it passed every job).
  WaitQueue::Slot at = WaitQueue::kNoSlot;
  std::uint64_t values = 0;  ///< the queue's value_changes() at its end
  std::size_t size = 0;      ///< the queue's size() at its end (no erase since)
};

/// May passes under `cfg` continue each other (PassCarry)? Only where what
/// may start depends on time through the shadow alone and is tested the
/// same way each pass: no guard (its room grows with the head's wait), no
/// selective reservations (starvation grows with the wait), no safe
/// backfilling, FCFS backfill order, and one reservation (EASY) or every
/// job's (conservative, over the queue-order index: start_limits()). (SJBF
/// could continue the same way, the new jobs tried by prediction, but its
/// index answers "nothing fits" about as fast as the
/// continued pass does: callgrind counted 1-1.5% more instructions for
/// easy++ on KTH and SDSC Blue with it, so it does not.)
inline bool continuable(const PolicyConfig& cfg) {
  if (cfg.safe || cfg.any_guard() || cfg.selective.on()) return false;
  return cfg.backfill == BackfillOrder::Queue && (cfg.reservations == 1 || cfg.reservations <= 0);
}

namespace pass_detail {

/// No backfilling (plain FCFS): the pass ends at the first blocked job, so
/// it never gets to the candidates.
struct NoBackfill : FcfsBackfill {};

// The slots holding a reservation in this pass; no allocation for EASY.
// Past kLinear of them, the first contains() marks them all in a table by
// slot (and add() marks the later ones): selective passes reserve every
// starving job and then ask about every other job, and a linear search was
// 44% of CEA Curie sel-d's time. (Conservative passes never ask: no table.)
class ReservedSlots {
 public:
  void add(WaitQueue::Slot s) {
    if (n_ < 4) inline_[n_] = s;
    else more_.push_back(s);
    ++n_;
    if (!marks_.empty()) mark(s);
  }
  bool contains(WaitQueue::Slot s) const {  // per candidate: keep it cheap
    if (n_ > kLinear) {
      if (marks_.empty()) {
        for (unsigned i = 0; i < 4; ++i) mark(inline_[i]);
        for (WaitQueue::Slot x : more_) mark(x);
      }
      return s < marks_.size() && marks_[s] != 0;
    }
    const unsigned n = n_ < 4 ? n_ : 4;
    for (unsigned i = 0; i < n; ++i)
      if (inline_[i] == s) return true;
    if (n_ <= 4) return false;
    for (WaitQueue::Slot x : more_)
      if (x == s) return true;
    return false;
  }

 private:
  static constexpr unsigned kLinear = 16;
  void mark(WaitQueue::Slot s) const {
    if (s >= marks_.size()) marks_.resize(std::size_t(s) + 1 + marks_.size() / 2, 0);
    marks_[s] = 1;
  }
  WaitQueue::Slot inline_[4] = {};
  unsigned n_ = 0;
  std::vector<WaitQueue::Slot> more_;
  mutable std::vector<std::uint8_t> marks_;  // by slot, once built
};

// The probe of what may still start, from the adapter's start limits
// (resource_api.h): by estimate, or by prediction with the guard's room
// (the bound is then at least the prediction, and the estimate ends by the
// limit plus the room).
inline CandidateProbe limits_probe(const StartLimits& l, bool by_estimate, Time room) {
  static_assert(StartLimits::kMaxSteps <= CandidateProbe::kMaxSteps);
  CandidateProbe probe;
  probe.by_estimate = by_estimate;
  if (!by_estimate) probe.room = room;
  probe.free = l.free;
  probe.limit = l.limit;
  probe.extra = std::min(l.free, l.extra);
  probe.n_more = l.n_steps;
  for (unsigned k = 0; k < l.n_steps; ++k)
    probe.more[k] = CandidateProbe::Step{l.steps[k].width, l.steps[k].limit};
  return probe;
}

// A candidate a probe found (or a walk reached) asked to backfill now:
// counted as tested, and erased from the queue if it started. Yield: the
// adapter asked to end the pass (r.interrupted), the job was not asked.
enum class Asked { Started, Refused, Yield };
// (`start(entry)` asks the adapter: backfill() in general, see below.)
template <class Adapter, class Start>
Asked ask_found(WaitQueue::Slot s, WaitQueue& q, Adapter& a, const Start& start, PassResult& r) {
  if (!a.may_continue()) {
    r.interrupted = true;
    return Asked::Yield;
  }
  ++r.tested;
  if (!start(q.entry(s))) return Asked::Refused;
  ++r.started_backfill;
  q.erase(s);
  return Asked::Started;
}
template <class Adapter, class BoundOf>
Asked backfill_found(WaitQueue::Slot s, WaitQueue& q, Adapter& a, const BoundOf& bound_of,
                     PassResult& r) {
  return ask_found(s, q, a,
                   [&](const WaitQueue::Entry& e) { return a.backfill(e.handle, bound_of(e)); }, r);
}

// The backfill walk of an EASY pass (one reservation, the head's, made;
// shadow time r.shadow) through the candidate index of the order: each
// backfill() call goes to the next job in backfill order that could start
// given what is free, the shadow time and the extra room (queue.h explains
// why no job skipped this way could have started); r.tested counts those
// calls. A job the adapter refuses (the plugin's node checks are finer than
// widths) or the reserved head is hidden for the rest of the pass.
template <class Order, class Adapter, class BoundOf, class NothingFits>
void indexed_candidates(Time now, WaitQueue& q, Adapter& a, bool safe, Time room,
                        const ReservedSlots& reserved, const BoundOf& bound_of,
                        const NothingFits& nothing_fits, PassResult& r) {
  CandidateProbe probe;
  probe.by_estimate = safe;
  probe.room = safe ? kNever : room;
  probe.limit = r.shadow - now;
  while (!nothing_fits()) {
    probe.free = a.free_width();
    probe.extra = std::min(probe.free, a.extra_width());
    const WaitQueue::Slot s = Order::first_passing(q, probe);
    if (s == WaitQueue::kNoSlot) break;
    if (reserved.contains(s)) {
      q.hide(s);
      continue;
    }
    const Asked asked = backfill_found(s, q, a, bound_of, r);
    if (asked == Asked::Yield) break;
    if (asked == Asked::Refused) q.hide(s);
  }
  q.unhide_all();
}

// One candidate of a phase-B walk in backfill order (EASY past its index,
// and selective reservations): counted as tested and started by `start` if
// it is narrow enough for what is free. False when the walk ends here:
// nothing waiting can start any more, or the adapter asks to yield
// (r.interrupted).
template <class Adapter, class NothingFits, class Start>
bool try_candidate(const WaitQueue::Item& item, WaitQueue& q, Adapter& a,
                   const NothingFits& nothing_fits, const Start& start, PassResult& r) {
  if (nothing_fits()) return false;
  ++r.tested;
  if (item.width > a.free_width()) return true;
  if (!a.may_continue()) {
    r.interrupted = true;
    return false;
  }
  const WaitQueue::Entry& e = q.entry(item.slot);
  if (start(e)) {
    ++r.started_backfill;
    q.erase(item.slot);
  }
  return true;
}

// A continued EASY pass (PassCarry): only the jobs pushed since the last
// pass can start, tried in queue order (the backfill order of the passes
// that continue: FCFS) with the candidate index's test, as the index would
// find them.
template <class Adapter, class BoundOf, class NothingFits>
void new_candidates(Time now, WaitQueue& q, Adapter& a, const WaitQueue::Slot* arrived,
                    std::size_t n_arrived, const BoundOf& bound_of,
                    const NothingFits& nothing_fits, PassResult& r) {
  for (std::size_t i = 0; i < n_arrived; ++i) {
    const WaitQueue::Slot s = arrived[i];
    if (nothing_fits()) break;
    CandidateProbe probe;
    probe.limit = r.shadow - now;
    probe.free = a.free_width();
    probe.extra = std::min(probe.free, a.extra_width());
    const WaitQueue::Entry& e = q.entry(s);
    if (!probe.passes(e.width, e.prediction, e.estimate)) continue;
    if (backfill_found(s, q, a, bound_of, r) == Asked::Yield) break;
  }
}

// `carry`: continue the last pass if carry->ok (the caller checked that
// only the jobs `arrived` came since), and leave what the next one needs.
template <class Order, class Adapter>
PassResult pass(Time now, WaitQueue& q, Adapter& a, const PolicyConfig& cfg,
                PassCarry* carry_in = nullptr, const WaitQueue::Slot* arrived = nullptr,
                std::size_t n_arrived = 0) {
  using Slot = WaitQueue::Slot;
  // (Only FCFS passes continue, continuable(): the others compile without.)
  constexpr bool kCarry = Order::kOrder == BackfillOrder::Queue;
  PassCarry* const carry = kCarry ? carry_in : nullptr;
  PassResult r;
  const unsigned depth = cfg.reservations <= 0 ? UINT_MAX : unsigned(cfg.reservations);
  ReservedSlots reserved;
  Time room = kNever;    // how far past the shadow an estimate may end
  bool trusted = !cfg.safe;  // predictions alone bound (no safe backfill, no guard)
  if (carry != nullptr && !continuable(cfg)) carry->ok = false;
  const bool resumed = kCarry && carry != nullptr && carry->ok;
  // (A value that changes during the pass, from an adapter's callback,
  // would leave jobs tested before it untested: no carry then.)
  const std::uint64_t values_at_start = q.value_changes();
  if (resumed) {
    r = carry->head;
    r.continued = true;
    room = carry->room;
    trusted = carry->trusted;
  }
  // What the next pass continues from (carry): set where this one ends.
  auto leave = [&](Slot at) {
    if constexpr (kCarry) {
      if (carry == nullptr) return;
      carry->ok = !r.interrupted && r.head_reserved && continuable(cfg) &&
                  q.value_changes() == values_at_start;
      carry->head = r;
      carry->head.started_in_order = carry->head.started_backfill = carry->head.tested = 0;
      carry->head.continued = false;
      carry->room = room;
      carry->trusted = trusted;
      carry->at = at;
      carry->values = q.value_changes();
      carry->size = q.size();
    } else {
      (void)at;
    }
  };
  // Nothing waiting is narrow enough for what is free: stop (cheap, and
  // frequent at high load, when only wide jobs are left waiting).
  auto nothing_fits = [&] { return !a.can_start_more() || a.free_width() < q.min_width(); };
  auto bound_of = [&](const WaitQueue::Entry& e) {
    return trusted ? now + e.prediction : cfg.end_bound(now, e.prediction, e.estimate, room);
  };

  if (resumed && depth == 1) {  // EASY: the new jobs alone
    new_candidates(now, q, a, arrived, n_arrived, bound_of, nothing_fits, r);
    leave(WaitQueue::kNoSlot);
    return r;
  }

  // Phase A: queue order. Jobs start while nothing is blocked (EASY step 1);
  // the first `depth` blocked jobs get reservations; jobs between them may
  // backfill around the reservations made so far. (Continued: from the job
  // the last pass stopped at, or the first new one.)
  const auto by_queue = q.queue_order();
  auto it = by_queue.begin();
  if (resumed) {
    const Slot from = carry->at != WaitQueue::kNoSlot ? carry->at
                      : n_arrived > 0                 ? arrived[0]
                                                      : WaitQueue::kNoSlot;
    if (from == WaitQueue::kNoSlot) {
      leave(WaitQueue::kNoSlot);
      return r;
    }
    it = q.queue_order_from(from);
  }
  // Deeper reservations over a queue-order index, when the adapter tells
  // what could still start (resource_api.h, start_limits): the index finds
  // the next job at or after this one that could start (`next`); the jobs
  // before it only get their reservation, and with none left the pass ends
  // (what it would reserve changes no decision).
  constexpr bool kLimits =
      Order::kOrder == BackfillOrder::Queue && resource_api_detail::has_start_limits<Adapter>::value;
  const bool limits = kLimits && depth > 1;
  // What may still start (a generic lambda: instantiated only where
  // kLimits holds).
  auto probe_now = [&](auto& adapter) {
    return limits_probe(adapter.start_limits(), cfg.safe || room <= 0, room);
  };
  WaitQueue::Slot next = WaitQueue::kNoSlot;
  while (it != by_queue.end() && r.reservations < depth) {
    const Slot s = (*it).slot;
    ++it;
    const WaitQueue::Entry e = q.entry(s);
    if constexpr (kLimits) {
      if (limits && r.reservations > 0) {
        if (next == WaitQueue::kNoSlot) {
          next = q.first_in_queue_order(probe_now(a), s);
          if (next == WaitQueue::kNoSlot) {
            leave(s);
            return r;
          }
        }
        if (s != next) {
          // A job skipped here may still be reserved now (or from a past
          // time, behind an expired prediction): one the room keeps from
          // starting (its prediction fits, its estimate does not). It takes
          // what is free now, and `next` may no longer fit: ask again.
          if (a.reserve(e.handle, e.prediction, /*is_head=*/false) <= now) next = WaitQueue::kNoSlot;
          ++r.reservations;
          if (depth != UINT_MAX) reserved.add(s);  // (phase B's: never reached with every job reserved)
          continue;
        }
        next = WaitQueue::kNoSlot;  // tried below; the next query starts after it
      }
    }
    if (r.reservations == 0) {
      if (a.start_now(e.handle, bound_of(e))) {
        ++r.started_in_order;
        q.erase(s);
        continue;
      }
      if (cfg.backfill == BackfillOrder::None) {
        leave(s);
        return r;
      }
      r.shadow = a.reserve(e.handle, e.prediction, /*is_head=*/true);
      room = cfg.any_guard()  // (the paper's presets: no call)
                 ? cfg.head_room(now, e.since, e.prediction, r.shadow, e.first_reservation)
                 : kNever;
      r.head_room = room;
      r.starving_head = room == 0;
      trusted = trusted && room >= kNever;
      r.head_reserved = true;
      r.head = e.handle;
      ++r.reservations;
      reserved.add(s);
      continue;
    }
    if (nothing_fits()) {
      leave(s);
      return r;
    }
    if (!a.may_continue()) {
      r.interrupted = true;
      leave(s);
      return r;
    }
    ++r.tested;
    if (a.backfill(e.handle, bound_of(e))) {
      ++r.started_backfill;
      q.erase(s);
      continue;
    }
    a.reserve(e.handle, e.prediction, /*is_head=*/false);
    ++r.reservations;
    reserved.add(s);
  }
  if (it == by_queue.end()) {
    leave(WaitQueue::kNoSlot);
    return r;
  }

  // Phase B: every other waiting job, in the backfill order.
  if constexpr (kLimits) {
    // Deeper reservations than the head's but not every job's (FCFS,
    // reservations=N): the index finds the next job in queue order that
    // could start around them. A refusal changes nothing, so the search
    // goes on after it; a start takes processors, so the limits are asked
    // again at each query. (Walking every job, each pass tested the whole
    // queue: RICC easy:reservations=3:max-delay=3600, 741 million tests.)
    if (limits) {
      Slot from = (*it).slot;
      while (from != WaitQueue::kNoSlot && !nothing_fits()) {
        const Slot c = q.first_in_queue_order(probe_now(a), from);
        if (c == WaitQueue::kNoSlot) break;
        auto after = q.queue_order_from(c);
        ++after;
        from = after != by_queue.end() ? (*after).slot : WaitQueue::kNoSlot;
        if (backfill_found(c, q, a, bound_of, r) == Asked::Yield) break;
      }
      leave(WaitQueue::kNoSlot);
      return r;
    }
  }
  const bool safe = cfg.safe || room < kNever;
  if constexpr (Order::kAscendingPredictions &&
                resource_api_detail::has_start_limits<Adapter>::value) {
    // The same depth in SJBF order: the walk goes on in prediction order,
    // but a job outside the start limits (kept up to date: a start takes
    // processors) is passed over without the adapter's test (a profile
    // walk), and once predictions are longer than the longest limit and
    // nothing is free whatever the length, none of the rest can start.
    // (RICC easy:reservations=3:backfill=sjbf: 22 s of user CPU, 47% of it
    // in may_backfill.)
    if (depth > 1) {
      CandidateProbe probe = probe_now(a);
      const auto last = Order::last(q);
      for (auto c = Order::first(q, it); c != last;) {
        const WaitQueue::Item item = *c;
        ++c;  // the candidate may start: erased from the queue
        if (reserved.contains(item.slot)) continue;
        if (nothing_fits()) break;
        const Time longest = probe.n_more > 0 ? probe.more[probe.n_more - 1].limit : probe.limit;
        if (!probe.by_estimate && probe.extra <= 0 && item.prediction > longest) break;
        const WaitQueue::Entry& e = q.entry(item.slot);
        if (!probe.passes(e.width, e.prediction, e.estimate)) continue;
        const Asked asked = backfill_found(item.slot, q, a, bound_of, r);
        if (asked == Asked::Yield) break;
        if (asked == Asked::Started) probe = probe_now(a);
      }
      leave(WaitQueue::kNoSlot);
      return r;
    }
  }
  // EASY walks the candidate index. The probe is exact for every bound:
  // the prediction (no guard), the estimate (safe backfill, or a head the
  // guard protects), and in between with a finite room (end_bound: the
  // prediction within the shadow and the estimate within shadow + room,
  // the probe's room).
  const bool by_estimate = cfg.safe || room <= 0;
  if (depth == 1 && (!by_estimate || Order::kIndexedByEstimate)) {
    indexed_candidates<Order>(now, q, a, by_estimate, room, reserved, bound_of, nothing_fits, r);
    leave(WaitQueue::kNoSlot);
    return r;
  }
  const auto last = Order::last(q);
  for (auto c = Order::first(q, it); c != last;) {
    const WaitQueue::Item item = *c;
    ++c;  // the candidate may start: erased from the queue
    if constexpr (Order::kHasReserved) {
      if (reserved.contains(item.slot)) continue;
    }
    // Ascending predictions: once a candidate cannot end before the shadow
    // time, none of the rest can either; only "extra" room is left, and
    // once that is gone the walk ends.
    if constexpr (Order::kAscendingPredictions) {
      if (depth == 1 && !safe && now + item.prediction > r.shadow && a.extra_width() <= 0)
        break;
    }
    auto backfill = [&](const WaitQueue::Entry& e) { return a.backfill(e.handle, bound_of(e)); };
    if (!try_candidate(item, q, a, nothing_fits, backfill, r)) break;
  }
  leave(WaitQueue::kNoSlot);
  return r;
}

// (Below this many waiting jobs, selective_pass's phase B walks the queue
// order instead of asking the queue-order index: see there.)
constexpr std::size_t kSelectiveWalkBelow = 512;

/// Selective reservations (selective.h). Phase A walks the queue order and
/// considers only the starving jobs: each starts if it fits without
/// delaying the reservations made so far, else gets one (the first is the
/// pass's "head"). Phase B tries every other job in the backfill order
/// (FCFS or SJBF) around those reservations; with none, any job that fits
/// starts. The guards do not combine with it (SchedulerConfig::validate()).
///
/// An adapter that tells its start limits (resource_api.h, the simulator's)
/// lets the pass skip what cannot start: phase A ends the pass once
/// nothing fits (the reservations left would change no decision), and
/// phase B asks only the jobs within the limits, found by the queue-order
/// index (FCFS) or passed over in prediction order (SJBF), as deeper
/// reservations do in pass(). (Both walked the whole queue: RICC sel-d,
/// 310 million candidates tested, half the replay in the two walks and in
/// backfill() calls refused.) Same starts and reservations that change a
/// decision; fewer tests.
template <class Order, class Adapter>
PassResult selective_pass(Time now, WaitQueue& q, Adapter& a, const PolicyConfig& cfg) {
  using Slot = WaitQueue::Slot;
  constexpr bool kLimits = resource_api_detail::has_start_limits<Adapter>::value;
  PassResult r;
  ReservedSlots reserved;
  auto nothing_fits = [&] { return !a.can_start_more() || a.free_width() < q.min_width(); };
  auto bound_of = [&](const WaitQueue::Entry& e) {
    return cfg.end_bound(now, e.prediction, e.estimate, kNever);
  };
  auto try_start = [&](const WaitQueue::Entry& e) {
    return r.reservations == 0 ? a.start_now(e.handle, bound_of(e))
                               : a.backfill(e.handle, bound_of(e));
  };

  // Phase A: the starving jobs, in queue order.
  const auto by_queue = q.queue_order();
  for (auto it = by_queue.begin(); it != by_queue.end();) {
    const Slot s = (*it).slot;
    ++it;
    {  // (most jobs do not starve: test before copying the entry)
      const WaitQueue::Entry& w = q.entry(s);
      if (!cfg.selective.starving(now, w.since, w.prediction, w.width)) continue;
    }
    const WaitQueue::Entry e = q.entry(s);
    if constexpr (kLimits) {
      // Nothing can start any more in this pass (it only takes resources
      // away): the head is reserved, the rest would change no decision.
      if (r.reservations > 0 && nothing_fits()) return r;
    }
    if (!nothing_fits()) {
      if (r.reservations > 0) {
        if (!a.may_continue()) {
          r.interrupted = true;
          return r;
        }
        ++r.tested;
      }
      if (try_start(e)) {
        if (r.reservations == 0) ++r.started_in_order;
        else ++r.started_backfill;
        q.erase(s);
        continue;
      }
    }
    const bool head = r.reservations == 0;
    const Time shadow = a.reserve(e.handle, e.prediction, head);
    if (head) {
      r.shadow = shadow;
      r.head_reserved = true;
      r.head = e.handle;
    }
    ++r.reservations;
    reserved.add(s);
  }

  // Phase B: everybody else, in the backfill order.
  if constexpr (kLimits) {
    // What may still start: with one reservation the head's shadow and
    // extra (resource_api.h, backfill's cases a and b), else the adapter's
    // start limits (no reservation: the free width). Asked again only
    // when a candidate narrow enough for the free width comes after a
    // start (start_limits() walks the profile).
    CandidateProbe probe;
    bool probe_fresh = false, probe_asked = false;
    auto probe_now = [&]() -> const CandidateProbe& {
      if (probe_fresh) return probe;
      probe_fresh = probe_asked = true;
      if (r.reservations != 1) {
        probe = limits_probe(a.start_limits(), cfg.safe, kNever);
      } else {
        probe = CandidateProbe{};
        probe.by_estimate = cfg.safe;
        probe.limit = r.shadow - now;
        probe.free = a.free_width();
        probe.extra = std::min(probe.free, a.extra_width());
      }
      return probe;
    };
    // One candidate met by a walk: asked if within the probe. False: the
    // walk ends (the adapter asked to yield).
    auto ask_within = [&](const WaitQueue::Item& item) {
      if (item.width > a.free_width()) return true;
      const WaitQueue::Entry& e = q.entry(item.slot);
      if (!probe_now().passes(e.width, e.prediction, e.estimate)) return true;
      const Asked asked = ask_found(item.slot, q, a, try_start, r);
      if (asked == Asked::Started) probe_fresh = false;  // a start takes resources
      return asked != Asked::Yield;
    };
    if constexpr (Order::kOrder == BackfillOrder::Queue) {
      const auto now_queued = q.queue_order();  // (phase A may have started the first)
      // On a short queue a walk that tests the probe itself costs less
      // than bringing the index up to date (its leaves are recomputed
      // lazily, at a query: Sandia Ross `sel`, whose queue stays short, ran
      // 25% slower through it).
      if (q.size() < kSelectiveWalkBelow) {
        for (auto c = now_queued.begin(); c != now_queued.end();) {
          const WaitQueue::Item item = *c;
          ++c;  // the candidate may start: erased from the queue
          if (nothing_fits()) break;
          if (reserved.contains(item.slot)) continue;
          if (!ask_within(item)) break;
        }
        return r;
      }
      // The index finds the next job in queue order within the probe, from
      // just after the last one found (those before it were asked,
      // reserved or are outside the limits; hiding them instead cost more
      // than the walk on short queues).
      Slot from = now_queued.begin() != now_queued.end() ? (*now_queued.begin()).slot
                                                         : WaitQueue::kNoSlot;
      while (from != WaitQueue::kNoSlot && !nothing_fits()) {
        const Slot c = q.first_in_queue_order(probe_now(), from);
        if (c == WaitQueue::kNoSlot) break;
        auto after = q.queue_order_from(c);
        ++after;  // (before c may start and leave the queue)
        from = after != now_queued.end() ? (*after).slot : WaitQueue::kNoSlot;
        if (reserved.contains(c)) continue;
        const Asked asked = ask_found(c, q, a, try_start, r);
        if (asked == Asked::Yield) break;
        if (asked == Asked::Started) probe_fresh = false;
      }
      return r;
    } else {
      static_assert(Order::kAscendingPredictions);
      // Ascending predictions: once they are longer than the longest limit
      // and no width is free whatever the length, none of the rest starts.
      const auto last = Order::last(q);
      for (auto c = Order::first(q, q.queue_order().begin()); c != last;) {
        const WaitQueue::Item item = *c;
        ++c;  // the candidate may start: erased from the queue
        if (reserved.contains(item.slot)) continue;
        if (nothing_fits()) break;
        if (probe_asked) {  // (limits asked earlier in the pass hold a superset of those now)
          const Time longest =
              probe.n_more > 0 ? probe.more[probe.n_more - 1].limit : probe.limit;
          if (!probe.by_estimate && probe.extra <= 0 && item.prediction > longest) break;
        }
        if (!ask_within(item)) break;
      }
      return r;
    }
  }
  const auto last = Order::last(q);
  for (auto c = Order::first(q, q.queue_order().begin()); c != last;) {
    const WaitQueue::Item item = *c;
    ++c;  // the candidate may start: erased from the queue
    if (reserved.contains(item.slot)) continue;
    if (!try_candidate(item, q, a, nothing_fits, try_start, r)) break;
  }
  return r;
}

}  // namespace pass_detail

/// One scheduling pass at time `now` over the waiting jobs of `q` (started
/// jobs are erased from it) and the resources behind `a`.
template <class Adapter>
PassResult schedule_pass(Time now, WaitQueue& q, Adapter& a, const PolicyConfig& cfg) {
  static_assert(check_resource_adapter<Adapter>());
  if (cfg.selective.on() && cfg.backfill != BackfillOrder::None) {
    if (cfg.backfill == BackfillOrder::ShortestPrediction)
      return pass_detail::selective_pass<ShortestJobBackfilledFirst>(now, q, a, cfg);
    return pass_detail::selective_pass<FcfsBackfill>(now, q, a, cfg);
  }
  switch (cfg.backfill) {
    case BackfillOrder::ShortestPrediction:
      return pass_detail::pass<ShortestJobBackfilledFirst>(now, q, a, cfg);
    case BackfillOrder::Queue:
      return pass_detail::pass<FcfsBackfill>(now, q, a, cfg);
    case BackfillOrder::None:
      break;
  }
  return pass_detail::pass<pass_detail::NoBackfill>(now, q, a, cfg);
}

/// schedule_pass() continuing the last pass where it may (PassCarry), for
/// a caller that keeps `carry` from pass to pass and lists in `arrived` the
/// jobs pushed since the last pass, in queue order, every one after every
/// job that waited then (FCFS arrivals). This calls the adapter's
/// begin_pass(now), or its continue_pass(now) when it continues: that one
/// keeps the last pass's planning state and says false when anything but
/// time changed it (a job ended, started or was re-planned since) or when
/// time did (a planned end was passed). Arrivals are all the caller may
/// have changed in the queue; the queue itself tells of changed planning
/// values and of pushes out of queue order (WaitQueue::value_changes()),
/// and its size of erases.
template <class Adapter>
PassResult schedule_pass(Time now, WaitQueue& q, Adapter& a, const PolicyConfig& cfg,
                         PassCarry& carry, const std::vector<WaitQueue::Slot>& arrived) {
  static_assert(check_resource_adapter<Adapter>());
  if (!(carry.ok && continuable(cfg) && carry.values == q.value_changes() &&
        q.size() == carry.size + arrived.size() && a.continue_pass(now))) {
    carry.ok = false;
    a.begin_pass(now);
  }
  if (cfg.selective.on() && cfg.backfill != BackfillOrder::None) {
    carry.ok = false;
    return schedule_pass(now, q, a, cfg);
  }
  const WaitQueue::Slot* const p = arrived.data();
  switch (cfg.backfill) {
    case BackfillOrder::ShortestPrediction:
      return pass_detail::pass<ShortestJobBackfilledFirst>(now, q, a, cfg, &carry, p, arrived.size());
    case BackfillOrder::Queue:
      return pass_detail::pass<FcfsBackfill>(now, q, a, cfg, &carry, p, arrived.size());
    case BackfillOrder::None:
      break;
  }
  return pass_detail::pass<pass_detail::NoBackfill>(now, q, a, cfg, &carry, p, arrived.size());
}

}  // namespace easypp
