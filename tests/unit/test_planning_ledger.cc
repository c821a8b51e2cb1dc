// The kill-time promise as a property (plugin/planning_ledger.h, Slurm-free):
// the plugin writes planning values (start + prediction) into running jobs'
// end_time only while it holds slurmctld's locks, and every one of them is
// gone before the locks are released or yielded, whatever happens between:
// WILL_RUN probes, job starts (which need the true values back), errors
// thrown half-way, reconfigures, jobs ending or changing while the locks
// are yielded, shutdowns. A randomized driver checks after every step that
// outside the locked window every job's end_time is Slurm's own value, and
// that no time limit is ever written.
#include <cppunit/extensions/HelperMacros.h>

#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "easypp/prediction_book.h"
#include "planning_ledger.h"

using namespace easypp;
using namespace easypp::plugin;

namespace {

// A job record as far as the ledger is concerned.
struct FakeRecord {
  std::uint32_t job_id = 0;
  time_t start_time = 0;
  time_t tot_sus_time = 0;
  time_t end_time = 0;       // what slurmctld and its clients see
  std::uint32_t time_limit = 0;  // minutes
  bool running = true;
};

// slurmctld's job list, with its own idea of each job's true end_time.
struct FakeTable {
  std::map<std::uint32_t, FakeRecord> jobs;
  std::map<std::uint32_t, time_t> truth;  // Slurm's own end_time
  std::map<std::uint32_t, std::uint32_t> limits;
};

struct FakeJobs {
  FakeTable* t = nullptr;
  FakeRecord* find(std::uint32_t id) const {
    auto it = t->jobs.find(id);
    return it == t->jobs.end() ? nullptr : &it->second;
  }
  static bool active(const FakeRecord& r) { return r.running && r.end_time != 0; }
  static time_t start_of(const FakeRecord& r) { return r.start_time + r.tot_sus_time; }
};

class Driver {
 public:
  explicit Driver(std::uint32_t seed)
      : rng_(seed), book_(*preset("easy++"), options()), ledger_(FakeJobs{&table_}) {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      const unsigned op = rng_() % 10;
      if (op < 6) cycle();
      else if (op < 8) slurm_changes();
      else if (op < 9) reconfigure();
      else shutdown();
      check_unlocked("after step " + std::to_string(i));
    }
  }
  std::uint64_t checks = 0, planned_writes = 0;

 private:
  static PredictionBook::Options options() {
    PredictionBook::Options o;
    o.grace = 1;
    o.min_learned_runtime = 1;
    return o;
  }

  // A new running job, as slurmctld starts it: end = start + limit.
  void add_job(time_t start) {
    const std::uint32_t id = next_id_++;
    FakeRecord r;
    r.job_id = id;
    r.start_time = start;
    r.time_limit = 1 + std::uint32_t(rng_() % 120);
    r.end_time = start + time_t(r.time_limit) * 60;
    table_.jobs[id] = r;
    table_.truth[id] = r.end_time;
    table_.limits[id] = r.time_limit;
    book_.observe_running(id, 100 + id % 5, Time(r.time_limit) * 60, start, now_);
  }

