// Tests of the SWF-to-jobs conventions, load scaling and flurry marking
// (libpredict/src/workload.cc, spec section 6).
#include <cppunit/extensions/HelperMacros.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "workloads.h"
#include "easypp/sim/workload.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

using namespace easypp;
namespace fs = std::filesystem;

namespace {

swf::Record rec(std::int64_t job, std::int64_t submit, std::int64_t run, std::int64_t alloc,
                std::int64_t req_time = 1000, std::int64_t user = 1, std::int64_t req_procs = -1) {
  swf::Record r;
  r.job = job;
  r.submit = submit;
  r.run = run;
  r.alloc_procs = alloc;
  r.req_procs = req_procs;
  r.req_time = req_time;
  r.user = user;
  r.line = static_cast<std::uint64_t>(job) + 10;  // as if after a 10-line header
  return r;
}

swf::Header header_procs(const std::string& procs) {
  swf::Header h;
  h.entries = {{"Version", "2.2"}, {"MaxProcs", procs}};
  return h;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// A throw-away file that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content) {
    char tmpl[] = "/tmp/easypp_workload_test_XXXXXX";
    int fd = mkstemp(tmpl);
    CPPUNIT_ASSERT(fd >= 0);
    close(fd);
    path = tmpl;
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

class WorkloadTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(WorkloadTest);
  CPPUNIT_TEST(testPlainConversion);
  CPPUNIT_TEST(testDrops);
  CPPUNIT_TEST(testSizeFrom);
  CPPUNIT_TEST(testMachineSize);
  CPPUNIT_TEST(testNoMachineSizeThrows);
  CPPUNIT_TEST(testMissingEstimates);
  CPPUNIT_TEST(testRuntimeOverEstimate);
  CPPUNIT_TEST(testUnsortedFails);
  CPPUNIT_TEST(testUnsortedSort);
  CPPUNIT_TEST(testDroppedRecordsDoNotCountAsUnsorted);
  CPPUNIT_TEST(testMaxJobs);
  CPPUNIT_TEST(testKeepRecords);
  CPPUNIT_TEST(testNoSimulatableJobThrows);
  CPPUNIT_TEST(testOfferedLoad);
  CPPUNIT_TEST(testScaleInterarrivals);
  CPPUNIT_TEST(testTargetLoad);
  CPPUNIT_TEST(testTargetLoadImpossible);
  CPPUNIT_TEST(testFlurries);
  CPPUNIT_TEST(testFlurriesViaOptions);
  CPPUNIT_TEST(testLoadWorkloadFile);
  CPPUNIT_TEST(testDiagnosticsCap);
  CPPUNIT_TEST(testKthWorkload);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testPlainConversion() {
    std::vector<swf::Record> rs = {rec(1, 0, 100, 4, 600, 7), rec(2, 10, 50, 2, 60, -5)};
    Workload w = make_workload("test", header_procs("8"), rs, {});
    CPPUNIT_ASSERT_EQUAL(std::string("test"), w.source);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{8}, w.procs);
    CPPUNIT_ASSERT_EQUAL(std::size_t{2}, w.jobs.size());
    const Job& a = w.jobs[0];
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, a.id);
    CPPUNIT_ASSERT_EQUAL(Time{0}, a.submit);
    CPPUNIT_ASSERT_EQUAL(Time{100}, a.runtime);
    CPPUNIT_ASSERT_EQUAL(Time{600}, a.estimate);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{4}, a.size);
    CPPUNIT_ASSERT_EQUAL(UserId{7}, a.user);
    CPPUNIT_ASSERT(!a.flurry);
    CPPUNIT_ASSERT_EQUAL(UserId{kNoUser}, w.jobs[1].user);  // negative users: unknown
    CPPUNIT_ASSERT(w.records.empty());                       // not asked for
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, w.report.records);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, w.report.jobs);
    CPPUNIT_ASSERT_EQUAL(1.0, w.report.load_scale);
    CPPUNIT_ASSERT(w.diagnostics.empty());
  }

  void testDrops() {
    std::vector<swf::Record> rs = {
        rec(1, 0, 100, 4),   rec(2, -1, 100, 4),   // submit < 0
        rec(3, 5, -1, 4),                          // runtime < 0
        rec(4, 6, 10, -1),                         // no size (5 and 8 both -1)
        rec(5, 7, 10, 0, 1000, 1, 0),              // no size (both 0)
        rec(6, 8, 10, 9),                          // wider than the machine (8)
        rec(7, 9, 10, 8),                          // exactly the machine: kept
        rec(8, 10, -1, -1),                        // counted once, under runtime
    };
    Workload w = make_workload("drops.swf", header_procs("8"), rs, {});
    const WorkloadReport& r = w.report;
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{8}, r.records);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, r.dropped_submit);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, r.dropped_runtime);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, r.dropped_size);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, r.dropped_too_wide);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, r.jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.jobs[0].id);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{7}, w.jobs[1].id);
    // The first drop of each reason is described: file, line, field.
    CPPUNIT_ASSERT_EQUAL(std::size_t{4}, w.diagnostics.size());
    const swf::Diagnostic& d = w.diagnostics[0];
    CPPUNIT_ASSERT_EQUAL(std::string("drops.swf"), d.file);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{12}, d.line);
    CPPUNIT_ASSERT_EQUAL(2, d.field);
    CPPUNIT_ASSERT_EQUAL(4, w.diagnostics[1].field);
    CPPUNIT_ASSERT_EQUAL(5, w.diagnostics[2].field);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{16}, w.diagnostics[3].line);
    CPPUNIT_ASSERT(contains(w.diagnostics[3].message, "wider than the machine"));
  }

  void testSizeFrom() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 2, 100, 1, 4), rec(2, 1, 10, -1, 100, 1, 4),
                                   rec(3, 2, 10, 3, 100, 1, -1)};
    Workload alloc = make_workload("s", header_procs("8"), rs, {});
    CPPUNIT_ASSERT_EQUAL(std::int64_t{2}, alloc.jobs[0].size);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{4}, alloc.jobs[1].size);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, alloc.jobs[2].size);
    WorkloadOptions opt;
    opt.size_from = SizeFrom::Requested;
    Workload req = make_workload("s", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{4}, req.jobs[0].size);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{4}, req.jobs[1].size);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{3}, req.jobs[2].size);
    // Too wide by the requested size only.
    std::vector<swf::Record> wide = {rec(1, 0, 10, 2, 100, 1, 16), rec(2, 1, 10, 2)};
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1},
                         make_workload("s", header_procs("8"), wide, opt).report.dropped_too_wide);
  }

  void testMachineSize() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 4), rec(2, 1, 10, 100)};
    // MaxProcs, with a comment after the number.
    Workload a = make_workload("m", header_procs("64 (8 nodes)"), rs, {});
    CPPUNIT_ASSERT_EQUAL(std::int64_t{64}, a.procs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, a.report.dropped_too_wide);
    // MaxNodes when there is no MaxProcs.
    swf::Header nodes;
    nodes.entries = {{"MaxNodes", "32"}};
    CPPUNIT_ASSERT_EQUAL(std::int64_t{32}, make_workload("m", nodes, rs, {}).procs);
    // The option wins over both.
    WorkloadOptions opt;
    opt.machine_procs = 128;
    Workload c = make_workload("m", header_procs("64"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{128}, c.procs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, c.report.dropped_too_wide);
    CPPUNIT_ASSERT_EQUAL(std::size_t{2}, c.jobs.size());
  }

  void testNoMachineSizeThrows() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 4)};
    swf::Header h;
    h.entries = {{"MaxProcs", "unknown"}, {"MaxNodes", "-1"}};
    try {
      make_workload("nosize.swf", h, rs, {});
      CPPUNIT_FAIL("no machine size must throw");
    } catch (const swf::Error& e) {
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "--procs"));
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "nosize.swf"));
    }
    WorkloadOptions opt;
    opt.machine_procs = 4;
    CPPUNIT_ASSERT_EQUAL(std::size_t{1}, make_workload("nosize.swf", h, rs, opt).jobs.size());
  }

  void testMissingEstimates() {
    std::vector<swf::Record> rs = {rec(1, 0, 100, 1, -1), rec(2, 1, 5000, 1, 6000), rec(3, 2, 300, 1, 0)};
    // Default: the larger of MaxRuntime and the largest runtime.
    Workload a = make_workload("e", header_procs("8"), rs, {});
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, a.report.estimate_missing);
    CPPUNIT_ASSERT_EQUAL(Time{5000}, a.report.default_estimate);
    CPPUNIT_ASSERT_EQUAL(Time{5000}, a.jobs[0].estimate);
    CPPUNIT_ASSERT_EQUAL(Time{6000}, a.jobs[1].estimate);
    CPPUNIT_ASSERT_EQUAL(Time{5000}, a.jobs[2].estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, a.report.runtime_over_estimate);
    CPPUNIT_ASSERT_EQUAL(std::size_t{1}, a.diagnostics.size());
    CPPUNIT_ASSERT_EQUAL(9, a.diagnostics[0].field);
    CPPUNIT_ASSERT(contains(a.diagnostics[0].message, "5000"));
    // A larger MaxRuntime header wins.
    swf::Header h = header_procs("8");
    h.entries.push_back({"MaxRuntime", "86400"});
    Workload b = make_workload("e", h, rs, {});
    CPPUNIT_ASSERT_EQUAL(Time{86400}, b.report.default_estimate);
    CPPUNIT_ASSERT_EQUAL(Time{86400}, b.jobs[2].estimate);
    // The option overrides both.
    WorkloadOptions opt;
    opt.default_estimate = 200;
    Workload c = make_workload("e", h, rs, opt);
    CPPUNIT_ASSERT_EQUAL(Time{200}, c.report.default_estimate);
    CPPUNIT_ASSERT_EQUAL(Time{200}, c.jobs[0].estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, c.report.runtime_over_estimate);  // job 3: 300 > 200
    // No missing estimate: nothing reported.
    Workload d = make_workload("e", h, {rec(1, 0, 10, 1, 60)}, {});
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, d.report.estimate_missing);
    CPPUNIT_ASSERT_EQUAL(Time{0}, d.report.default_estimate);
  }

  void testRuntimeOverEstimate() {
    std::vector<swf::Record> rs = {rec(1, 0, 700, 1, 600), rec(2, 1, 600, 1, 600), rec(3, 2, 10, 1, 600)};
    Workload kept = make_workload("o", header_procs("8"), rs, {});
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, kept.report.runtime_over_estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, kept.report.runtime_clipped);
    CPPUNIT_ASSERT_EQUAL(Time{700}, kept.jobs[0].runtime);
    WorkloadOptions opt;
    opt.clip_runtime = true;
    Workload clipped = make_workload("o", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, clipped.report.runtime_over_estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, clipped.report.runtime_clipped);
    CPPUNIT_ASSERT_EQUAL(Time{600}, clipped.jobs[0].runtime);
    CPPUNIT_ASSERT_EQUAL(Time{600}, clipped.jobs[1].runtime);
  }

  void testUnsortedFails() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 1), rec(2, 50, 10, 1), rec(3, 40, 10, 1)};
    try {
      make_workload("unsorted.swf", header_procs("8"), rs, {});
      CPPUNIT_FAIL("unsorted submit times must throw under UnsortedPolicy::Fail");
    } catch (const swf::Error& e) {
      std::string m = e.what();
      CPPUNIT_ASSERT_MESSAGE(m, contains(m, "unsorted.swf:13: field 2 (submit time)"));
      CPPUNIT_ASSERT_MESSAGE(m, contains(m, "--unsorted=sort"));
      CPPUNIT_ASSERT_MESSAGE(m, contains(m, "line 12"));  // the job it is earlier than
      CPPUNIT_ASSERT_EQUAL(std::uint64_t{13}, e.diagnostic().line);
      CPPUNIT_ASSERT_EQUAL(2, e.diagnostic().field);
    }
  }

  void testUnsortedSort() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 1), rec(2, 50, 10, 1), rec(3, 40, 10, 1),
                                   rec(4, 50, 10, 1), rec(5, 10, 10, 1), rec(6, 60, 10, 1)};
    WorkloadOptions opt;
    opt.unsorted = UnsortedPolicy::Sort;
    Workload w = make_workload("u", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, w.report.unsorted);  // jobs 3 and 5
    const std::uint64_t order[] = {1, 5, 3, 2, 4, 6};         // stable: 2 before 4
    for (int i = 0; i < 6; ++i) CPPUNIT_ASSERT_EQUAL(order[i], w.jobs[i].id);
  }

  void testDroppedRecordsDoNotCountAsUnsorted() {
    // LLNL-Thunder style: submit = -1 records in the middle are dropped
    // first, so they do not make the log look unsorted.
    std::vector<swf::Record> rs = {rec(1, 100, 10, 1), rec(2, -1, 10, 1), rec(3, 200, 10, 1),
                                   rec(4, 150, 10, 100), rec(5, 300, 10, 1)};
    Workload w = make_workload("t", header_procs("8"), rs, {});  // UnsortedPolicy::Fail
    CPPUNIT_ASSERT_EQUAL(std::size_t{3}, w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.unsorted);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.dropped_submit);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.dropped_too_wide);
  }

  void testMaxJobs() {
    std::vector<swf::Record> rs;
    for (int i = 1; i <= 10; ++i) rs.push_back(rec(i, i, 10, i % 3 == 0 ? 100 : 1));
    WorkloadOptions opt;
    opt.max_jobs = 4;
    Workload w = make_workload("x", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::size_t{4}, w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5}, w.jobs.back().id);  // 3 was too wide
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5}, w.report.records);  // stopped reading there
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{4}, w.report.jobs);
  }

  void testKeepRecords() {
    std::vector<swf::Record> rs = {rec(1, 0, 10, 1), rec(2, -1, 10, 1), rec(3, 30, 10, 1),
                                   rec(4, 20, 10, 1)};
    rs[2].status = 5;
    WorkloadOptions opt;
    opt.keep_records = true;
    opt.unsorted = UnsortedPolicy::Sort;
    Workload w = make_workload("k", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::size_t{3}, w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::size_t{3}, w.records.size());
    for (const Job& j : w.jobs) {
      CPPUNIT_ASSERT(j.record < w.records.size());
      CPPUNIT_ASSERT_EQUAL(static_cast<std::int64_t>(j.id), w.records[j.record].job);
    }
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{4}, w.jobs[1].id);  // sorted, indices still right
    CPPUNIT_ASSERT_EQUAL(std::int64_t{5}, w.records[w.jobs[2].record].status);
    opt.keep_records = false;
    Workload none = make_workload("k", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT(none.records.empty());
  }

  void testNoSimulatableJobThrows() {
    std::vector<swf::Record> rs = {rec(1, -1, 10, 1), rec(2, 5, -1, 1)};
    try {
      make_workload("none.swf", header_procs("8"), rs, {});
      CPPUNIT_FAIL("a workload without jobs must throw");
    } catch (const swf::Error& e) {
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "no simulatable job"));
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "1 dropped for submit < 0"));
    }
    CPPUNIT_ASSERT_THROW(make_workload("empty", header_procs("8"), {}, {}), swf::Error);
    // Empty and no header either: the missing jobs are the problem to report.
    try {
      make_workload("empty", swf::Header{}, {}, {});
      CPPUNIT_FAIL("must throw");
    } catch (const swf::Error& e) {
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "no simulatable job"));
    }
  }

  static std::vector<Job> jobs_at(const std::vector<Time>& submits, Time runtime, std::int64_t size) {
    std::vector<Job> js;
    for (std::size_t i = 0; i < submits.size(); ++i) {
      Job j;
      j.id = i + 1;
      j.submit = submits[i];
      j.runtime = runtime;
      j.estimate = runtime;
      j.size = size;
      j.user = 1;
      js.push_back(j);
    }
    return js;
  }

  void testOfferedLoad() {
    // 3 jobs x 4 procs x 50 s = 600 proc-s over 100 s on 10 procs = 0.6.
    std::vector<Job> js = jobs_at({0, 40, 100}, 50, 4);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.6, offered_load(js, 10), 1e-12);
    CPPUNIT_ASSERT_EQUAL(0.0, offered_load({}, 10));
    CPPUNIT_ASSERT_EQUAL(0.0, offered_load(jobs_at({5, 5}, 50, 4), 10));  // no time span
    CPPUNIT_ASSERT_EQUAL(0.0, offered_load(js, 0));
  }

  void testScaleInterarrivals() {
    std::vector<Job> js = jobs_at({1000, 1010, 1010, 1031}, 5, 1);
    scale_interarrivals(js, 2.0);
    const Time want[] = {1000, 1020, 1020, 1062};
    for (int i = 0; i < 4; ++i) CPPUNIT_ASSERT_EQUAL(want[i], js[i].submit);
    scale_interarrivals(js, 0.5);
    CPPUNIT_ASSERT_EQUAL(Time{1031}, js[3].submit);
    // Offsets are rounded, not gaps: 1000 jobs 1 s apart scaled by 1/3 end
    // at 333 s, not at 0 s (which rounding each gap would give).
    std::vector<Time> s;
    for (int i = 0; i < 1000; ++i) s.push_back(i);
    std::vector<Job> many = jobs_at(s, 1, 1);
    scale_interarrivals(many, 1.0 / 3);
    CPPUNIT_ASSERT_EQUAL(Time{333}, many.back().submit);
    for (std::size_t i = 1; i < many.size(); ++i) CPPUNIT_ASSERT(many[i - 1].submit <= many[i].submit);
    CPPUNIT_ASSERT_THROW(scale_interarrivals(js, 0), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(scale_interarrivals(js, -1), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(scale_interarrivals(js, std::nan("")), std::invalid_argument);
  }

  void testTargetLoad() {
    std::vector<swf::Record> rs;
    std::uint32_t x = 7;
    Time t = 0;
    for (int i = 1; i <= 2000; ++i) {
      x = x * 1664525u + 1013904223u;
      t += x % 600;
      rs.push_back(rec(i, t, 60 + x % 3000, 1 + (x >> 8) % 32, 4000));
    }
    for (double target : {0.5, 0.9, 1.3}) {
      WorkloadOptions opt;
      opt.target_load = target;
      Workload w = make_workload("l", header_procs("64"), rs, opt);
      double after = offered_load(w.jobs, w.procs);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(target, after, target * 1e-4);
      CPPUNIT_ASSERT(w.report.offered_load_before > 0);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(w.report.offered_load_before / target, w.report.load_scale, 1e-12);
      CPPUNIT_ASSERT_EQUAL(rs[0].submit, w.jobs[0].submit);  // the first submit stays
      for (std::size_t i = 1; i < w.jobs.size(); ++i) CPPUNIT_ASSERT(w.jobs[i - 1].submit <= w.jobs[i].submit);
    }
    Workload plain = make_workload("l", header_procs("64"), rs, {});
    CPPUNIT_ASSERT_EQUAL(1.0, plain.report.load_scale);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(offered_load(plain.jobs, 64), plain.report.offered_load_before, 1e-12);
    CPPUNIT_ASSERT_EQUAL(rs.back().submit, plain.jobs.back().submit);  // untouched
  }

  void testTargetLoadImpossible() {
    WorkloadOptions opt;
    opt.target_load = 0.7;
    std::vector<swf::Record> rs = {rec(1, 5, 10, 1), rec(2, 5, 10, 1)};  // no time span
    CPPUNIT_ASSERT_THROW(make_workload("l", header_procs("8"), rs, opt), swf::Error);
  }

  void testFlurries() {
    std::vector<Job> js;
    auto add = [&js](UserId u, Time t) {
      Job j;
      j.id = js.size() + 1;
      j.user = u;
      j.submit = t;
      j.runtime = 1;
      j.estimate = 1;
      j.size = 1;
      js.push_back(j);
    };
    // User 1: a lone job, then 5 jobs within 100 s (flurry), then a lone job.
    add(1, 0);
    for (Time t : {10000, 10020, 10040, 10070, 10100}) add(1, t);
    add(1, 50000);
    // User 2: 5 jobs, but never 5 within 3600 s.
    for (Time t : {0, 1000, 2000, 3000, 3601}) add(2, t);
    // User 3: exactly 5 jobs spanning exactly the window: a flurry.
    for (Time t : {20000, 21000, 22000, 23000, 23600}) add(3, t);
    // Unknown user: never a flurry.
    for (Time t : {0, 1, 2, 3, 4, 5}) add(kNoUser, t);
    // User 4: a long dense run (every job inside some dense window), then a straggler.
    for (Time t = 30000; t < 30000 + 20 * 500; t += 500) add(4, t);
    add(4, 30000 + 20 * 500 + 5000);
    std::stable_sort(js.begin(), js.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });

    std::uint64_t users = 0;
    std::uint64_t n = mark_flurries(js, 5, 3600, &users);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5 + 5 + 20}, n);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{3}, users);
    std::uint64_t marked = 0;
    for (const Job& j : js) {
      bool want = (j.user == 1 && j.submit >= 10000 && j.submit <= 10100) || j.user == 3 ||
                  (j.user == 4 && j.submit < 40000);
      CPPUNIT_ASSERT_EQUAL_MESSAGE("job " + std::to_string(j.id), want, j.flurry);
      marked += j.flurry;
    }
    CPPUNIT_ASSERT_EQUAL(n, marked);
    // A smaller window loses user 3; the flags are recomputed.
    n = mark_flurries(js, 5, 3599, &users);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5 + 20}, n);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{2}, users);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, mark_flurries(js, 0, 3600));  // disabled
    for (const Job& j : js) CPPUNIT_ASSERT(!j.flurry);
  }

  void testFlurriesViaOptions() {
    std::vector<swf::Record> rs;
    for (int i = 1; i <= 10; ++i) rs.push_back(rec(i, i * 10, 5, 1, 100, 1));
    rs.push_back(rec(11, 100000, 5, 1, 100, 2));
    WorkloadOptions opt;
    opt.flurry_jobs = 10;
    opt.flurry_window = 100;
    Workload w = make_workload("f", header_procs("8"), rs, opt);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{10}, w.report.flurry_jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.flurry_users);
    CPPUNIT_ASSERT(w.jobs[0].flurry && !w.jobs[10].flurry);
    Workload off = make_workload("f", header_procs("8"), rs, {});  // detection is off by default
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, off.report.flurry_jobs);
    CPPUNIT_ASSERT(!off.jobs[0].flurry);
  }

  void testLoadWorkloadFile() {
    std::string path = TEST_DATA_DIR "/swf_header.swf";
    WorkloadOptions opt;
    opt.keep_records = true;
    Workload w = load_workload(path, opt);
    CPPUNIT_ASSERT_EQUAL(path, w.source);
    CPPUNIT_ASSERT_EQUAL(std::int64_t{1152}, w.procs);
    CPPUNIT_ASSERT_EQUAL(std::string("first note"), *w.header.get("Note"));
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{26}, w.report.lines);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5}, w.report.records);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.malformed);
    // Job 3 has req_procs -1 but alloc 1; job 4 alloc -1, req 16: both kept.
    CPPUNIT_ASSERT_EQUAL(std::size_t{5}, w.jobs.size());
    CPPUNIT_ASSERT_EQUAL(std::int64_t{16}, w.jobs[3].size);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.estimate_missing);  // job 3
    CPPUNIT_ASSERT_EQUAL(Time{7200}, w.report.default_estimate);         // MaxRuntime header
    CPPUNIT_ASSERT_EQUAL(Time{7200}, w.jobs[2].estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{23}, w.records[w.jobs[1].record].line);

    // Reader diagnostics come first, then the conversion's.
    TempFile f("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\nbad\n"
               "2 5 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
               "3 9 0 -1 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n");
    Workload g = load_workload(f.path, {});
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, g.report.malformed);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, g.report.dropped_runtime);
    CPPUNIT_ASSERT_EQUAL(std::size_t{2}, g.diagnostics.size());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{3}, g.diagnostics[0].line);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{5}, g.diagnostics[1].line);
    CPPUNIT_ASSERT_EQUAL(4, g.diagnostics[1].field);
    CPPUNIT_ASSERT_EQUAL(f.path, g.diagnostics[1].file);

    // Unsorted file: the error names the file, the line and field 2.
    TempFile u("; MaxProcs: 4\n1 100 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
               "2 50 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n");
    try {
      load_workload(u.path, {});
      CPPUNIT_FAIL("must throw");
    } catch (const swf::Error& e) {
      CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), u.path + ":3: field 2 (submit time)"));
    }
    CPPUNIT_ASSERT_THROW(load_workload("/nonexistent/dir/x.swf", {}), swf::Error);
  }

  void testDiagnosticsCap() {
    std::string s = "; MaxProcs: 4\n";
    for (int i = 0; i < 8; ++i) s += "junk\n";
    s += "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n2 1 0 -1 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
    TempFile f(s);
    WorkloadOptions opt;
    opt.reader.max_messages = 5;
    Workload w = load_workload(f.path, opt);
    CPPUNIT_ASSERT_EQUAL(std::size_t{5}, w.diagnostics.size());
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{8}, w.report.malformed);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.dropped_runtime);
    opt.reader.max_messages = 20;
    CPPUNIT_ASSERT_EQUAL(std::size_t{9}, load_workload(f.path, opt).diagnostics.size());
  }

  void testKthWorkload() {
    std::string path = easypp::testing::workload_path("KTH-SP2-1996-2.1-cln.swf");
    if (!fs::exists(path)) {
      std::cout << "\n  [WorkloadTest::testKthWorkload skipped: " << path << " not found; set WORKLOADS]\n";
      return;
    }
    Workload w = load_workload(path, {});
    CPPUNIT_ASSERT_EQUAL(std::int64_t{100}, w.procs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{28476}, w.report.records);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.malformed);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{1}, w.report.dropped_size);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.dropped_too_wide);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.estimate_missing);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{475}, w.report.runtime_over_estimate);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t{0}, w.report.unsorted);
    CPPUNIT_ASSERT_EQUAL(std::size_t{28475}, w.jobs.size());
    CPPUNIT_ASSERT(w.report.offered_load_before > 0.5 && w.report.offered_load_before < 0.8);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(WorkloadTest);
