// run_batch replays once the settings whose replay_key is the same
// (libsim batch.cc). That is only right if such settings replay alike: this
// replays each of them on its own and compares every job's outcome.
#include <cppunit/extensions/HelperMacros.h>

#include <map>
#include <string>
#include <vector>

#include "easypp/sim/batch.h"
#include "easypp/sim/simulator.h"
#include "sim_fixtures.h"

using namespace easypp;
using namespace easypp::testing;

class BatchTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BatchTest);
  CPPUNIT_TEST(testSameKeySameReplay);
  CPPUNIT_TEST(testKeysKeepWhatDiffers);
  CPPUNIT_TEST_SUITE_END();

  // Many users with few jobs each, so that histories are often empty or
  // short (fallbacks and partial windows), and a load that builds queues.
  static Workload few_jobs_per_user(std::uint64_t seed) { return synthetic(seed, 700, 32, 60, 0.95); }

  // The thesis grid's knobs but for the window (1, 2, 3 and 7).
  static std::vector<std::string> grid() {
    std::vector<std::string> out;
    for (const char* corr : {"estimate", "gradual"})
      for (const char* fb : {"estimate", "relative"})
        for (const char* prop : {"no", "yes"})
          for (const char* full : {"full", "partial"})
            for (const char* metric : {"avg", "median", "min", "max"})
              for (const char* type : {"all", "immediate", "extended"})
                for (int window : {1, 2, 3, 7})
                  out.push_back(std::string("easy++:correction=") + corr + ":fallback=" + fb +
                                ":propagation=" + prop + ":fullness=" + full +
                                ":metric=" + metric + ":history-type=" + type +
                                ":window=" + std::to_string(window));
    return out;
  }

  static bool same(const RunResult& a, const RunResult& b) {
    if (a.jobs.size() != b.jobs.size()) return false;
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      const JobOutcome& x = a.jobs[i];
      const JobOutcome& y = b.jobs[i];
      if (x.start != y.start || x.first_prediction != y.first_prediction ||
          x.final_prediction != y.final_prediction || x.corrections != y.corrections ||
          x.first_reservation != y.first_reservation || x.backfilled != y.backfilled)
        return false;
    }
    return true;
  }

 public:
  void testSameKeySameReplay() {
    // Every setting replayed on its own; those with one key must agree with
    // the first of them, job by job.
    const std::vector<std::string> specs = grid();
    std::size_t shared = 0;
    for (std::uint64_t seed : {1, 2}) {
      const Workload w = few_jobs_per_user(seed);
      std::map<std::string, RunResult> first;
      for (const std::string& s : specs) {
        const SchedulerConfig c = sched(s);
        RunResult r = Simulator(w, c).run();
        const auto [it, fresh] = first.emplace(replay_key(c), RunResult{});
        if (fresh) {
          it->second = std::move(r);
        } else {
          ++shared;
          CPPUNIT_ASSERT_MESSAGE(s + " (seed " + std::to_string(seed) +
                                     ") replays unlike the first setting of its key",
                                 same(it->second, r));
        }
      }
    }
    // 768 settings per seed, 192 per window. Window 1: the metric and the
    // fullness do not matter, nor the fallback with history-type=all: 20
    // replays. Window 2: the median is the average (48 settings), and
    // 'relative' is 'estimate' with history-type=all and fullness=partial
    // (12 more). Windows 3 and 7: the latter alone (16 each).
    CPPUNIT_ASSERT_EQUAL(std::size_t(2 * ((192 - 20) + (48 + 12) + 2 * 16)), shared);
  }

  void testKeysKeepWhatDiffers() {
    // The workload does exercise the fallback: where the keys differ, the
    // replays do. 'relative' against 'estimate' with a full window (the
    // fallback with some history) and with history-type=extended (the
    // fallback while the user has other jobs' history).
    const Workload w = few_jobs_per_user(1);
    for (const char* rest : {":fullness=full:history-type=all:window=3",
                             ":fullness=partial:history-type=extended:window=3"}) {
      const SchedulerConfig a = sched(std::string("easy++:fallback=estimate") + rest);
      const SchedulerConfig b = sched(std::string("easy++:fallback=relative") + rest);
      CPPUNIT_ASSERT(replay_key(a) != replay_key(b));
      CPPUNIT_ASSERT_MESSAGE(rest, !same(Simulator(w, a).run(), Simulator(w, b).run()));
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BatchTest);