  // One cycle under the locks: the swap on, probes, starts, yields, maybe an
  // error thrown half-way; the locks released at the end.
  void cycle() {
    now_ += 1 + time_t(rng_() % 90);
    book_.correct_expired(now_);
    try {
      EndTimeSwap<FakeJobs> swap(ledger_, book_);
      // as the plugin: applied at once or deferred to the first probe
      if (rng_() % 2) swap.apply(now_);
      else swap.apply_later(now_);
      swap.ensure();
      count_planned();
      const int actions = int(rng_() % 8);
      for (int a = 0; a < actions; ++a) {
        switch (rng_() % 5) {
          case 0: probe(swap); break;
          case 1:  // a start: select_nodes() sees the true values
            swap.restore();
            check_unlocked("during a start");
            add_job(now_);
            swap.apply_later(now_);  // written again by the next probe
            CPPUNIT_ASSERT(!swap.applied());
            check_unlocked("after a start, before the next probe");
            break;
          case 2:  // a yield: everything back, unlocked, Slurm moves on
            swap.restore();
            CPPUNIT_ASSERT_EQUAL(std::size_t(0), ledger_.leaked());
            check_unlocked("during a yield");
            slurm_changes();
            swap.apply_later(now_);
            break;
          case 3:
            if (rng_() % 4 == 0) throw std::runtime_error("cycle failed half-way");
            break;
          default: probe(swap); break;
        }
      }
    } catch (const std::runtime_error&) {
      // the cycle ended by an exception: the swap's destructor restored
    }
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), ledger_.leaked());
  }

  // One WILL_RUN probe: temporary values for some jobs, undone at once.
  void probe(EndTimeSwap<FakeJobs>& swap) {
    swap.ensure();  // as SlurmCluster::fits_after(): below the probe's mark
    CPPUNIT_ASSERT(swap.applied());
    ProbeScope<FakeJobs> scope(ledger_);
    for (auto& [id, r] : table_.jobs)
      if (rng_() % 2) scope.set(&r, now_ + (rng_() % 2 ? 1 : 315360000));
  }

  // While the locks are free: jobs end (and are learned or purged), limits
  // are raised by an admin, jobs are suspended, new jobs start.
  void slurm_changes() {
    now_ += time_t(rng_() % 30);
    for (auto it = table_.jobs.begin(); it != table_.jobs.end();) {
      FakeRecord& r = it->second;
      const unsigned what = rng_() % 10;
      if (what == 0) {  // ends: Slurm's end_time is now
        r.running = false;
        r.end_time = now_;
        table_.truth[r.job_id] = now_;
        book_.finish(r.job_id, 100 + r.job_id % 5, Time(r.time_limit) * 60,
                     now_ - r.start_time, now_);
        ++it;
      } else if (what == 1) {  // purged from the list
        table_.truth.erase(r.job_id);
        table_.limits.erase(r.job_id);
        it = table_.jobs.erase(it);
      } else if (what == 2) {  // scontrol update TimeLimit=...: Slurm moves end_time
        r.time_limit += 30;
        table_.limits[r.job_id] = r.time_limit;
        r.end_time += 30 * 60;
        table_.truth[r.job_id] = r.end_time;
        ++it;
      } else {
        ++it;
      }
    }
    const int starts = int(rng_() % 4);
    for (int i = 0; i < starts; ++i) add_job(now_ - time_t(rng_() % 600));
  }

  void reconfigure() {
    SchedulerConfig c = *preset("easy++");
    const CorrectionPolicy policies[] = {CorrectionPolicy::Estimate, CorrectionPolicy::Gradual,
                                         CorrectionPolicy::Exponential, CorrectionPolicy::None};
    c.correction = policies[rng_() % 4];
    c.predictor.window = 1 + int(rng_() % 5);
    book_.configure(c);
  }

  // The plugin stops (fini) and starts again: a new book and ledger.
  void shutdown() {
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), ledger_.leaked());
    book_.configure(*preset("easy++"));
  }

  void count_planned() {
    for (const auto& [id, r] : table_.jobs)
      if (r.end_time != table_.truth[id]) ++planned_writes;
  }

  // Outside the locked window every job shows Slurm's own end_time, and no
  // time limit was ever written.
  void check_unlocked(const std::string& when) {
    for (const auto& [id, r] : table_.jobs) {
      ++checks;
      CPPUNIT_ASSERT_EQUAL_MESSAGE(when + ", JobId=" + std::to_string(id), table_.truth[id],
                                   r.end_time);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(when + ", time limit of JobId=" + std::to_string(id),
                                   table_.limits[id], r.time_limit);
    }
  }

  std::mt19937 rng_;
  FakeTable table_;
  PredictionBook book_;
  PlanningLedger<FakeJobs> ledger_;
  time_t now_ = 1000000;
  std::uint32_t next_id_ = 1;
};

}  // namespace

class PlanningLedgerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PlanningLedgerTest);
  CPPUNIT_TEST(testRestoreOnlyWhatWasWritten);
  CPPUNIT_TEST(testLeakIsSeen);
  CPPUNIT_TEST(testRandomSequencesKeepTheKillTime);
  CPPUNIT_TEST_SUITE_END();

 public:
  // A value slurmctld changed meanwhile is not overwritten by the restore.
  void testRestoreOnlyWhatWasWritten() {
    FakeTable t;
    t.jobs[1] = FakeRecord{1, 0, 0, 600, 10, true};
    PlanningLedger<FakeJobs> ledger(FakeJobs{&t});
    const auto mark = ledger.mark();
    ledger.write(&t.jobs[1], 100);
    CPPUNIT_ASSERT_EQUAL(time_t(100), t.jobs[1].end_time);
    t.jobs[1].end_time = 1200;  // Slurm's own change
    ledger.restore_to(mark);
    CPPUNIT_ASSERT_EQUAL(time_t(1200), t.jobs[1].end_time);
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), ledger.leaked());
  }

  // A planning value left behind is counted and named; restore_to(0) repairs it.
  void testLeakIsSeen() {
    FakeTable t;
    t.jobs[7] = FakeRecord{7, 0, 0, 600, 10, true};
    PlanningLedger<FakeJobs> ledger(FakeJobs{&t});
    ledger.write(&t.jobs[7], 100);
    std::uint32_t first = 0;
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), ledger.leaked(&first));
    CPPUNIT_ASSERT_EQUAL(7u, first);
    ledger.restore_to(0);
    CPPUNIT_ASSERT_EQUAL(time_t(600), t.jobs[7].end_time);
    CPPUNIT_ASSERT_EQUAL(std::size_t(0), ledger.leaked());
  }

  void testRandomSequencesKeepTheKillTime() {
    std::uint64_t checks = 0, writes = 0;
    for (std::uint32_t seed = 1; seed <= 60; ++seed) {
      Driver d(seed);
      d.run(300);
      checks += d.checks;
      writes += d.planned_writes;
    }
    // The property was exercised: many jobs checked, many planning values written.
    CPPUNIT_ASSERT(checks > 100000);
    CPPUNIT_ASSERT(writes > 1000);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PlanningLedgerTest);
