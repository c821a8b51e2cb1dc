// Tests of the seeded synthetic workload generator (libpredict/src/generator.cc,
// docs/synthetic-workload.md): determinism, offered load, the SWF contract, and
// the properties EASY++ relies on (round estimates with the maximum the most
// popular, a daily cycle, users whose last two runtimes predict the next).
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "easypp/sim/generator.h"
#include "easypp/sim/workload.h"

using namespace easypp;

namespace {

GeneratorConfig config(std::uint64_t seed, std::uint32_t jobs) {
  GeneratorConfig c;
  c.seed = seed;
  c.jobs = jobs;
  return c;
}

std::vector<swf::Record> generate(const GeneratorConfig& c, swf::Header* h = nullptr) {
  return generate_records(c, h);
}

bool same(const swf::Record& a, const swf::Record& b) {
  return a.job == b.job && a.submit == b.submit && a.wait == b.wait && a.run == b.run &&
         a.alloc_procs == b.alloc_procs && a.avg_cpu == b.avg_cpu && a.used_mem == b.used_mem &&
         a.req_procs == b.req_procs && a.req_time == b.req_time && a.req_mem == b.req_mem &&
         a.status == b.status && a.user == b.user && a.group == b.group && a.app == b.app &&
         a.queue == b.queue && a.partition == b.partition && a.preceding == b.preceding &&
         a.think == b.think;
}

/// FNV-1a over every field of every record (integers as 64-bit values, the
/// fractional fields through their exact bit patterns).
std::uint64_t digest(const std::vector<swf::Record>& rs) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  auto mixd = [&](double d) {
    std::uint64_t v;
    static_assert(sizeof v == sizeof d, "64-bit double");
    std::memcpy(&v, &d, sizeof v);
    mix(v);
  };
  for (const auto& r : rs) {
    for (std::int64_t v : {r.job, r.submit, r.wait, r.run, r.alloc_procs, r.req_procs, r.req_time,
                           r.status, r.user, r.group, r.app, r.queue, r.partition, r.preceding,
                           r.think})
      mix(std::uint64_t(v));
    mixd(r.avg_cpu);
    mixd(r.used_mem);
    mixd(r.req_mem);
  }
  return h;
}

/// sum(size * runtime) / (procs * (last submit - first submit)).
double load_of(const std::vector<swf::Record>& rs, std::int64_t procs) {
  double work = 0;
  for (const auto& r : rs) work += double(r.alloc_procs) * double(r.run);
  const double span = double(rs.back().submit - rs.front().submit);
  return work / (double(procs) * span);
}

double accuracy(double p, double r) {
  p = std::max(p, 1.0);
  r = std::max(r, 1.0);
  return std::min(p, r) / std::max(p, r);
}

/// Mean accuracy of the estimates and of the paper's predictor (average of the
/// user's two previous runtimes, capped at the estimate, whole seconds, at
/// least 1; the estimate while the user has fewer than two), taking submit
/// order as the termination order.
void accuracies(const std::vector<swf::Record>& rs, double* est, double* pred) {
  std::map<std::int64_t, std::vector<std::int64_t>> history;
  double e = 0, p = 0;
  for (const auto& r : rs) {
    auto& h = history[r.user];
    double prediction = double(r.req_time);
    if (h.size() >= 2) {
      const double avg = std::ceil(double(h[h.size() - 1] + h[h.size() - 2]) / 2);
      prediction = std::max(1.0, std::min(avg, double(r.req_time)));
    }
    e += accuracy(double(r.req_time), double(r.run));
    p += accuracy(prediction, double(r.run));
    h.push_back(r.run);
  }
  *est = e / double(rs.size());
  *pred = p / double(rs.size());
}

std::string show(const GeneratorConfig& c) { return c.describe(); }

}  // namespace

class GeneratorTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(GeneratorTest);
  CPPUNIT_TEST(testSameSeedSameRecords);
  CPPUNIT_TEST(testDifferentSeedDifferentRecords);
  CPPUNIT_TEST(testGoldenDigest);
  CPPUNIT_TEST(testOfferedLoadOnTarget);
  CPPUNIT_TEST(testSortedAndNumbered);
  CPPUNIT_TEST(testSizesWithinMachine);
  CPPUNIT_TEST(testRuntimeWithinEstimate);
  CPPUNIT_TEST(testMaximumEstimateMostPopular);
  CPPUNIT_TEST(testDailyAndWeeklyCycle);
  CPPUNIT_TEST(testPredictorBeatsEstimates);
  CPPUNIT_TEST(testUsersResubmitSimilarJobs);
  CPPUNIT_TEST(testHeader);
  CPPUNIT_TEST(testTinyConfigurations);
  CPPUNIT_TEST(testValidate);
  CPPUNIT_TEST(testParseSpec);
  CPPUNIT_TEST(testGenerateWorkload);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// The same configuration gives the same records, field for field.
  void testSameSeedSameRecords() {
    for (std::uint64_t seed : {1ULL, 7ULL, 123456789ULL}) {
      GeneratorConfig c = config(seed, 3000);
      const auto a = generate(c), b = generate(c);
      CPPUNIT_ASSERT_EQUAL(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        CPPUNIT_ASSERT_MESSAGE("record " + std::to_string(i) + " differs for " + show(c), same(a[i], b[i]));
    }
  }

  /// Another seed gives another workload (and changes most records).
  void testDifferentSeedDifferentRecords() {
    const auto a = generate(config(1, 3000)), b = generate(config(2, 3000));
    CPPUNIT_ASSERT_EQUAL(a.size(), b.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differ += !same(a[i], b[i]);
    CPPUNIT_ASSERT_MESSAGE("only " + std::to_string(differ) + " of 3000 records differ",
                           differ > a.size() * 9 / 10);
  }

  /// Byte-identical output on every platform: a digest of the records of a
  /// fixed configuration. If this fails after a deliberate change of the
  /// model, update the value (and docs/synthetic-workload.md's table); if it
  /// fails on a new platform or compiler, the generator is not portable (a
  /// libm call, a std:: distribution, floating-point contraction or
  /// -ffast-math) and that must be fixed instead.
  void testGoldenDigest() {
    const auto rs = generate(config(1, 2000));
    std::ostringstream got;
    got << std::hex << digest(rs);
    CPPUNIT_ASSERT_EQUAL(std::string(kGolden), got.str());
  }

  /// The offered load hits the target within 1% for several loads, machine
  /// sizes and limits.
  void testOfferedLoadOnTarget() {
    struct Case { double load; std::int64_t procs; Time max_est; std::uint32_t jobs; };
    for (const Case& k : {Case{0.3, 128, 129600, 5000}, Case{0.6, 128, 129600, 5000},
                          Case{0.8, 128, 129600, 20000}, Case{0.95, 64, 64800, 5000},
                          Case{1.5, 1024, 86400, 5000}, Case{0.7, 100, 14400, 3000}}) {
      GeneratorConfig c = config(3, k.jobs);
      c.load = k.load;
      c.procs = k.procs;
      c.max_estimate = k.max_est;
      const auto rs = generate(c);
      const double got = load_of(rs, c.procs);
      CPPUNIT_ASSERT_MESSAGE(show(c) + ": offered load " + std::to_string(got),
                             std::fabs(got - k.load) <= 0.01 * k.load);
    }
  }

  /// Records come sorted by submit time, numbered 1..N, in SWF conventions.
  void testSortedAndNumbered() {
    const GeneratorConfig c = config(5, 10000);
    const auto rs = generate(c);
    CPPUNIT_ASSERT_EQUAL(std::size_t(c.jobs), rs.size());
    std::set<std::int64_t> users;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const auto& r = rs[i];
      CPPUNIT_ASSERT_EQUAL(std::int64_t(i) + 1, r.job);
      CPPUNIT_ASSERT(r.submit >= 0);
      if (i > 0) CPPUNIT_ASSERT_MESSAGE("unsorted at job " + std::to_string(r.job), r.submit >= rs[i - 1].submit);
      CPPUNIT_ASSERT_EQUAL(std::int64_t(-1), r.wait);
      CPPUNIT_ASSERT(r.run >= 1);
      CPPUNIT_ASSERT(r.status == 0 || r.status == 1);
      CPPUNIT_ASSERT(r.user >= 1 && r.user <= std::int64_t(c.users));
      CPPUNIT_ASSERT(r.group >= 1);
      if (r.preceding != -1) {
        // a sequential session: the preceding job is earlier, of the same user
        CPPUNIT_ASSERT(r.preceding >= 1 && r.preceding < r.job);
        CPPUNIT_ASSERT_EQUAL(r.user, rs[std::size_t(r.preceding - 1)].user);
        CPPUNIT_ASSERT(r.think >= 0);
      }
      users.insert(r.user);
    }
    CPPUNIT_ASSERT_MESSAGE("only " + std::to_string(users.size()) + " users submit",
                           users.size() >= c.users / 2);
  }

  /// Sizes lie in 1..procs, mostly narrow and powers of two, some wide.
  void testSizesWithinMachine() {
    for (std::int64_t procs : {1, 2, 3, 7, 100, 128, 1000}) {
      GeneratorConfig c = config(11, 5000);
      c.procs = procs;
      const auto rs = generate(c);
      std::size_t pow2 = 0, narrow = 0, wide = 0;
      for (const auto& r : rs) {
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": size " + std::to_string(r.alloc_procs),
                               r.alloc_procs >= 1 && r.alloc_procs <= procs);
        CPPUNIT_ASSERT_EQUAL(r.alloc_procs, r.req_procs);
        pow2 += (r.alloc_procs & (r.alloc_procs - 1)) == 0;
        narrow += r.alloc_procs <= 8;
        wide += r.alloc_procs * 8 > procs;
      }
      if (procs >= 100) {
        const double n = double(rs.size());
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": powers of two " + std::to_string(pow2 / n), pow2 / n > 0.7);
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": narrow " + std::to_string(narrow / n), narrow / n > 0.5);
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": wide " + std::to_string(wide / n), wide / n > 0.01);
      }
    }
  }

  /// Estimates are round values no larger than the maximum, and runtimes
  /// stay within them except for rare jobs killed up to a minute late.
  void testRuntimeWithinEstimate() {
    const std::set<std::int64_t> round = {120,   300,   600,   900,   1200,  1800,  2700,
                                          3600,  5400,  7200,  10800, 14400, 21600, 28800,
                                          36000, 43200, 64800, 86400, 129600};
    for (Time max_est : {Time(129600), Time(86400), Time(7200)}) {
      GeneratorConfig c = config(13, 20000);
      c.max_estimate = max_est;
      const auto rs = generate(c);
      std::size_t over = 0;
      for (const auto& r : rs) {
        CPPUNIT_ASSERT(r.req_time <= max_est);
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": estimate " + std::to_string(r.req_time) + " is not a round value",
                               r.req_time == max_est || round.count(r.req_time));
        CPPUNIT_ASSERT_MESSAGE(show(c) + ": job " + std::to_string(r.job) + " runs " +
                                   std::to_string(r.run) + " s for an estimate of " +
                                   std::to_string(r.req_time),
                               r.run <= r.req_time + 60);
        if (r.run > r.req_time) {
          ++over;
          CPPUNIT_ASSERT_EQUAL(std::int64_t(0), r.status);  // killed
        }
      }
      CPPUNIT_ASSERT_MESSAGE(show(c) + ": " + std::to_string(over) + " jobs outlive their estimate",
                             over <= rs.size() / 20);
    }
  }

  /// The maximum is the most popular estimate, with roughly a fifth of the
  /// jobs, over seeds and configurations.
  void testMaximumEstimateMostPopular() {
    struct Case { std::uint64_t seed; std::uint32_t jobs; std::int64_t procs; std::uint32_t users; Time max_est; };
    for (const Case& k : {Case{1, 40000, 128, 150, 129600}, Case{2, 40000, 128, 150, 129600},
                          Case{3, 40000, 128, 150, 129600}, Case{4, 40000, 128, 150, 129600},
                          Case{5, 40000, 128, 150, 129600}, Case{6, 40000, 512, 300, 86400},
                          Case{7, 40000, 64, 150, 64800}}) {
      GeneratorConfig c = config(k.seed, k.jobs);
      c.procs = k.procs;
      c.users = k.users;
      c.max_estimate = k.max_est;
      const auto rs = generate(c);
      std::map<std::int64_t, std::size_t> count;
      for (const auto& r : rs) ++count[r.req_time];
      std::size_t best_other = 0;
      std::int64_t best_value = 0;
      for (const auto& [v, n] : count)
        if (v != c.max_estimate && n > best_other) {
          best_other = n;
          best_value = v;
        }
      const std::size_t at_max = count[c.max_estimate];
      const double share = double(at_max) / double(rs.size());
      CPPUNIT_ASSERT_MESSAGE(show(c) + ": the maximum has " + std::to_string(at_max) + " jobs, " +
                                 std::to_string(best_value) + " has " + std::to_string(best_other),
                             at_max > best_other);
      CPPUNIT_ASSERT_MESSAGE(show(c) + ": share at the maximum " + std::to_string(share),
                             share >= 0.12 && share <= 0.35);
      CPPUNIT_ASSERT_MESSAGE(show(c) + ": only " + std::to_string(count.size()) + " estimate values",
                             count.size() >= 8);
    }
  }

  /// More submissions in the working day than at night, and on weekdays than
  /// at weekends (submit time 0 is a Monday midnight, UTC).
  void testDailyAndWeeklyCycle() {
    for (std::uint64_t seed : {1ULL, 2ULL}) {
      swf::Header h;
      const auto rs = generate(config(seed, 40000), &h);
      CPPUNIT_ASSERT_EQUAL(std::int64_t(1704067200), h.unix_start_time().value_or(-1));
      std::vector<double> hour(24, 0), day(7, 0);
      for (const auto& r : rs) {
        hour[std::size_t((r.submit % 86400) / 3600)] += 1;
        day[std::size_t((r.submit / 86400) % 7)] += 1;
      }
      double work_hours = 0, night = 0;
      for (int i = 9; i < 17; ++i) work_hours += hour[std::size_t(i)] / 8;
      for (int i = 0; i < 6; ++i) night += hour[std::size_t(i)] / 6;
      CPPUNIT_ASSERT_MESSAGE("seed " + std::to_string(seed) + ": " + std::to_string(work_hours) +
                                 " submissions per working hour, " + std::to_string(night) +
                                 " per night hour",
                             work_hours > 2 * night);
      const double weekday = (day[0] + day[1] + day[2] + day[3] + day[4]) / 5;
      const double weekend = (day[5] + day[6]) / 2;
      CPPUNIT_ASSERT_MESSAGE("seed " + std::to_string(seed) + ": " + std::to_string(weekday) +
                                 " per weekday, " + std::to_string(weekend) + " per weekend day",
                             weekday > 1.3 * weekend);
    }
  }

  /// The average of a user's last two runtimes predicts the next runtime much
  /// better than the user's estimate does (the paper: ~60-70% against
  /// ~20-40% on real logs).
  void testPredictorBeatsEstimates() {
    for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
      for (std::uint32_t users : {30u, 150u}) {
        GeneratorConfig c = config(seed, 20000);
        c.users = users;
        double est = 0, pred = 0;
        accuracies(generate(c), &est, &pred);
        const std::string what = show(c) + ": estimates " + std::to_string(100 * est) +
                                 "%, predictor " + std::to_string(100 * pred) + "%";
        CPPUNIT_ASSERT_MESSAGE(what, pred >= est + 0.20);
        CPPUNIT_ASSERT_MESSAGE(what, est >= 0.20 && est <= 0.45);
        CPPUNIT_ASSERT_MESSAGE(what, pred >= 0.50 && pred <= 0.80);
      }
    }
  }

  /// Users come back: most jobs share user, size and estimate with the
  /// user's previous job, and sessions of many similar jobs exist.
  void testUsersResubmitSimilarJobs() {
    const auto rs = generate(config(17, 20000));
    std::map<std::int64_t, const swf::Record*> last;
    std::size_t repeats = 0, counted = 0;
    for (const auto& r : rs) {
      auto it = last.find(r.user);
      if (it != last.end()) {
        ++counted;
        repeats += it->second->alloc_procs == r.alloc_procs && it->second->app == r.app;
      }
      last[r.user] = &r;
    }
    CPPUNIT_ASSERT_MESSAGE(std::to_string(repeats) + " of " + std::to_string(counted) +
                               " jobs repeat the user's previous application and size",
                           repeats > counted * 6 / 10);
  }

  /// The header names the machine, the limit, the job count and the config.
  void testHeader() {
    GeneratorConfig c = config(21, 500);
    c.procs = 96;
    c.max_estimate = 43200;
    swf::Header h;
    const auto rs = generate(c, &h);
    CPPUNIT_ASSERT_EQUAL(std::int64_t(96), h.max_procs().value_or(-1));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(96), h.max_nodes().value_or(-1));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(43200), h.max_runtime().value_or(-1));
    CPPUNIT_ASSERT_EQUAL(std::int64_t(500), h.max_jobs().value_or(-1));
    CPPUNIT_ASSERT_EQUAL(std::string("2.2"), h.get("Version").value_or(""));
    const std::string note = h.get("Note").value_or("");
    CPPUNIT_ASSERT_MESSAGE(note, note.find(c.describe()) != std::string::npos);
  }

  /// Degenerate but valid configurations work.
  void testTinyConfigurations() {
    GeneratorConfig c = config(1, 1);
    auto rs = generate(c);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), rs.size());
    CPPUNIT_ASSERT_EQUAL(std::int64_t(1), rs[0].job);

    c = config(2, 200);
    c.procs = 1;
    c.users = 1;
    c.max_estimate = 60;
    rs = generate(c);
    CPPUNIT_ASSERT_EQUAL(std::size_t(200), rs.size());
    for (const auto& r : rs) {
      CPPUNIT_ASSERT_EQUAL(std::int64_t(1), r.alloc_procs);
      CPPUNIT_ASSERT_EQUAL(std::int64_t(1), r.user);
      CPPUNIT_ASSERT_EQUAL(std::int64_t(60), r.req_time);
      CPPUNIT_ASSERT(r.run >= 1 && r.run <= 120);
    }
    CPPUNIT_ASSERT(std::fabs(load_of(rs, 1) - c.load) <= 0.01 * c.load);

    c = config(3, 2000);
    c.users = 5000;  // more users than jobs
    rs = generate(c);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2000), rs.size());
  }

  void testValidate() {
    CPPUNIT_ASSERT_EQUAL(std::string(), GeneratorConfig().validate());
    auto bad = [](auto change) {
      GeneratorConfig c;
      change(c);
      return c;
    };
    const GeneratorConfig cases[] = {
        bad([](GeneratorConfig& c) { c.jobs = 0; }),
        bad([](GeneratorConfig& c) { c.jobs = 10000001; }),
        bad([](GeneratorConfig& c) { c.procs = 0; }),
        bad([](GeneratorConfig& c) { c.procs = -5; }),
        bad([](GeneratorConfig& c) { c.users = 0; }),
        bad([](GeneratorConfig& c) { c.load = 0; }),
        bad([](GeneratorConfig& c) { c.load = -0.5; }),
        bad([](GeneratorConfig& c) { c.load = 10.5; }),
        bad([](GeneratorConfig& c) { c.load = std::numeric_limits<double>::quiet_NaN(); }),
        bad([](GeneratorConfig& c) { c.load = std::numeric_limits<double>::infinity(); }),
        bad([](GeneratorConfig& c) { c.max_estimate = 59; }),
        bad([](GeneratorConfig& c) { c.max_estimate = 366LL * 86400; }),
    };
    for (const auto& c : cases) {
      const std::string err = c.validate();
      CPPUNIT_ASSERT_MESSAGE("accepted " + c.describe(), !err.empty());
      CPPUNIT_ASSERT_MESSAGE("multi-line message: " + err, err.find('\n') == std::string::npos);
      CPPUNIT_ASSERT_THROW(generate_records(c, nullptr), std::invalid_argument);
    }
  }

  void testParseSpec() {
    GeneratorConfig c;
    c.seed = 99;
    c.jobs = 1234;
    c.procs = 300;
    c.users = 7;
    c.load = 0.65;
    c.max_estimate = 64800;
    GeneratorConfig back;
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, parse_generator_spec(c.describe(), back, &err));
    CPPUNIT_ASSERT_EQUAL(c.describe(), back.describe());
    CPPUNIT_ASSERT_EQUAL(c.load, back.load);

    // only the keys given change; "synthetic" alone keeps everything
    GeneratorConfig d;
    CPPUNIT_ASSERT(parse_generator_spec("seed=5,jobs=100", d, &err));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(5), d.seed);
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(100), d.jobs);
    CPPUNIT_ASSERT_EQUAL(GeneratorConfig().procs, d.procs);
    GeneratorConfig e = c;
    CPPUNIT_ASSERT(parse_generator_spec("synthetic", e, &err));
    CPPUNIT_ASSERT_EQUAL(c.describe(), e.describe());
    CPPUNIT_ASSERT(parse_generator_spec("", e, &err));
    CPPUNIT_ASSERT(parse_generator_spec("max-estimate=7200,load=1.25", e, &err));
    CPPUNIT_ASSERT_EQUAL(Time(7200), e.max_estimate);
    CPPUNIT_ASSERT_EQUAL(1.25, e.load);

    for (const char* spec : {"jobs=abc", "jobs=", "jobs", "foo=1", "jobs=1,", "seed=-1", "jobs=0",
                             "load=0", "load=abc", "load=1e400", "procs=1.5", "users=+3",
                             "max-estimate=10", "jobs=99999999999999999999", "synthetic;jobs=3",
                             "jobs=5,,procs=3"}) {
      GeneratorConfig f = c;
      std::string msg;
      CPPUNIT_ASSERT_MESSAGE(std::string("accepted '") + spec + "'", !parse_generator_spec(spec, f, &msg));
      CPPUNIT_ASSERT_MESSAGE(std::string("no message for '") + spec + "'", !msg.empty());
      CPPUNIT_ASSERT_MESSAGE(std::string("changed the config on '") + spec + "'", f.describe() == c.describe());
    }
  }

  /// generate_workload converts the records to simulatable jobs on the
  /// configured machine.
  void testGenerateWorkload() {
    GeneratorConfig c = config(23, 5000);
    c.procs = 256;
    const Workload w = generate_workload(c, WorkloadOptions());
    CPPUNIT_ASSERT_EQUAL(std::size_t(5000), w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::int64_t(256), w.procs);
    CPPUNIT_ASSERT_EQUAL(c.describe(), w.source);
    for (std::size_t i = 1; i < w.jobs.size(); ++i) CPPUNIT_ASSERT(w.jobs[i].submit >= w.jobs[i - 1].submit);
    CPPUNIT_ASSERT(std::fabs(offered_load(w.jobs, w.procs) - c.load) <= 0.01 * c.load);
  }

 private:
  static constexpr const char* kGolden = "db4acf83935686f9";
};

CPPUNIT_TEST_SUITE_REGISTRATION(GeneratorTest);
