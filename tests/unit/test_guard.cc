// The guards that bound how far backfilling pushes the head's reservation
// back (PolicyConfig::head_room, end_bound; docs/guard.md) and the gaming
// they must bound (issue 12, point 5): a user who teaches the predictor
// that its jobs are tiny gets a long job backfilled at once under the
// paper's easy++ and delays another user's head by hours; under the `site`
// preset (the plugin's defaults) the trick does not pay, and what a user
// can still do with real history stays within the guard's bound.
#include <cppunit/extensions/HelperMacros.h>

#include "easypp/prediction_book.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

namespace {

// 10 processors. A filler (user 1, 8 processors, 1000 s) holds the machine;
// the gamer (user 2) runs `shorts` short jobs of `short_run` seconds on the
// 2 processors left; at t=20 another user's head (user 3) needs the whole
// machine: under EASY it starts at 1000, when the filler ends (wait 980 s);
// at `long_at` the gamer submits a long job of `long_run` seconds (its
// estimate too) on the 2 free processors.
Workload scenario(Time short_run, bool short_completed, Time long_at, Time long_run) {
  return workload(10, {
                          {0, 1000, 1000, 8, 1},
                          {0, short_run, 600, 1, 2, short_completed},
                          {0, short_run, 600, 1, 2, short_completed},
                          {20, 100, 100, 10, 3},
                          {long_at, long_run, long_run, 2, 2},
                      });
}

constexpr JobHandle kHead = 3, kLong = 4;

Time head_wait(const Workload& w, const RunResult& r) {
  return r.jobs[kHead].start - w.jobs[kHead].submit;
}

}  // namespace

class GuardTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(GuardTest);
  CPPUNIT_TEST(testHeadRoom);
  CPPUNIT_TEST(testSwitches);
  CPPUNIT_TEST(testEndBoundWithRoom);
  CPPUNIT_TEST(testGamingPaysUnderEasyPlusPlus);
  CPPUNIT_TEST(testGamingDoesNotPayUnderSite);
  CPPUNIT_TEST(testFailedJobsTeachNothingUnderSite);
  CPPUNIT_TEST(testGuardBoundsWhatRealHistoryCanDo);
  CPPUNIT_TEST(testFirstReservationKeptByTheBook);
  CPPUNIT_TEST_SUITE_END();

 public:
  // max-delay: what is left of the delay past the head's first reservation.
  void testHeadRoom() {
    PolicyConfig c;
    CPPUNIT_ASSERT_EQUAL(kNever, c.head_room(100, 0, 50, 1000, 900));  // no guard
    c.max_delay = 3600;
    CPPUNIT_ASSERT_EQUAL(Time(3500), c.head_room(100, 0, 50, 1000, 900));
    // The first reservation is this one: the whole delay is left.
    CPPUNIT_ASSERT_EQUAL(Time(3600), c.head_room(100, 0, 50, 1000, kNever));
    // Pushed past it: nothing left, safe backfill.
    CPPUNIT_ASSERT_EQUAL(Time(0), c.head_room(100, 0, 50, 4600, 900));
    // A head that can never run here has no reservation to protect.
    CPPUNIT_ASSERT_EQUAL(kNever, c.head_room(100, 0, 50, kNever, 900));
  }

  void testSwitches() {
    PolicyConfig c;
    c.safe_after = 1000;  // by wait
    CPPUNIT_ASSERT(!c.starving(999, 0));
    CPPUNIT_ASSERT(c.starving(1000, 0));
    CPPUNIT_ASSERT(!c.starving(1000, kNever));  // unknown waiting clock
    c = PolicyConfig();
    c.safe_after_xfactor = 5;  // (wait + 100) / 100 >= 5: after 400 s
    CPPUNIT_ASSERT(!c.starving(399, 0, 100));
    CPPUNIT_ASSERT(c.starving(400, 0, 100));
    CPPUNIT_ASSERT_EQUAL(Time(0), c.head_room(400, 0, 100, 5000, kNever));
    c = PolicyConfig();
    c.safe_after_delay = 600;  // the reservation moved more than 600 s
    CPPUNIT_ASSERT(!c.starving(0, 0, 100, 1600, 1000));
    CPPUNIT_ASSERT(c.starving(0, 0, 100, 1601, 1000));
    CPPUNIT_ASSERT(!c.starving(0, 0, 100, 5000, kNever));  // first reservation: this one
    // A head waiting far past its first reservation, the shadow in the past.
    CPPUNIT_ASSERT(c.starving(2000, 0, 100, 1200, 1000));
  }

  void testEndBoundWithRoom() {
    PolicyConfig c;
    CPPUNIT_ASSERT_EQUAL(Time(150), c.end_bound(100, 50, 1000, kNever));
    CPPUNIT_ASSERT_EQUAL(Time(1100), c.end_bound(100, 50, 1000, 0));
    CPPUNIT_ASSERT_EQUAL(Time(800), c.end_bound(100, 50, 1000, 300));
    CPPUNIT_ASSERT_EQUAL(Time(150), c.end_bound(100, 50, 1000, 2000));
    c.safe = true;
    CPPUNIT_ASSERT_EQUAL(Time(1100), c.end_bound(100, 50, 1000, kNever));
  }

  // The numbers: the two 1-second jobs predict the 10-hour job at
  // 1 s, it is backfilled at once, and the head waits 36,010 s, not 980 s.
  void testGamingPaysUnderEasyPlusPlus() {
    const Workload w = scenario(1, true, 30, 36000);
    const RunResult easy = Simulator(w, sched("easy")).run();
    CPPUNIT_ASSERT_EQUAL(Time(980), head_wait(w, easy));
    const RunResult epp = Simulator(w, sched("easy++")).run();
    CPPUNIT_ASSERT_EQUAL(Time(30), epp.jobs[kLong].start);  // backfilled at once
    CPPUNIT_ASSERT_EQUAL(Time(36010), head_wait(w, epp));
  }

  // Under site: 1-second runtimes are not learned (learn-min-runtime=60),
  // the long job is planned with its estimate and waits behind the head.
  void testGamingDoesNotPayUnderSite() {
    const Workload w = scenario(1, true, 30, 36000);
    const SchedulerConfig site = sched("site");
    const RunResult r = Simulator(w, site).run();
    CPPUNIT_ASSERT_EQUAL(Time(980), head_wait(w, r));
    CPPUNIT_ASSERT(r.jobs[kLong].start >= r.jobs[kHead].start);
    // Within the guard's bound in any case.
    CPPUNIT_ASSERT(r.jobs[kHead].start <= r.jobs[kHead].first_reservation + site.policy.max_delay);
    CPPUNIT_ASSERT_EQUAL(Time(1000), r.jobs[kHead].first_reservation);
    // Each defence on its own: the history filter alone stops it; the
    // guard alone (a day) bounds it but lets a 10-hour job through.
    const RunResult filter_only = Simulator(w, sched("easy++:learn-min-runtime=60")).run();
    CPPUNIT_ASSERT_EQUAL(Time(980), head_wait(w, filter_only));
    const RunResult guard_only =
        Simulator(w, sched("site:learn=all:learn-min-runtime=0")).run();
    CPPUNIT_ASSERT_EQUAL(Time(36010), head_wait(w, guard_only));
    CPPUNIT_ASSERT(guard_only.jobs[kHead].start <= 1000 + site.policy.max_delay);
  }

  // Jobs that fail (or are cancelled) teach nothing under site, however
  // long they ran: two 2-minute failures do not make the 10-hour job short.
  void testFailedJobsTeachNothingUnderSite() {
    const Workload w = scenario(120, false, 200, 36000);
    CPPUNIT_ASSERT_EQUAL(Time(980), head_wait(w, Simulator(w, sched("site")).run()));
    // easy++ learns them: backfilled at 200, the head waits until 36,200.
    const RunResult epp = Simulator(w, sched("easy++")).run();
    CPPUNIT_ASSERT_EQUAL(Time(200), epp.jobs[kLong].start);
    CPPUNIT_ASSERT_EQUAL(Time(36180), head_wait(w, epp));
  }

  // A user who invests real runtime (two completed 2-minute jobs) is
  // learned; what the long job can then do to the head is bounded by
  // max-delay: a 10-hour job (inside the day) is let through, a 30-hour one
  // is not.
  void testGuardBoundsWhatRealHistoryCanDo() {
    const SchedulerConfig site = sched("site");
    const Workload ten = scenario(120, true, 200, 36000);
    const RunResult r10 = Simulator(ten, site).run();
    CPPUNIT_ASSERT_EQUAL(Time(200), r10.jobs[kLong].start);
    CPPUNIT_ASSERT(r10.jobs[kHead].start <= r10.jobs[kHead].first_reservation + site.policy.max_delay);
    const Workload thirty = scenario(120, true, 200, 30 * 3600);
    const RunResult r30 = Simulator(thirty, site).run();
    CPPUNIT_ASSERT_EQUAL(Time(980), head_wait(thirty, r30));
    CPPUNIT_ASSERT(r30.jobs[kLong].start >= r30.jobs[kHead].start);
    // The paper's easy++ lets the 30-hour job through as well.
    const RunResult e30 = Simulator(thirty, sched("easy++")).run();
    CPPUNIT_ASSERT_EQUAL(Time(200), e30.jobs[kLong].start);
    CPPUNIT_ASSERT(head_wait(thirty, e30) > 30 * 3600);
  }

  // The head's first reservation lives in the book, once.
  void testFirstReservationKeptByTheBook() {
    PredictionBook b(sched("site"));
    b.arrive(1, 7, 600, 0, 0);
    CPPUNIT_ASSERT_EQUAL(kNever, b.find(1)->first_reservation);
    CPPUNIT_ASSERT_EQUAL(kNever, b.reserved_as_head(1, kNever, 10));  // no reservation
    CPPUNIT_ASSERT_EQUAL(Time(500), b.reserved_as_head(1, 500, 10));
    CPPUNIT_ASSERT_EQUAL(Time(500), b.reserved_as_head(1, 900, 20));  // the first stays
    PredictionBook empty(sched("site"));
    CPPUNIT_ASSERT_EQUAL(kNever, empty.reserved_as_head(1, 5, 30));  // unknown job
    b.arrive(1, 7, 600, 0, 40);  // waits anew (requeued): a new first reservation
    CPPUNIT_ASSERT_EQUAL(kNever, b.find(1)->first_reservation);
    // A shadow in the past counts as now.
    CPPUNIT_ASSERT_EQUAL(Time(40), b.reserved_as_head(1, 35, 40));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(GuardTest);
