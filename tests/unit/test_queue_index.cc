// The wait queue's candidate indexes (queue.h): for random queues, random
// changes and random probes (by prediction, with or without a guard's
// room, and by estimate), the first job
// of queue order (and of SJBF order) that passes a probe is the one a walk
// of the whole order finds,
// including after hiding refused jobs, and with positions given by the
// caller, pushed out of order, or renumbered.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <random>
#include <vector>

#include "easypp/queue.h"

using namespace easypp;

namespace {

// The reference: walk the order, skipping hidden jobs.
WaitQueue::Slot walk_queue(const WaitQueue& q, const CandidateProbe& p) {
  for (const WaitQueue::Item it : q.queue_order()) {
    const WaitQueue::Entry& e = q.entry(it.slot);
    if (!e.hidden && p.passes(e.width, e.prediction, e.estimate)) return it.slot;
  }
  return WaitQueue::kNoSlot;
}
// The same from a given job on (first_in_queue_order's `from`).
WaitQueue::Slot walk_queue_from(const WaitQueue& q, const CandidateProbe& p, WaitQueue::Slot from) {
  bool on = false;
  for (const WaitQueue::Item it : q.queue_order()) {
    on = on || it.slot == from;
    const WaitQueue::Entry& e = q.entry(it.slot);
    if (on && !e.hidden && p.passes(e.width, e.prediction, e.estimate)) return it.slot;
  }
  return WaitQueue::kNoSlot;
}
WaitQueue::Slot walk_prediction(WaitQueue& q, const CandidateProbe& p) {
  for (const WaitQueue::Item& it : q.prediction_order()) {
    const WaitQueue::Entry& e = q.entry(it.slot);
    if (!e.hidden && p.passes(e.width, e.prediction, e.estimate)) return it.slot;
  }
  return WaitQueue::kNoSlot;
}

struct Scenario {
  BackfillOrder order;
  bool shuffled_keys;     // pushes out of queue order (renumbering)
  bool given_positions;   // the caller's stable positions
  bool classes;           // width classes fitted to the widths
  bool many_widths = false;  // thousands of distinct widths (fewer estimate classes)
  bool bursts = false;       // between passes, half the queue re-predicted (some twice)
};

void run(const Scenario& sc, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int procs = sc.many_widths ? 4000 + int(rng() % 4000) : 8 + int(rng() % 500);
  WaitQueue q(sc.order);
  // (Over 512 distinct widths: the estimate classes are capped.)
  const int n = sc.many_widths ? 700 + int(rng() % 300) : 50 + int(rng() % 400);
  std::vector<std::int64_t> key(static_cast<std::size_t>(n)), width(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    key[std::size_t(i)] = sc.shuffled_keys ? std::int64_t(rng() % 1000) * 1000 + i : i;
    width[std::size_t(i)] = 1 + std::int64_t(sc.many_widths || rng() % 4 == 0 ? rng() % procs : rng() % 8);
  }
  if (sc.classes) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> hist;
    std::vector<std::int64_t> ws = width;
    std::sort(ws.begin(), ws.end());
    for (std::int64_t w : ws) {
      if (hist.empty() || hist.back().first != w) hist.push_back({w, 0});
      ++hist.back().second;
    }
    q.set_width_classes(WaitQueue::width_classes_for(hist, 6));
  }
  // Stable positions: the rank of each key.
  std::vector<std::uint32_t> rank(static_cast<std::size_t>(n));
  {
    std::vector<int> idx(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) idx[std::size_t(i)] = i;
    std::sort(idx.begin(), idx.end(), [&](int a, int b) { return key[std::size_t(a)] < key[std::size_t(b)]; });
    for (int r = 0; r < n; ++r) rank[std::size_t(idx[std::size_t(r)])] = std::uint32_t(r);
  }
  std::vector<WaitQueue::Slot> slot(std::size_t(n), WaitQueue::kNoSlot);
  std::int64_t top_key = *std::max_element(key.begin(), key.end());
  auto push = [&](int i) {
    // Some estimates far past any limit (the top estimate classes).
    const Time p = 1 + Time(rng() % 5000),
               e = p + Time(rng() % 10 == 0 ? rng() % (Time(1) << 40) : rng() % 5000);
    slot[std::size_t(i)] = q.push(JobHandle(i), QueueKey{key[std::size_t(i)], 0}, p, e,
                                  width[std::size_t(i)], 0,
                                  sc.given_positions ? rank[std::size_t(i)] : WaitQueue::kAutoPosition);
  };
  const std::string msg = "seed " + std::to_string(seed);
  for (int i = 0; i < n; ++i) {
    push(i);
    if (rng() % 3 == 0) {  // a random change
      const int j = int(rng() % std::uint32_t(i + 1));
      if (slot[std::size_t(j)] == WaitQueue::kNoSlot) continue;
      if (rng() % 2) {
        q.erase(slot[std::size_t(j)]);
        slot[std::size_t(j)] = WaitQueue::kNoSlot;
      } else {
        q.set_prediction(slot[std::size_t(j)], 1 + Time(rng() % 5000));
      }
    }
  }
  for (int probe = 0; probe < 60; ++probe) {
    CandidateProbe p;
    p.free = std::int64_t(rng() % std::uint32_t(procs));
    p.extra = std::min<std::int64_t>(p.free, std::int64_t(rng() % 6));
    p.limit = Time(rng() % 6000) - 500;
    p.by_estimate = rng() % 3 == 0;
    // A guard's finite room (by prediction only): the estimate within limit + room.
    if (!p.by_estimate && rng() % 2) p.room = 1 + Time(rng() % 4000);
    const bool by_queue = sc.order == BackfillOrder::Queue;
    // Conservative's steps (queue order only): narrower jobs may be longer.
    if (by_queue && rng() % 2) {
      std::int64_t prev = p.free;  // widths in (extra, prev), descending
      Time lim = p.limit;
      while (p.n_more < CandidateProbe::kMaxSteps && prev - 1 > p.extra) {
        prev = p.extra + 1 + std::int64_t(rng() % std::uint64_t(prev - 1 - p.extra));
        lim += 1 + Time(rng() % 3000);
        p.more[p.n_more++] = CandidateProbe::Step{prev, lim};
      }
    }
    // A pass: probe, hide what is found (as a refused candidate), probe again.
    for (int step = 0; step < 8; ++step) {
      const WaitQueue::Slot want = by_queue ? walk_queue(q, p) : walk_prediction(q, p);
      const WaitQueue::Slot got = by_queue ? q.first_in_queue_order(p) : q.first_in_prediction_order(p);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, want, got);
      if (by_queue && !q.empty()) {  // from a job on (conservative's next candidate)
        auto at = q.queue_order().begin();
        std::advance(at, std::ptrdiff_t(rng() % q.size()));
        const WaitQueue::Slot from = (*at).slot;
        CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, walk_queue_from(q, p, from), q.first_in_queue_order(p, from));
      }
      if (got == WaitQueue::kNoSlot) break;
      if (rng() % 3 == 0) {  // started: erased
        const JobHandle h = q.entry(got).handle;
        q.erase(got);
        slot[h] = WaitQueue::kNoSlot;
        p.free -= std::min(p.free, width[h]);
        p.extra = std::min(p.extra, p.free);
        // Steps stay narrower than free (and wider than extra).
        unsigned k = 0;
        for (unsigned i = 0; i < p.n_more; ++i)
          if (p.more[i].width < p.free && p.more[i].width > p.extra) p.more[k++] = p.more[i];
        p.n_more = k;
      } else {
        q.hide(got);
        // Re-predicted while hidden: back with its new value after the pass.
        if (rng() % 4 == 0) q.set_prediction(got, 1 + Time(rng() % 8000));
        // Or finished while hidden (the plugin's job list changed).
        else if (rng() % 8 == 0) {
          slot[q.entry(got).handle] = WaitQueue::kNoSlot;
          q.erase(got);
        }
      }
    }
    q.unhide_all();
    // Every waiting job is back (the reference skips hidden jobs too, so a
    // job left hidden would go unnoticed above).
    for (int i = 0; i < n; ++i)
      if (slot[std::size_t(i)] != WaitQueue::kNoSlot)
        CPPUNIT_ASSERT_MESSAGE(msg, !q.entry(slot[std::size_t(i)]).hidden);
    // Propagation: many jobs re-predicted between two passes, some twice,
    // and some of them then erased and their slots reused by new jobs
    // (the SJBF heaps take re-predictions at the next query of their
    // width, all at once when they are many).
    if (sc.bursts) {
      const int m = n / 2 + int(rng() % std::uint32_t(n / 2 + 1));
      for (int c = 0; c < m; ++c) {
        const int j = int(rng() % std::uint32_t(n));
        if (slot[std::size_t(j)] == WaitQueue::kNoSlot) continue;
        q.set_prediction(slot[std::size_t(j)], 1 + Time(rng() % 8000));
        if (rng() % 16 == 0) {
          q.erase(slot[std::size_t(j)]);
          slot[std::size_t(j)] = WaitQueue::kNoSlot;
          const int k = int(rng() % std::uint32_t(n));
          if (!sc.given_positions && slot[std::size_t(k)] == WaitQueue::kNoSlot) {
            width[std::size_t(k)] = 1 + std::int64_t(rng() % std::uint32_t(procs));
            // Behind every job pushed so far (as FCFS arrivals): no
            // renumbering, which would rebuild the heaps and hide a
            // pending slot reused in another width.
            key[std::size_t(k)] = ++top_key;
            push(k);
            q.set_prediction(slot[std::size_t(k)], 1 + Time(rng() % 8000));
          }
        }
      }
    }
    // Changes between passes, once the indexes are built: re-predictions
    // (some past the estimate), finishes, and new jobs (new widths too).
    for (int c = int(rng() % 4); c > 0; --c) {
      const int j = int(rng() % std::uint32_t(n));
      if (slot[std::size_t(j)] == WaitQueue::kNoSlot) {
        if (sc.given_positions) continue;
        if (rng() % 4 == 0) width[std::size_t(j)] = 1 + std::int64_t(rng() % std::uint32_t(procs));
        push(j);  // out of queue order: renumbered
      } else if (rng() % 3 == 0) {
        q.erase(slot[std::size_t(j)]);
        slot[std::size_t(j)] = WaitQueue::kNoSlot;
      } else {
        q.set_prediction(slot[std::size_t(j)], 1 + Time(rng() % 8000));
      }
    }
  }
}

// Groups (WaitQueue::set_group): jobs sharing one value, changed for all at
// once. A model keeps each job's group or own value; every probe's answer
// must be the walk's under the model's values, and every entry must read
// its model value; jobs join, move between and leave groups, groups change
// between passes, and pushes out of order renumber the positions (the
// groups' leaves rebuilt).
void run_groups(std::uint32_t seed, bool shuffled_keys, BackfillOrder order = BackfillOrder::Queue) {
  std::mt19937 rng(seed);
  WaitQueue q(order);
  const bool sjbf = order == BackfillOrder::ShortestPrediction;
  const int procs = 8 + int(rng() % 200);
  const int n = 100 + int(rng() % 400);
  const std::uint32_t groups = 1 + rng() % 6;
  const std::size_t jobs = std::size_t(n);
  std::vector<std::int64_t> key(jobs), width(jobs);
  std::vector<Time> own(jobs), est(jobs), gval(groups);
  std::vector<std::uint32_t> grp(jobs, WaitQueue::kNoGroup);
  std::vector<WaitQueue::Slot> slot(jobs, WaitQueue::kNoSlot);
  std::int64_t top_key = 0;
  std::uint32_t burst = 0;
  // A group's value is mostly long, now and then short: the index must
  // follow it down (a short group is a candidate where it was not).
  auto group_value = [&] { return rng() % 4 == 0 ? 1 + Time(rng() % 300) : 3000 + Time(rng() % 5000); };
  for (std::uint32_t g = 0; g < groups; ++g) {
    gval[g] = group_value();
    q.set_group_prediction(g, gval[g]);
  }
  auto value = [&](int i) { return grp[std::size_t(i)] != WaitQueue::kNoGroup ? gval[grp[std::size_t(i)]] : own[std::size_t(i)]; };
  auto push = [&](int i) {
    const std::size_t k = std::size_t(i);
    key[k] = shuffled_keys && rng() % 4 == 0 ? std::int64_t(rng() % std::uint32_t(top_key + 1)) : ++top_key;
    width[k] = 1 + std::int64_t(rng() % 4 == 0 ? rng() % std::uint32_t(procs) : rng() % 8);
    own[k] = 1000 + Time(rng() % 5000);
    // (SJBF: runs need jobs of one width and estimate; estimates near the
    // probes' limits, few of them round.)
    est[k] = !sjbf ? own[k] + Time(rng() % 5000)
                   : rng() % 2 ? 200 * (1 + Time(rng() % 5)) : 1 + Time(rng() % 1200);
    slot[k] = q.push(JobHandle(i), QueueKey{key[k], i}, own[k], est[k], width[k]);
    grp[k] = WaitQueue::kNoGroup;
    if (rng() % 4 != 0) {  // in bursts of one group, as a user's jobs arrive
      if (rng() % 8 == 0) burst = rng() % groups;
      grp[k] = burst;
      q.set_group(slot[k], grp[k]);
    }
  };
  // The reference: the first visible job that passes, in queue order or
  // (SJBF) by (value, queue order).
  auto walk = [&](const CandidateProbe& p) {
    WaitQueue::Slot best = WaitQueue::kNoSlot;
    Time best_value = 0;
    for (const WaitQueue::Item it : q.queue_order()) {
      const WaitQueue::Entry& e = q.entry(it.slot);
      const int i = int(e.handle);
      CPPUNIT_ASSERT_EQUAL(value(i), e.prediction);
      CPPUNIT_ASSERT_EQUAL(value(i), it.prediction);
      if (e.hidden || !p.passes(width[std::size_t(i)], value(i), est[std::size_t(i)])) continue;
      if (!sjbf) return it.slot;
      if (best == WaitQueue::kNoSlot || value(i) < best_value) {
        best = it.slot;
        best_value = value(i);
      }
    }
    return best;
  };
  auto first = [&](const CandidateProbe& p) {
    return sjbf ? q.first_in_prediction_order(p) : q.first_in_queue_order(p);
  };
  auto change = [&] {
    const int i = int(rng() % std::uint32_t(n));
    const std::size_t k = std::size_t(i);
    const std::uint32_t what = rng() % 8;
    if (slot[k] == WaitQueue::kNoSlot) {
      push(i);
    } else if (what == 0) {
      q.erase(slot[k]);
      slot[k] = WaitQueue::kNoSlot;
    } else if (what == 1) {  // its own value (out of its group)
      own[k] = 1 + Time(rng() % 8000);
      grp[k] = WaitQueue::kNoGroup;
      q.set_prediction(slot[k], own[k]);
    } else if (what == 2) {  // into another group, or none (keeping the value)
      const std::uint32_t g = rng() % 3 == 0 ? WaitQueue::kNoGroup : rng() % groups;
      if (g == WaitQueue::kNoGroup) own[k] = value(i);
      grp[k] = g;
      q.set_group(slot[k], g);
    } else {  // a group's new value
      const std::uint32_t g = rng() % groups;
      gval[g] = group_value();
      q.set_group_prediction(g, gval[g]);
    }
  };
  for (int i = 0; i < n; ++i) {
    if (slot[std::size_t(i)] == WaitQueue::kNoSlot) push(i);  // (a change may have)
    if (rng() % 3 == 0) change();
  }
  const std::string msg = "seed " + std::to_string(seed);
  for (int pass = 0; pass < 60; ++pass) {
    CandidateProbe p;
    p.free = std::int64_t(rng() % std::uint32_t(procs));
    p.extra = rng() % 4 == 0 ? std::min<std::int64_t>(p.free, std::int64_t(rng() % 6)) : 0;
    p.limit = Time(rng() % 1000);
    p.by_estimate = rng() % 8 == 0;
    if (!p.by_estimate && rng() % 3 == 0) p.room = 1 + Time(rng() % 1500);
    for (int step = 0; step < 8; ++step) {
      const WaitQueue::Slot want = walk(p);
      const WaitQueue::Slot got = first(p);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, want, got);
      if (got == WaitQueue::kNoSlot) break;
      const JobHandle h = q.entry(got).handle;
      if (rng() % 3 == 0) {
        q.erase(got);
        slot[h] = WaitQueue::kNoSlot;
        p.free -= std::min(p.free, width[h]);
        p.extra = std::min(p.extra, p.free);
      } else {
        q.hide(got);
        const std::uint32_t what = rng() % 8;
        if (what < 2) {  // its group changes while it is hidden
          const std::uint32_t g = grp[h] != WaitQueue::kNoGroup ? grp[h] : rng() % groups;
          gval[g] = group_value();
          q.set_group_prediction(g, gval[g]);
        } else if (what == 2) {  // it moves to another group, or none, while hidden
          const std::uint32_t g = rng() % 3 == 0 ? WaitQueue::kNoGroup : rng() % groups;
          if (g == WaitQueue::kNoGroup) own[h] = value(int(h));
          grp[h] = g;
          q.set_group(got, g);
        } else if (what == 3) {  // it gets a value of its own while hidden
          own[h] = 1 + Time(rng() % 8000);
          grp[h] = WaitQueue::kNoGroup;
          q.set_prediction(got, own[h]);
        }
      }
    }
    q.unhide_all();
    for (int c = int(rng() % 12); c > 0; --c) change();
  }
}

}  // namespace

class QueueIndexTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(QueueIndexTest);
  CPPUNIT_TEST(testQueueOrderPushOrder);
  CPPUNIT_TEST(testQueueOrderOutOfOrder);
  CPPUNIT_TEST(testQueueOrderGivenPositions);
  CPPUNIT_TEST(testPredictionOrder);
  CPPUNIT_TEST(testCompaction);
  CPPUNIT_TEST(testPendingBoundedForUnreadRanks);
  CPPUNIT_TEST(testNewWidthsBetweenProbes);
  CPPUNIT_TEST(testWidthClasses);
  CPPUNIT_TEST(testGroups);
  CPPUNIT_TEST(testRoomBoundsTheSteps);
  CPPUNIT_TEST_SUITE_END();

 public:
  // The guard's room bounds a conservative step as it bounds test (a): a
  // queue of 1,000 jobs whose predictions (100 s) fit a step (width 5,
  // 200 s) but whose estimates (10,000 s) end past it plus the room (500 s)
  // holds no candidate, and the index says so from its root, without
  // reading the jobs; a job asking 600 s, pushed last, is found reading its
  // block alone. (Without the estimate's bound on the steps, every block was
  // read at every query: 32 and 32.)
  void testRoomBoundsTheSteps() {
    WaitQueue q(BackfillOrder::Queue);
    std::vector<WaitQueue::Slot> s;
    for (int i = 0; i < 1000; ++i) s.push_back(q.push(JobHandle(i), QueueKey{i, 0}, 100, 10000, 1));
    CandidateProbe p;
    p.free = 10;
    p.extra = 0;
    p.limit = 50;  // test (a): no prediction fits
    p.room = 500;
    p.more[p.n_more++] = CandidateProbe::Step{5, 200};
    CPPUNIT_ASSERT_EQUAL(WaitQueue::kNoSlot, q.first_in_queue_order(p));
    CPPUNIT_ASSERT_EQUAL(WaitQueue::kNoSlot, q.first_in_queue_order(p, s[10]));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), q.queue_order_blocks_read());
    const WaitQueue::Slot asks_less = q.push(1000, QueueKey{1000, 0}, 100, 600, 1);
    CPPUNIT_ASSERT_EQUAL(asks_less, q.first_in_queue_order(p));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), q.queue_order_blocks_read());
    CPPUNIT_ASSERT_EQUAL(asks_less, q.first_in_queue_order(p, s[10]));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), q.queue_order_blocks_read());
    // Without the room, the first job passes its step.
    p.room = kNever;
    CPPUNIT_ASSERT_EQUAL(s[0], q.first_in_queue_order(p));
  }
  void testGroups() {
    // A group of 200 long jobs, then a short job of its own: the short one
    // is the first candidate until the group becomes shorter still, and
    // again once the group is long (its leaves must follow both ways), also
    // after a renumbering.
    for (bool renumbered : {false, true}) {
      WaitQueue q(BackfillOrder::Queue);
      std::vector<WaitQueue::Slot> s;
      q.set_group_prediction(3, 5000);
      for (int i = 0; i < 200; ++i) {
        s.push_back(q.push(JobHandle(i), QueueKey{10 + i, 0}, 5000, 9000, 1));
        q.set_group(s.back(), 3);
      }
      const WaitQueue::Slot alone = q.push(500, QueueKey{1000, 0}, 100, 9000, 1);
      CandidateProbe p;
      p.free = 4;
      p.extra = 0;
      p.limit = 500;
      CPPUNIT_ASSERT_EQUAL(alone, q.first_in_queue_order(p));
      if (renumbered) {  // out of order: positions renumbered at the next query
        q.erase(q.push(600, QueueKey{5, 0}, 9000, 9000, 9));
      }
      q.set_group_prediction(3, 50);
      CPPUNIT_ASSERT_EQUAL(s[0], q.first_in_queue_order(p));
      CPPUNIT_ASSERT_EQUAL(Time(50), q.entry(s[150]).prediction);
      q.set_group_prediction(3, 7000);
      CPPUNIT_ASSERT_EQUAL(alone, q.first_in_queue_order(p));
      q.set_group(s[150], WaitQueue::kNoGroup);  // keeps 7000
      q.set_group_prediction(3, 60);
      CPPUNIT_ASSERT_EQUAL(Time(7000), q.entry(s[150]).prediction);
      q.erase(s[0]);
      CPPUNIT_ASSERT_EQUAL(s[1], q.first_in_queue_order(p));
      for (int i = 1; i < 150; ++i) q.erase(s[std::size_t(i)]);
      CPPUNIT_ASSERT_EQUAL(s[151], q.first_in_queue_order(p));
    }
    for (std::uint32_t s = 1; s <= 80; ++s) run_groups(s, s % 2 == 0);
    // SJBF: a group's jobs of one width and estimate are one heap item (a
    // run), which moves to the next job when its first one leaves.
    for (std::uint32_t s = 1; s <= 120; ++s)
      run_groups(s, s % 2 == 0, BackfillOrder::ShortestPrediction);
  }
  void testQueueOrderPushOrder() {
    for (std::uint32_t s = 1; s <= 60; ++s) run({BackfillOrder::Queue, false, false, s % 2 == 0}, s);
  }
  void testQueueOrderOutOfOrder() {
    for (std::uint32_t s = 1; s <= 40; ++s) run({BackfillOrder::Queue, true, false, s % 2 == 0}, s);
  }
  void testQueueOrderGivenPositions() {
    for (std::uint32_t s = 1; s <= 40; ++s) run({BackfillOrder::Queue, true, true, s % 2 == 0}, s);
  }
  void testPredictionOrder() {
    for (std::uint32_t s = 1; s <= 60; ++s)
      run({BackfillOrder::ShortestPrediction, s % 3 == 0, false, false}, s);
    for (std::uint32_t s = 1; s <= 20; ++s)  // the caller's positions
      run({BackfillOrder::ShortestPrediction, true, true, false}, s);
    for (std::uint32_t s = 1; s <= 20; ++s)  // estimate classes capped by the widths
      run({BackfillOrder::ShortestPrediction, s % 2 == 0, false, false, true}, s);
    for (std::uint32_t s = 1; s <= 40; ++s)  // propagation bursts
      run({BackfillOrder::ShortestPrediction, s % 3 == 0, s % 5 == 0, false, s % 4 == 0, true}, s);
  }
  // A long FCFS life (arrivals, starts): automatic positions are renumbered
  // from 0 when they run out, the index stays right.
  void testCompaction() {
    WaitQueue q(BackfillOrder::Queue);
    std::mt19937 rng(7);
    std::vector<WaitQueue::Slot> live;
    for (int i = 0; i < 20000; ++i) {
      live.push_back(q.push(JobHandle(i), QueueKey{i, 0}, 1 + Time(rng() % 100), 200,
                            1 + std::int64_t(rng() % 16)));
      while (live.size() > 40 || (!live.empty() && rng() % 2)) {
        const std::size_t k = rng() % live.size();
        q.erase(live[k]);
        live.erase(live.begin() + std::ptrdiff_t(k));
      }
      if (i % 97 == 0) {
        CandidateProbe p;
        p.free = std::int64_t(rng() % 16);
        p.extra = std::min<std::int64_t>(p.free, std::int64_t(rng() % 4));
        p.limit = Time(rng() % 100);
        CPPUNIT_ASSERT_EQUAL(walk_queue(q, p), q.first_in_queue_order(p));
      }
    }
  }
  // Jobs wider than every probe's free width: their rank is never read,
  // so its re-predictions are never applied by a query. Jobs leave and
  // arrive (slots reused) and are re-predicted over and over: what is
  // listed stays within a multiple of the queue, and the order stays right.
  void testPendingBoundedForUnreadRanks() {
    WaitQueue q(BackfillOrder::ShortestPrediction);
    std::mt19937 rng(11);
    std::vector<WaitQueue::Slot> wide, narrow;
    JobHandle next = 0;
    for (int i = 0; i < 50; ++i) {
      wide.push_back(q.push(next, QueueKey{std::int64_t(next), 0}, 1 + Time(rng() % 1000), 2000, 64));
      ++next;
      narrow.push_back(q.push(next, QueueKey{std::int64_t(next), 0}, 1 + Time(rng() % 1000), 2000, 1));
      ++next;
    }
    std::size_t most = 0;
    for (int round = 0; round < 2000; ++round) {
      // one wide job leaves, another arrives (its slot reused)
      const std::size_t k = rng() % wide.size();
      q.erase(wide[k]);
      wide[k] = q.push(next, QueueKey{std::int64_t(next), 0}, 1 + Time(rng() % 1000), 2000, 64);
      ++next;
      for (WaitQueue::Slot s : wide) q.set_prediction(s, 1 + Time(rng() % 1000));
      for (WaitQueue::Slot s : narrow) q.set_prediction(s, 1 + Time(rng() % 1000));
      CandidateProbe p;  // narrow probes only
      p.free = 4;
      p.extra = 0;
      p.limit = Time(rng() % 1000);
      CPPUNIT_ASSERT_EQUAL(walk_prediction(q, p), q.first_in_prediction_order(p));
      most = std::max(most, q.pending_listed());
    }
    CPPUNIT_ASSERT(most <= 2 * q.size() + 2 * 65);
    CandidateProbe all;  // now the wide rank is read
    all.free = 64;
    all.extra = 0;
    all.limit = 500;
    CPPUNIT_ASSERT_EQUAL(walk_prediction(q, all), q.first_in_prediction_order(all));
  }
  // New widths between SJBF probes: each adds a rank below or among the
  // ranks a probe reads, and moves the ranks above it (and the table of
  // small widths' ranks, which stops at 2^16); widths arrive in any order,
  // narrow, wide and beyond that table, and every probe finds what a walk
  // finds. (The other scenarios push the whole queue before probing.)
  void testNewWidthsBetweenProbes() {
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
      WaitQueue q(BackfillOrder::ShortestPrediction);
      std::mt19937 rng(seed);
      std::vector<WaitQueue::Slot> live;
      auto width = [&]() -> std::int64_t {
        switch (rng() % 4) {
          case 0: return 1 + std::int64_t(rng() % 16);
          case 1: return 1 + std::int64_t(rng() % 3000);
          case 2: return 3000 + std::int64_t(rng() % 3000);
          default: return 4000 + std::int64_t(rng() % 100000);  // across 2^16, the table's end
        }
      };
      for (int i = 0; i < 1500; ++i) {
        live.push_back(q.push(JobHandle(i), QueueKey{i, 0}, 1 + Time(rng() % 1000), 5000, width()));
        if (live.size() > 200 || rng() % 4 == 0) {
          const std::size_t k = rng() % live.size();
          q.erase(live[k]);
          live.erase(live.begin() + std::ptrdiff_t(k));
        }
        CandidateProbe p;
        p.free = width() - 1;  // below, at and above the widths seen
        p.extra = std::min<std::int64_t>(p.free, std::int64_t(rng() % 64));
        p.limit = Time(rng() % 1200);
        const std::string msg = "seed " + std::to_string(seed) + " job " + std::to_string(i);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(msg, walk_prediction(q, p), q.first_in_prediction_order(p));
      }
    }
  }
  void testWidthClasses() {
    // Few distinct widths: one class each.
    const auto b = WaitQueue::width_classes_for({{1, 100}, {4, 50}, {64, 3}}, 32);
    CPPUNIT_ASSERT(std::vector<std::int64_t>({1, 4, 64}) == b);
    // Many: at most the maximum, ascending, about as many jobs in each.
    std::vector<std::pair<std::int64_t, std::uint64_t>> h;
    for (int w = 1; w <= 1000; ++w) h.push_back({w, 10});
    const auto c = WaitQueue::width_classes_for(h, 8);
    CPPUNIT_ASSERT_EQUAL(std::size_t(8), c.size());
    CPPUNIT_ASSERT(std::is_sorted(c.begin(), c.end()));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(126), c[1]);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(QueueIndexTest);
