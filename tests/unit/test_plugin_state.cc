// Tests of the plugin's state and status files (plugin/plugin_state.cc):
// round trips of every field, the atomic write protocol, corrupt and hostile
// inputs, and that the predictor predicts the same after a save and a load.
#include <cppunit/extensions/HelperMacros.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "easypp/predictor.h"
#include "plugin_state.h"
#include "scratch_files.h"

using namespace easypp;
using namespace easypp::plugin;
using easypp::test::slurp;
using easypp::test::spit;
using easypp::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Names of files in `dir` that look like a temporary file of ours.
std::vector<std::string> temp_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.find(".tmp.") != std::string::npos) out.push_back(n);
  }
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

SavedState sample_state() {
  SavedState s;
  s.last_learned_end = 1714564700;
  s.learned_jobs = 123456789012ULL;
  s.window = 3;
  s.rings.push_back({0, -1, {{60, 1800}}});
  s.rings.push_back({1000, -1, {{3000, 7200}, {4200, 7200}, {0, 60}}});
  s.rings.push_back({1000, 7200, {{3000, 7200}, {4200, 7200}}});
  s.rings.push_back({4294967295LL, -1, {{Time(1) << 40, Time(1) << 40}}});
  s.rings.push_back({77, -1, {}});
  SlowdownMeans::Sums m;
  m.sum = {2.5, 0, 1234567.125, 1};
  m.n = {2, 0, 3, 1};
  m.sum_all = 1234570.625;
  m.n_all = 6;
  s.slowdowns = m;
  return s;
}

Status sample_status() {
  Status s;
  s.version = "0.1.0";
  s.slurm_version = "22.05.8";
  s.written = 1714564800;
  s.settings = {{"easypp_interval", "10"}, {"easypp_window", "2"}, {"easypp_metric", "avg"}};
  s.state_file = "/var/spool/slurm ctld/easypp_state.json";
  s.last.time = 1714564799;
  s.last.seconds = 0.0125;
  s.last.partitions = 2;
  s.last.pending = 3;
  s.last.running = 4;
  s.last.tested = 5;
  s.last.started_in_order = 6;
  s.last.started_backfill = 7;
  s.last.reservations = 8;
  s.last.corrections = 9;
  s.last.learned = 10;
  s.last.yields = 11;
  s.last.interrupted = true;
  s.last.trigger = "correction";
  s.totals.cycles = 360;
  s.totals.tested = 412;
  s.totals.started_in_order = 40;
  s.totals.started_backfill = 17;
  s.totals.corrections = 3;
  s.totals.learned = 9007199254740993ULL;  // not exact as a double
  s.totals.seconds = 4.5;
  s.totals.max_seconds = 0.25;
  s.history = sample_state().rings;
  s.slowdowns = sample_state().slowdowns;
  s.thresholds = {1.5, 2.25, 1.75, 3.0625};
  JobStatus a;
  a.job_id = 101;
  a.user = 1000;
  a.user_name = "al\"ice\\ \xc3\xa9\n\t\x01";  // quote, backslash, UTF-8, controls
  a.partition = "batch";
  a.state = "RUNNING";
  a.submit = 1714560000;
  a.start = 1714561200;
  a.estimate = 7200;
  a.prediction = 3600;
  a.corrections = 2;
  a.reserved = false;
  a.from_history = true;
  JobStatus b;
  b.job_id = 4294967295u;
  b.array = "103_2";
  b.user = kNoUser;
  b.partition = "debug";
  b.state = "PENDING";
  b.submit = 1714564000;
  b.start = 0;
  b.estimate = 1800;
  b.prediction = 1;
  b.reserved = true;
  b.from_history = false;
  s.jobs = {a, b};
  return s;
}

void assert_rings_equal(const std::vector<Predictor::Ring>& want,
                        const std::vector<Predictor::Ring>& got) {
  CPPUNIT_ASSERT_EQUAL(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CPPUNIT_ASSERT_EQUAL(want[i].user, got[i].user);
    CPPUNIT_ASSERT_EQUAL(want[i].estimate_key, got[i].estimate_key);
    CPPUNIT_ASSERT_EQUAL(want[i].entries.size(), got[i].entries.size());
    for (std::size_t k = 0; k < want[i].entries.size(); ++k) {
      CPPUNIT_ASSERT_EQUAL(want[i].entries[k].runtime, got[i].entries[k].runtime);
      CPPUNIT_ASSERT_EQUAL(want[i].entries[k].estimate, got[i].entries[k].estimate);
    }
  }
}

// A state value that is not empty, to see that a failed load empties it.
SavedState junk_state() {
  SavedState s;
  s.last_learned_end = 99;
  s.learned_jobs = 5;
  s.window = 7;
  s.rings.push_back({5, -1, {{1, 2}}});
  s.slowdowns = SlowdownMeans::Sums{};
  return s;
}

void assert_empty(const SavedState& s) {
  CPPUNIT_ASSERT(s.rings.empty());
  CPPUNIT_ASSERT_EQUAL(Time(0), s.last_learned_end);
  CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), s.learned_jobs);
  CPPUNIT_ASSERT_EQUAL(SavedState().window, s.window);
  CPPUNIT_ASSERT(!s.slowdowns);
}

// Loading `content` fails, names the file and contains `want`, empties *out.
void expect_bad_state(const TempDir& d, const std::string& name, const std::string& content,
                      const std::string& want) {
  const std::string path = d.file(name);
  spit(path, content);
  SavedState s = junk_state();
  std::string err;
  LoadFailure why = LoadFailure::kNone;
  const bool ok = load_state(path, &s, &err, &why);
  const std::string ctx = name + ": " + err;
  CPPUNIT_ASSERT_MESSAGE(ctx, !ok);
  CPPUNIT_ASSERT_MESSAGE(ctx, err.rfind(path + ": ", 0) == 0);
  CPPUNIT_ASSERT_MESSAGE(ctx + " (wanted '" + want + "')", contains(err, want));
  CPPUNIT_ASSERT_MESSAGE(ctx, err.find('\n') == std::string::npos);
  CPPUNIT_ASSERT_MESSAGE(ctx, why == LoadFailure::kCorrupt);  // moved aside by the plugin
  assert_empty(s);
}

const char* kValidState =
    "{\"format_version\": 1, \"written\": 1, \"last_learned_end\": 2, \"learned_jobs\": 3,"
    " \"window\": 2, \"users\": [{\"user\": 7, \"estimate_key\": -1,"
    " \"history\": [[10, 100], [20, 100]]}]}";

// kValidState with one substring replaced.
std::string state_with(const std::string& from, const std::string& to) {
  std::string s = kValidState;
  const std::size_t at = s.find(from);
  CPPUNIT_ASSERT_MESSAGE(from, at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// Runs `f` with the file size limit at `bytes` (writes beyond fail with EFBIG).
template <class F>
void with_file_size_limit(rlim_t bytes, F f) {
  struct rlimit old;
  CPPUNIT_ASSERT_EQUAL(0, getrlimit(RLIMIT_FSIZE, &old));
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = bytes;
  CPPUNIT_ASSERT_EQUAL(0, setrlimit(RLIMIT_FSIZE, &lim));
  f();
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
}

}  // namespace

class PluginStateTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PluginStateTest);
  CPPUNIT_TEST(testStateRoundTrip);
  CPPUNIT_TEST(testStatusRoundTrip);
  CPPUNIT_TEST(testStatusSelectiveMembersOptional);
  CPPUNIT_TEST(testInvalidUtf8IsReplaced);
  CPPUNIT_TEST(testFileModesAndLayout);
  CPPUNIT_TEST(testMissingDirectoryKeepsNothing);
  CPPUNIT_TEST(testReadOnlyDirectoryKeepsOldFile);
  CPPUNIT_TEST(testFailedWriteKeepsOldFile);
  CPPUNIT_TEST(testFailedRenameLeavesNoTemp);
  CPPUNIT_TEST(testRefusesValuesItCouldNotRead);
  CPPUNIT_TEST(testMissingFile);
  CPPUNIT_TEST(testFifoIsRefusedWithoutBlocking);
  CPPUNIT_TEST(testUnreadableIsNotCorrupt);
  CPPUNIT_TEST(testMoveAsideNeverOverwrites);
  CPPUNIT_TEST(testCorruptStateFiles);
  CPPUNIT_TEST(testCorruptStatusFiles);
  CPPUNIT_TEST(testEveryTruncationFails);
  CPPUNIT_TEST(testRandomMutationsNeverCrash);
  CPPUNIT_TEST(testBracketsInStringsAreNotNesting);
  CPPUNIT_TEST(testPredictionsSurviveSaveAndLoad);
  CPPUNIT_TEST(testSlowdowns);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testStateRoundTrip() {
    TempDir d;
    const SavedState s = sample_state();
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file(kStateFileName), s, &err));
    SavedState t = junk_state();
    LoadFailure why = LoadFailure::kMissing;
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file(kStateFileName), &t, &err, &why));
    CPPUNIT_ASSERT(why == LoadFailure::kNone);
    CPPUNIT_ASSERT_EQUAL(s.last_learned_end, t.last_learned_end);
    CPPUNIT_ASSERT_EQUAL(s.learned_jobs, t.learned_jobs);
    CPPUNIT_ASSERT_EQUAL(s.window, t.window);
    assert_rings_equal(s.rings, t.rings);
    CPPUNIT_ASSERT(t.slowdowns && *t.slowdowns == *s.slowdowns);
    // Saving what was loaded gives the same bytes but for the time written.
    const std::string first = slurp(d.file(kStateFileName));
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("again.json"), t, &err));
    auto strip_written = [](std::string x) {
      const std::size_t a = x.find("\"written\": ");
      return x.erase(a, x.find(',', a) - a);
    };
    CPPUNIT_ASSERT_EQUAL(strip_written(first), strip_written(slurp(d.file("again.json"))));
    // The written time is now-ish.
    const std::size_t w = first.find("\"written\": ");
    const long long written = std::atoll(first.c_str() + w + 11);
    CPPUNIT_ASSERT(std::llabs(written - (long long)time(nullptr)) < 60);
  }

  // The slowdowns and selective thresholds of the status are optional
  // members: a status without them (not selective, or an earlier version's
  // file) reads back without them and writes none.
  void testStatusSelectiveMembersOptional() {
    TempDir d;
    Status s = sample_status();
    s.slowdowns.reset();
    s.thresholds.clear();
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("plain"), s, &err));
    const std::string text = slurp(d.file("plain"));
    CPPUNIT_ASSERT(!contains(text, "slowdowns") && !contains(text, "selective_thresholds"));
    Status t = sample_status();
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file("plain"), &t, &err));
    CPPUNIT_ASSERT(!t.slowdowns && t.thresholds.empty());
    // One threshold (Sel) is kept as one; a wrong count is refused on write.
    s.thresholds = {1.2};
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("one"), s, &err));
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file("one"), &t, &err));
    CPPUNIT_ASSERT(t.thresholds == std::vector<double>{1.2});
    s.thresholds = {1.2, 1.3};
    CPPUNIT_ASSERT(!write_status(d.file("two"), s, &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "selective_thresholds: must have 1 or 4"));
    CPPUNIT_ASSERT(!std::ifstream(d.file("two")).good());
  }

  void testStatusRoundTrip() {
    TempDir d;
    const Status s = sample_status();
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file(kStatusFileName), s, &err));
    Status t;
    t.jobs.resize(5);
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file(kStatusFileName), &t, &err));
    CPPUNIT_ASSERT_EQUAL(s.version, t.version);
    CPPUNIT_ASSERT_EQUAL(s.slurm_version, t.slurm_version);
    CPPUNIT_ASSERT_EQUAL(s.written, t.written);
    CPPUNIT_ASSERT(s.settings == t.settings);
    CPPUNIT_ASSERT_EQUAL(s.state_file, t.state_file);
    const CycleStats &a = s.last, &b = t.last;
    CPPUNIT_ASSERT_EQUAL(a.time, b.time);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(a.seconds, b.seconds, 1e-6);
    CPPUNIT_ASSERT_EQUAL(a.partitions, b.partitions);
    CPPUNIT_ASSERT_EQUAL(a.pending, b.pending);
    CPPUNIT_ASSERT_EQUAL(a.running, b.running);
    CPPUNIT_ASSERT_EQUAL(a.tested, b.tested);
    CPPUNIT_ASSERT_EQUAL(a.started_in_order, b.started_in_order);
    CPPUNIT_ASSERT_EQUAL(a.started_backfill, b.started_backfill);
    CPPUNIT_ASSERT_EQUAL(a.reservations, b.reservations);
    CPPUNIT_ASSERT_EQUAL(a.corrections, b.corrections);
    CPPUNIT_ASSERT_EQUAL(a.learned, b.learned);
    CPPUNIT_ASSERT_EQUAL(a.yields, b.yields);
    CPPUNIT_ASSERT_EQUAL(a.interrupted, b.interrupted);
    CPPUNIT_ASSERT_EQUAL(a.trigger, b.trigger);
    const Totals &x = s.totals, &y = t.totals;
    CPPUNIT_ASSERT_EQUAL(x.cycles, y.cycles);
    CPPUNIT_ASSERT_EQUAL(x.tested, y.tested);
    CPPUNIT_ASSERT_EQUAL(x.started_in_order, y.started_in_order);
    CPPUNIT_ASSERT_EQUAL(x.started_backfill, y.started_backfill);
    CPPUNIT_ASSERT_EQUAL(x.corrections, y.corrections);
    CPPUNIT_ASSERT_EQUAL(x.learned, y.learned);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(x.seconds, y.seconds, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(x.max_seconds, y.max_seconds, 1e-6);
    assert_rings_equal(s.history, t.history);
    CPPUNIT_ASSERT(s.slowdowns && t.slowdowns && *t.slowdowns == *s.slowdowns);
    CPPUNIT_ASSERT(t.thresholds == s.thresholds);
    CPPUNIT_ASSERT_EQUAL(s.jobs.size(), t.jobs.size());
    for (std::size_t i = 0; i < s.jobs.size(); ++i) {
      const JobStatus &p = s.jobs[i], &q = t.jobs[i];
      CPPUNIT_ASSERT_EQUAL(p.job_id, q.job_id);
      CPPUNIT_ASSERT_EQUAL(p.array, q.array);
      CPPUNIT_ASSERT_EQUAL(p.user, q.user);
      CPPUNIT_ASSERT_EQUAL(p.user_name, q.user_name);
      CPPUNIT_ASSERT_EQUAL(p.partition, q.partition);
      CPPUNIT_ASSERT_EQUAL(p.state, q.state);
      CPPUNIT_ASSERT_EQUAL(p.submit, q.submit);
      CPPUNIT_ASSERT_EQUAL(p.start, q.start);
      CPPUNIT_ASSERT_EQUAL(p.estimate, q.estimate);
      CPPUNIT_ASSERT_EQUAL(p.prediction, q.prediction);
      CPPUNIT_ASSERT_EQUAL(p.corrections, q.corrections);
      CPPUNIT_ASSERT_EQUAL(p.reserved, q.reserved);
      CPPUNIT_ASSERT_EQUAL(p.from_history, q.from_history);
    }
    // An empty status (no cycle yet) round-trips too.
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("empty.json"), Status(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file("empty.json"), &t, &err));
    CPPUNIT_ASSERT(t.jobs.empty() && t.history.empty() && t.version.empty());
  }

  void testInvalidUtf8IsReplaced() {
    TempDir d;
    Status s;
    JobStatus j;
    j.user_name = "x\xff\xc3(y\xed\xa0\x80z";  // bad byte, bad continuation, surrogate
    s.jobs.push_back(j);
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("s.json"), s, &err));
    Status t;
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file("s.json"), &t, &err));
    CPPUNIT_ASSERT_EQUAL(std::string("x\xef\xbf\xbd\xef\xbf\xbd(y\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz"),
                         t.jobs.at(0).user_name);
  }

  void testFileModesAndLayout() {
    TempDir d;
    // By default both files are SlurmUser's and root's only, whatever the
    // umask; a configured mode (easypp_file_mode) is exact, whatever the umask.
    const mode_t old = umask(0);
    std::string err;
    const bool a = save_state(d.file(kStateFileName), sample_state(), &err);
    const bool b = write_status(d.file(kStatusFileName), sample_status(), &err);
    umask(0077);
    const bool c = write_status(d.file("open.json"), sample_status(), &err, 0644);
    umask(old);
    CPPUNIT_ASSERT_MESSAGE(err, a && b && c);
    struct stat st;
    CPPUNIT_ASSERT_EQUAL(0, stat(d.file(kStateFileName).c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_t(st.st_mode & 07777));
    CPPUNIT_ASSERT_EQUAL(0, stat(d.file(kStatusFileName).c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_t(st.st_mode & 07777));
    CPPUNIT_ASSERT_EQUAL(0, stat(d.file("open.json").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(mode_t(0644), mode_t(st.st_mode & 07777));
    // A changed setting applies to the files already there.
    CPPUNIT_ASSERT_MESSAGE(err, apply_file_mode(d.file("open.json"), 0640, &err));
    CPPUNIT_ASSERT_EQUAL(0, stat(d.file("open.json").c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(mode_t(0640), mode_t(st.st_mode & 07777));
    CPPUNIT_ASSERT(apply_file_mode(d.file("no-such-file"), 0640, &err));
    // The state file is 0600 whatever easypp_file_mode says: one an earlier
    // release left 0644 is written back 0600 (docs/security.md).
    CPPUNIT_ASSERT_EQUAL(0, chmod(d.file(kStateFileName).c_str(), 0644));
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file(kStateFileName), sample_state(), &err));
    CPPUNIT_ASSERT_EQUAL(0, stat(d.file(kStateFileName).c_str(), &st));
    CPPUNIT_ASSERT_EQUAL(mode_t(0600), mode_t(st.st_mode & 07777));
    CPPUNIT_ASSERT(temp_files(d.path).empty());
    // Fixed layout: format_version first, then the documented keys in order.
    const std::string text = slurp(d.file(kStateFileName));
    const std::string head = "{\n \"format_version\": 1,\n \"written\": ";
    CPPUNIT_ASSERT_EQUAL(head, text.substr(0, head.size()));
    std::size_t at = 0;
    for (const char* key : {"\"written\"", "\"last_learned_end\"", "\"learned_jobs\"",
                            "\"window\"", "\"users\"", "\"user\": 1000", "\"estimate_key\": -1",
                            "\"history\"", "3000", "7200", "4200"}) {
      const std::size_t next = text.find(key, at);
      CPPUNIT_ASSERT_MESSAGE(key, next != std::string::npos);
      at = next;
    }
    CPPUNIT_ASSERT_EQUAL('\n', text.back());
  }

  void testMissingDirectoryKeepsNothing() {
    TempDir d;
    const std::string path = d.file("no/such/dir/easypp_state.json");
    std::string err;
    CPPUNIT_ASSERT(!save_state(path, sample_state(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, err.rfind(path + ": ", 0) == 0);
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "No such file or directory"));
    CPPUNIT_ASSERT(!write_status(path, sample_status(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, path));
    CPPUNIT_ASSERT(!fs::exists(d.file("no")));
  }

  void testReadOnlyDirectoryKeepsOldFile() {
    TempDir d;
    const std::string path = d.file(kStateFileName);
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(path, sample_state(), &err));
    const std::string before = slurp(path);
    if (geteuid() != 0) {
      CPPUNIT_ASSERT_EQUAL(0, chmod(d.path.c_str(), 0555));
      const bool ok = save_state(path, SavedState(), &err);
      chmod(d.path.c_str(), 0755);
      CPPUNIT_ASSERT(!ok);
      CPPUNIT_ASSERT_MESSAGE(err, contains(err, path) && contains(err, "Permission denied"));
    } else {
      // root ignores the directory's mode; a directory others can write
      // to is refused instead (safe_file.h), before anything is written.
      CPPUNIT_ASSERT_EQUAL(0, chmod(d.path.c_str(), 0775));
      const bool ok = save_state(path, SavedState(), &err);
      chmod(d.path.c_str(), 0700);
      CPPUNIT_ASSERT(!ok);
      CPPUNIT_ASSERT_MESSAGE(err, err.rfind(d.path + ": ", 0) == 0 && contains(err, "0775"));
    }
    CPPUNIT_ASSERT_EQUAL(before, slurp(path));
    CPPUNIT_ASSERT(temp_files(d.path).empty());
    SavedState t;
    CPPUNIT_ASSERT_MESSAGE(err, load_state(path, &t, &err));
    assert_rings_equal(sample_state().rings, t.rings);
  }

  void testFailedWriteKeepsOldFile() {
    TempDir d;
    const std::string state = d.file(kStateFileName), status = d.file(kStatusFileName);
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(state, sample_state(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, write_status(status, sample_status(), &err));
    const std::string before_state = slurp(state), before_status = slurp(status);
    // A much larger state and status: the write stops at the size limit.
    SavedState big = sample_state();
    for (UserId u = 2000; u < 4000; ++u) big.rings.push_back({u, -1, {{1, 2}, {3, 4}}});
    Status bigs = sample_status();
    bigs.history = big.rings;
    bool a = true, b = true;
    std::string ea, eb;
    with_file_size_limit(before_state.size() + 100, [&] {
      a = save_state(state, big, &ea);
      b = write_status(status, bigs, &eb);
    });
    CPPUNIT_ASSERT(!a);
    CPPUNIT_ASSERT(!b);
    CPPUNIT_ASSERT_MESSAGE(ea, ea.rfind(state + ": ", 0) == 0 && contains(ea, "File too large"));
    CPPUNIT_ASSERT_MESSAGE(eb, eb.rfind(status + ": ", 0) == 0 && contains(eb, "File too large"));
    CPPUNIT_ASSERT_EQUAL(before_state, slurp(state));
    CPPUNIT_ASSERT_EQUAL(before_status, slurp(status));
    CPPUNIT_ASSERT(temp_files(d.path).empty());
    // And the write succeeds once there is room.
    CPPUNIT_ASSERT_MESSAGE(err, save_state(state, big, &err));
    SavedState t;
    CPPUNIT_ASSERT_MESSAGE(err, load_state(state, &t, &err));
    CPPUNIT_ASSERT_EQUAL(big.rings.size(), t.rings.size());
  }

  void testFailedRenameLeavesNoTemp() {
    TempDir d;
    // The path is a non-empty directory: rename(2) over it fails.
    const std::string path = d.file("occupied");
    fs::create_directory(path);
    spit(path + "/keep", "x");
    std::string err;
    CPPUNIT_ASSERT(!save_state(path, sample_state(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, err.rfind(path + ": cannot rename", 0) == 0);
    CPPUNIT_ASSERT(temp_files(d.path).empty());
    CPPUNIT_ASSERT_EQUAL(std::string("x"), slurp(path + "/keep"));
  }

  void testRefusesValuesItCouldNotRead() {
    TempDir d;
    const std::string path = d.file(kStateFileName);
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(path, sample_state(), &err));
    const std::string before = slurp(path);
    struct Case {
      const char* what;
      SavedState s;
    };
    std::vector<Case> cases;
    {
      SavedState s = sample_state();
      s.rings[1].entries[0].runtime = -1;
      cases.push_back({"users[1].history[0] (runtime)", s});
    }
    {
      SavedState s = sample_state();
      s.rings[1].entries[1].estimate = Time(1) << 41;
      cases.push_back({"users[1].history[1] (estimate)", s});
    }
    {
      SavedState s = sample_state();
      s.rings[0].user = kNoUser;
      cases.push_back({"users[0].user", s});
    }
    {
      SavedState s = sample_state();
      s.rings[0].entries.resize(PredictorConfig::kMaxWindow + 1);
      cases.push_back({"users[0].history", s});
    }
    {
      SavedState s = sample_state();
      s.rings.push_back(s.rings[1]);
      cases.push_back({"duplicate user 1000", s});
    }
    {
      SavedState s = sample_state();
      s.window = 0;
      cases.push_back({"window", s});
    }
    {
      SavedState s = sample_state();
      s.last_learned_end = -5;
      cases.push_back({"last_learned_end", s});
    }
    {
      SavedState s = sample_state();
      s.learned_jobs = ~std::uint64_t(0);
      cases.push_back({"learned_jobs", s});
    }
    for (const Case& c : cases) {
      CPPUNIT_ASSERT_MESSAGE(c.what, !save_state(path, c.s, &err));
      CPPUNIT_ASSERT_MESSAGE(err, contains(err, path) && contains(err, c.what));
      CPPUNIT_ASSERT_EQUAL(before, slurp(path));
    }
    Status s = sample_status();
    s.jobs[1].start = kNever;
    CPPUNIT_ASSERT(!write_status(d.file("status"), s, &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "jobs[1].start"));
    s = sample_status();
    s.totals.seconds = -1;
    CPPUNIT_ASSERT(!write_status(d.file("status"), s, &err));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "totals.seconds"));
    CPPUNIT_ASSERT(!fs::exists(d.file("status")));
    CPPUNIT_ASSERT(temp_files(d.path).empty());
  }

  // The slowdowns of adaptive selective thresholds: an optional member (files
  // written before it load with none), checked like the other fields, and a
  // loaded value saves and loads back the very same.
  void testSlowdowns() {
    TempDir d;
    std::string err;
    // An older file, without the member.
    SavedState old;
    spit(d.file("old"), kValidState);
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("old"), &old, &err));
    CPPUNIT_ASSERT(!old.slowdowns);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), old.rings.size());
    // ... saved without it, and loads so again.
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("old2"), old, &err));
    CPPUNIT_ASSERT(!contains(slurp(d.file("old2")), "slowdowns"));
    SavedState old2 = junk_state();
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("old2"), &old2, &err));
    CPPUNIT_ASSERT(!old2.slowdowns);

    // Recorded means survive a save and a load: the thresholds are the same.
    SlowdownMeans m;
    Selective sel;
    sel.mode = Selective::Mode::Adaptive;
    sel.per_category = true;
    sel.scale = 1.5;
    for (int i = 0; i < 7; ++i) m.record(Time(100 * i + 7), Time(30 + 1000 * i), 3 + 5 * i, sel);
    SavedState st = sample_state();
    st.slowdowns = m.sums();
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("m"), st, &err));
    SavedState back;
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("m"), &back, &err));
    CPPUNIT_ASSERT(back.slowdowns);
    CPPUNIT_ASSERT_EQUAL(m.sums().n_all, back.slowdowns->n_all);
    SlowdownMeans r;
    r.restore(*back.slowdowns);
    for (int c = 0; c < 4; ++c)
      CPPUNIT_ASSERT_DOUBLES_EQUAL(m.mean(c), r.mean(c), 1e-12 * m.mean(c));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(m.mean(), r.mean(), 1e-12 * m.mean());
    // what was loaded saves and loads back exactly
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("m2"), back, &err));
    SavedState again;
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("m2"), &again, &err));
    CPPUNIT_ASSERT(again.slowdowns && *again.slowdowns == *back.slowdowns);

    // Values the reader would refuse are not written.
    const std::string path = d.file(kStateFileName);
    CPPUNIT_ASSERT_MESSAGE(err, save_state(path, sample_state(), &err));
    const std::string before = slurp(path);
    struct Case {
      const char* what;
      void (*spoil)(SlowdownMeans::Sums&);
    };
    const Case cases[] = {
        {"slowdowns.sum[0]", [](SlowdownMeans::Sums& x) { x.sum[0] = std::nan(""); }},
        {"slowdowns.sum[2]", [](SlowdownMeans::Sums& x) { x.sum[2] = -1; }},
        {"slowdowns.sum[3]", [](SlowdownMeans::Sums& x) { x.sum[3] = 0.5; }},  // < its count
        {"slowdowns.sum[1]", [](SlowdownMeans::Sums& x) { x.sum[1] = 2; }},    // count 0
        {"slowdowns.sum_all", [](SlowdownMeans::Sums& x) { x.sum_all = HUGE_VAL; }},
        {"slowdowns.count[1]",
         [](SlowdownMeans::Sums& x) { x.n[1] = SavedState::kMaxSlowdownCount + 1; }},
        {"slowdowns.count_all", [](SlowdownMeans::Sums& x) { x.n_all = 7; }},
    };
    for (const Case& c : cases) {
      SavedState bad = sample_state();
      c.spoil(*bad.slowdowns);
      CPPUNIT_ASSERT_MESSAGE(c.what, !save_state(path, bad, &err));
      CPPUNIT_ASSERT_MESSAGE(err, contains(err, path) && contains(err, c.what));
      CPPUNIT_ASSERT_EQUAL(before, slurp(path));
    }

    // Files with bad values are refused, naming the field.
    const std::string good =
        ", \"slowdowns\": {\"sum\": [2.5, 0, 3, 1], \"count\": [2, 0, 1, 1],"
        " \"sum_all\": 6.5, \"count_all\": 4}}";
    auto with = [&good](const std::string& from, const std::string& to) {
      std::string m = good;
      if (!from.empty()) {
        const std::size_t at = m.find(from);
        CPPUNIT_ASSERT_MESSAGE(from, at != std::string::npos);
        m.replace(at, from.size(), to);
      }
      std::string st = kValidState;
      return st.substr(0, st.size() - 1) + m;
    };
    SavedState ok;
    spit(d.file("good"), with("", ""));
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("good"), &ok, &err));
    CPPUNIT_ASSERT(ok.slowdowns);
    CPPUNIT_ASSERT_EQUAL(2.5, ok.slowdowns->sum[0]);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(4), ok.slowdowns->n_all);
    expect_bad_state(d, "sd_not_object", state_with("]]}]}", "]]}], \"slowdowns\": 3}"),
                     "field slowdowns: must be an object, got an integer");
    expect_bad_state(d, "sd_missing_sum", with("\"sum\": [2.5, 0, 3, 1], ", ""),
                     "field slowdowns.sum: missing");
    expect_bad_state(d, "sd_three", with("[2.5, 0, 3, 1]", "[2.5, 0, 3]"),
                     "field slowdowns.sum: must have 4 elements");
    expect_bad_state(d, "sd_string", with("[2.5, 0, 3, 1]", "[2.5, 0, \"3\", 1]"),
                     "field slowdowns.sum[2]: must be a number");
    expect_bad_state(d, "sd_negative", with("[2.5, 0, 3, 1]", "[-2.5, 0, 3, 1]"),
                     "field slowdowns.sum[0]");
    expect_bad_state(d, "sd_huge", with("[2.5, 0, 3, 1]", "[2.5e300, 0, 3, 1]"),
                     "field slowdowns.sum[0]: must be a finite number");
    expect_bad_state(d, "sd_below_count", with("[2.5, 0, 3, 1]", "[1.5, 0, 3, 1]"),
                     "field slowdowns.sum[0]: a sum of 2 bounded slowdowns");
    expect_bad_state(d, "sd_count_real", with("[2, 0, 1, 1]", "[2, 0, 1.5, 1]"),
                     "field slowdowns.count[2]: must be an integer");
    expect_bad_state(d, "sd_count_negative", with("[2, 0, 1, 1]", "[2, -1, 1, 1]"),
                     "field slowdowns.count[1]: must be 0..");
    expect_bad_state(d, "sd_count_huge", with("[2, 0, 1, 1]", "[2, 0, 1, 1000000000000001]"),
                     "field slowdowns.count[3]: must be 0..1000000000000000");
    expect_bad_state(d, "sd_count_all", with("\"count_all\": 4", "\"count_all\": 5"),
                     "field slowdowns.count_all: must be the sum of slowdowns.count (4), got 5");
    expect_bad_state(d, "sd_no_count_all", with(", \"count_all\": 4", ""),
                     "field slowdowns.count_all: missing");
  }

  void testMissingFile() {
    TempDir d;
    const std::string path = d.file(kStateFileName);
    SavedState s = junk_state();
    std::string err;
    LoadFailure why = LoadFailure::kNone;
    CPPUNIT_ASSERT(!load_state(path, &s, &err, &why));
    CPPUNIT_ASSERT(why == LoadFailure::kMissing);
    CPPUNIT_ASSERT_MESSAGE(err, err.rfind(path + ": no such file", 0) == 0);
    assert_empty(s);
    CPPUNIT_ASSERT(!load_state(path, &s, &err));  // `failure` is optional
    Status st;
    st.version = "x";
    why = LoadFailure::kNone;
    CPPUNIT_ASSERT(!read_status(d.file(kStatusFileName), &st, &err, &why));
    CPPUNIT_ASSERT(why == LoadFailure::kMissing);
    CPPUNIT_ASSERT(st.version.empty());
    // A directory is not missing, and not a state file either: unreadable,
    // not corrupt (the plugin leaves it where it is).
    why = LoadFailure::kNone;
    CPPUNIT_ASSERT(!load_state(d.path, &s, &err, &why));
    CPPUNIT_ASSERT(why == LoadFailure::kUnreadable);
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "not a regular file"));
  }

  // A FIFO in the place of a file (nobody writing to it) must not block the
  // reader: slurmctld's start-up loads the state file, easypp-ctl the status.
  void testFifoIsRefusedWithoutBlocking() {
    TempDir d;
    for (const char* name : {kStateFileName, kStatusFileName}) {
      const std::string path = d.file(name);
      CPPUNIT_ASSERT_EQUAL(0, mkfifo(path.c_str(), 0600));
      std::string err;
      LoadFailure why = LoadFailure::kNone;
      SavedState s;
      Status st;
      // (a blocking open would hang here: the test binary's timeout shows it)
      const bool ok = std::string(name) == kStateFileName
                          ? load_state(path, &s, &err, &why)
                          : read_status(path, &st, &err, &why);
      CPPUNIT_ASSERT(!ok);
      CPPUNIT_ASSERT(why == LoadFailure::kUnreadable);
      CPPUNIT_ASSERT_MESSAGE(err, err == path + ": not a regular file");
    }
  }

  // Permissions are a reason not to read, never a verdict on the content
  // (root reads anything, so only when not root).
  void testUnreadableIsNotCorrupt() {
    TempDir d;
    const std::string path = d.file(kStateFileName);
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(path, sample_state(), &err));
    CPPUNIT_ASSERT_EQUAL(0, chmod(path.c_str(), 0));
    SavedState s;
    LoadFailure why = LoadFailure::kNone;
    const bool ok = load_state(path, &s, &err, &why);
    chmod(path.c_str(), 0600);
    if (geteuid() == 0) {
      CPPUNIT_ASSERT(ok);  // root: mode 0 does not stop it
      return;
    }
    CPPUNIT_ASSERT(!ok);
    CPPUNIT_ASSERT(why == LoadFailure::kUnreadable);
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "Permission denied"));
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "easypp_file_mode"));
  }

  // A corrupt file goes to .bad, the next one to .bad.1, ...: an older .bad
  // (perhaps the only copy of a history) is never replaced.
  void testMoveAsideNeverOverwrites() {
    TempDir d;
    const std::string path = d.file(kStateFileName);
    std::string err;
    for (int i = 0; i < 3; ++i) {
      spit(path, "garbage " + std::to_string(i));
      const std::string bad = move_aside(path, &err);
      CPPUNIT_ASSERT_EQUAL(path + (i == 0 ? ".bad" : ".bad." + std::to_string(i)), bad);
      CPPUNIT_ASSERT(!fs::exists(path));
    }
    CPPUNIT_ASSERT_EQUAL(std::string("garbage 0"), slurp(path + ".bad"));
    CPPUNIT_ASSERT_EQUAL(std::string("garbage 1"), slurp(path + ".bad.1"));
    CPPUNIT_ASSERT_EQUAL(std::string("garbage 2"), slurp(path + ".bad.2"));
    // Nothing to move: an error, nothing created.
    CPPUNIT_ASSERT(move_aside(path, &err).empty());
    CPPUNIT_ASSERT_MESSAGE(err, contains(err, "No such file"));
    CPPUNIT_ASSERT(!fs::exists(path + ".bad.3"));
  }

  void testCorruptStateFiles() {
    TempDir d;
    // The base document is valid.
    SavedState ok;
    std::string err;
    spit(d.file("valid"), kValidState);
    CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("valid"), &ok, &err));
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), ok.rings.size());

    expect_bad_state(d, "empty", "", "empty file");
    expect_bad_state(d, "truncated", std::string(kValidState).substr(0, 90), "line 1, column");
    static const char kElf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe";
    expect_bad_state(d, "garbage", std::string(kElf, sizeof kElf - 1), "not valid JSON");
    // jansson alone would accept this one (json_loadb skips NUL bytes).
    expect_bad_state(d, "nul", state_with("\"written\": 1", std::string("\"written\": 1\0", 13)),
                     "NUL byte at byte 35");
    expect_bad_state(d, "nul_in_string", state_with("\"users\"", "\"us\\u0000ers\""),
                     "not valid JSON");
    expect_bad_state(d, "nesting", std::string(10 << 20, '['), "nested deeper than");
    expect_bad_state(d, "nesting_objects", std::string(100000, '{'), "nested deeper than");
    expect_bad_state(d, "array_root", "[1, 2]", "not an object");
    expect_bad_state(d, "not_easypp", "{\"a\": 1}", "format_version: missing");
    expect_bad_state(d, "version2", state_with("\"format_version\": 1", "\"format_version\": 2"),
                     "unsupported version 2");
    expect_bad_state(d, "version_string",
                     state_with("\"format_version\": 1", "\"format_version\": \"1\""),
                     "format_version");
    expect_bad_state(d, "users_object", state_with("\"users\": [", "\"users\": {\"x\": ["),
                     "not valid JSON");  // unbalanced on purpose: still must not crash
    expect_bad_state(d, "users_not_array",
                     "{\"format_version\": 1, \"written\": 1, \"last_learned_end\": 2, "
                     "\"learned_jobs\": 3, \"window\": 2, \"users\": {}}",
                     "field users: must be an array, got an object");
    expect_bad_state(d, "missing_window", state_with("\"window\": 2,", ""), "field window: missing");
    expect_bad_state(d, "missing_history", state_with(", \"history\": [[10, 100], [20, 100]]", ""),
                     "field users[0].history: missing");
    expect_bad_state(d, "runtime_string", state_with("[10, 100]", "[\"10\", 100]"),
                     "users[0].history[0] (runtime): must be an integer, got a string");
    expect_bad_state(d, "runtime_real", state_with("[10, 100]", "[10.5, 100]"),
                     "users[0].history[0] (runtime): must be an integer, got a real number");
    expect_bad_state(d, "negative_runtime", state_with("[20, 100]", "[-20, 100]"),
                     "users[0].history[1] (runtime): must be 0..");
    expect_bad_state(d, "negative_estimate", state_with("[20, 100]", "[20, -100]"),
                     "users[0].history[1] (estimate)");
    expect_bad_state(d, "absurd_runtime", state_with("[20, 100]", "[9000000000000000000, 100]"),
                     "users[0].history[1] (runtime): must be 0..1099511627776");
    expect_bad_state(d, "huge_integer", state_with("[20, 100]", "[99999999999999999999999, 100]"),
                     "not valid JSON");
    expect_bad_state(d, "huge_real", state_with("[20, 100]", "[1e999, 100]"), "not valid JSON");
    expect_bad_state(d, "entry_3", state_with("[20, 100]", "[20, 100, 3]"),
                     "users[0].history[1]: must be [runtime, estimate]");
    expect_bad_state(d, "entry_null", state_with("[20, 100]", "null"),
                     "users[0].history[1]: must be an array, got null");
    expect_bad_state(d, "negative_user", state_with("\"user\": 7", "\"user\": -1"),
                     "users[0].user: must be 0..4294967295");
    expect_bad_state(d, "bad_key", state_with("\"estimate_key\": -1", "\"estimate_key\": -2"),
                     "users[0].estimate_key");
    expect_bad_state(d, "window_0", state_with("\"window\": 2", "\"window\": 0"), "field window");
    expect_bad_state(d, "window_big", state_with("\"window\": 2", "\"window\": 31"), "field window");
    expect_bad_state(d, "learned_negative", state_with("\"learned_jobs\": 3", "\"learned_jobs\": -3"),
                     "field learned_jobs");
    expect_bad_state(d, "last_end_bool",
                     state_with("\"last_learned_end\": 2", "\"last_learned_end\": true"),
                     "field last_learned_end: must be an integer, got a boolean");
    expect_bad_state(d, "duplicate_key", state_with("\"window\": 2", "\"window\": 2, \"window\": 3"),
                     "not valid JSON");
    expect_bad_state(d, "duplicate_user",
                     state_with("]]}]", "]]}, {\"user\": 7, \"estimate_key\": -1, \"history\": []}]"),
                     "users[1]: duplicate user 7");
    std::string too_many = "[";
    for (int i = 0; i <= PredictorConfig::kMaxWindow; ++i) too_many += i ? ", [1, 2]" : "[1, 2]";
    expect_bad_state(d, "too_many", state_with("[[10, 100], [20, 100]]", too_many + "]"),
                     "users[0].history: 31 entries");
    expect_bad_state(d, "trailing", std::string(kValidState) + " x", "not valid JSON");
  }

  void testCorruptStatusFiles() {
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("ok"), sample_status(), &err));
    const std::string good = slurp(d.file("ok"));
    struct Case {
      std::string from, to, want;
    };
    const std::vector<Case> cases = {
        {"\"interrupted\": true", "\"interrupted\": 1", "last_cycle.interrupted: must be true or false"},
        {"\"seconds\": 0.0125", "\"seconds\": -0.5", "last_cycle.seconds"},
        {"\"cycles\": 360", "\"cycles\": \"360\"", "totals.cycles: must be an integer"},
        {"\"job_id\": 101", "\"job_id\": 4294967296", "jobs[0].job_id"},
        {"\"state\": \"RUNNING\"", "\"state\": null", "jobs[0].state: must be a string"},
        {"\"reserved\": true", "\"reserved\": \"yes\"", "jobs[1].reserved"},
        {"\"user\": -1", "\"user\": -2", "jobs[1].user"},
        {"\"totals\": {", "\"totals\": 5, \"x\": {", "field totals: must be an object"},
        {"\"version\": \"0.1.0\",", "", "field version: missing"},
        {"\"format_version\": 2", "\"format_version\": 0", "unsupported version 0"},
        {"\"settings\": {", "\"settings\": 5, \"x\": {", "field settings: must be an object"},
        {"\"easypp_window\": \"2\"", "\"easypp_window\": 2", "settings.easypp_window: must be a string"},
        {"\"selective_thresholds\": [", "\"selective_thresholds\": [1.5, 2.25], \"x\": [",
         "selective_thresholds: must have 1 or 4 elements"},
        {"\"selective_thresholds\": [", "\"selective_thresholds\": [1.5, -2, 1, 3], \"x\": [",
         "selective_thresholds[1]: must be a finite"},
        {"\"selective_thresholds\": [", "\"selective_thresholds\": [1.5, 2, \"x\", 3], \"x\": [",
         "selective_thresholds[2]: must be a number"},
        {"\"selective_thresholds\": [", "\"selective_thresholds\": 5, \"x\": [", "field selective_thresholds: must be an array"},
        {"\"count_all\": ", "\"count_all\": 1", "slowdowns.count_all"},
    };
    for (const Case& c : cases) {
      std::string text = good;
      const std::size_t at = text.find(c.from);
      CPPUNIT_ASSERT_MESSAGE(c.from, at != std::string::npos);
      text.replace(at, c.from.size(), c.to);
      spit(d.file("bad"), text);
      Status s = sample_status();
      CPPUNIT_ASSERT_MESSAGE(c.want, !read_status(d.file("bad"), &s, &err));
      CPPUNIT_ASSERT_MESSAGE(err + " (wanted " + c.want + ")",
                             err.rfind(d.file("bad") + ": ", 0) == 0 && contains(err, c.want));
      CPPUNIT_ASSERT(s.jobs.empty() && s.history.empty() && s.version.empty());
    }
  }

  void testEveryTruncationFails() {
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("full"), sample_state(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("fulls"), sample_status(), &err));
    for (const bool status : {false, true}) {
      const std::string name = status ? "fulls" : "full";
      const std::string text = slurp(d.file(name));
      // Every proper prefix that ends before the closing brace is invalid.
      const std::size_t last = text.rfind('}');
      for (std::size_t n = 0; n < last; ++n) {
        spit(d.file("cut"), text.substr(0, n));
        SavedState s = junk_state();
        Status st;
        const bool ok = status ? read_status(d.file("cut"), &st, &err)
                               : load_state(d.file("cut"), &s, &err);
        CPPUNIT_ASSERT_MESSAGE(name + " cut at " + std::to_string(n), !ok);
        CPPUNIT_ASSERT_MESSAGE(err, err.rfind(d.file("cut") + ": ", 0) == 0);
        if (!status) assert_empty(s);
      }
    }
  }

  void testRandomMutationsNeverCrash() {
    TempDir d;
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("base"), sample_state(), &err));
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("bases"), sample_status(), &err));
    const std::string base = slurp(d.file("base")), bases = slurp(d.file("bases"));
    std::mt19937 rng(20240501);
    const std::string alphabet = "[]{}\",:-0123456789e.tnfu\\ \n\0\xff\xc3";
    int loaded = 0, refused = 0;
    for (int i = 0; i < 3000; ++i) {
      std::string text = i % 2 ? base : bases;
      const int edits = 1 + int(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % text.size();
        switch (rng() % 4) {
          case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: text.erase(at, 1 + rng() % 8); break;
          case 2: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
          default: text[at] = char(rng() & 0xff);
        }
        if (text.empty()) text = "x";
      }
      spit(d.file("m"), text);
      bool ok;
      if (i % 2) {
        SavedState s = junk_state();
        ok = load_state(d.file("m"), &s, &err);
        if (!ok) assert_empty(s);
        // What loads can be saved again and loads the same.
        if (ok) {
          CPPUNIT_ASSERT_MESSAGE(err, save_state(d.file("re"), s, &err));
          SavedState t;
          CPPUNIT_ASSERT_MESSAGE(err, load_state(d.file("re"), &t, &err));
          assert_rings_equal(s.rings, t.rings);
        }
      } else {
        Status s;
        ok = read_status(d.file("m"), &s, &err);
        if (ok) CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("re"), s, &err));
      }
      if (!ok) CPPUNIT_ASSERT_MESSAGE(err, err.rfind(d.file("m") + ": ", 0) == 0);
      (ok ? loaded : refused) += 1;
    }
    CPPUNIT_ASSERT(refused > 1000);  // the mutations do break files
  }

  void testBracketsInStringsAreNotNesting() {
    TempDir d;
    Status s = sample_status();
    s.jobs[0].user_name = std::string(200, '[') + "\\\"" + std::string(200, '{');
    s.settings = {{"easypp_x", "a\\"}};  // an escaped backslash just before the closing quote
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, write_status(d.file("s"), s, &err));
    Status t;
    CPPUNIT_ASSERT_MESSAGE(err, read_status(d.file("s"), &t, &err));
    CPPUNIT_ASSERT_EQUAL(s.jobs[0].user_name, t.jobs[0].user_name);
    CPPUNIT_ASSERT(s.settings == t.settings);
  }

  void testPredictionsSurviveSaveAndLoad() {
    TempDir d;
    const std::vector<PredictorConfig> configs = [] {
      std::vector<PredictorConfig> v;
      PredictorConfig c;
      v.push_back(c);
      c.window = 5;
      c.metric = Metric::Median;
      c.type = HistoryType::Extended;
      c.fullness = Fullness::Partial;
      v.push_back(c);
      c.window = 3;
      c.metric = Metric::Max;
      c.type = HistoryType::Immediate;
      c.fallback = Fallback::Relative;
      c.fullness = Fullness::Full;
      v.push_back(c);
      c.window = PredictorConfig::kMaxWindow;
      c.metric = Metric::Min;
      c.type = HistoryType::All;
      c.fullness = Fullness::Partial;
      v.push_back(c);
      // The other predictors are computed from the same rings: nothing new
      // in the file, the same predictions after a load.
      c.kind = PredictorKind::Ewma;
      c.ewma_alpha = 0.3;
      c.window = 8;
      v.push_back(c);
      c.kind = PredictorKind::Regression;
      c.window = 12;
      c.type = HistoryType::Immediate;
      c.fallback = Fallback::Relative;
      v.push_back(c);
      return v;
    }();
    const std::vector<Time> estimates = {60, 600, 3600, 7200, 86400};
    for (const PredictorConfig& cfg : configs) {
      Predictor before(cfg);
      std::mt19937 rng(7 + cfg.window);
      for (int i = 0; i < 2000; ++i) {
        const UserId u = UserId(rng() % 40);
        const Time est = estimates[rng() % estimates.size()];
        before.record(u, Time(rng() % std::uint32_t(est * 1.2)), est);
      }
      SavedState s;
      s.window = cfg.window;
      s.learned_jobs = 2000;
      s.rings = before.snapshot();
      const std::string path =
          d.file("p" + std::to_string(cfg.window) + to_string(cfg.kind));
      std::string err;
      CPPUNIT_ASSERT_MESSAGE(err, save_state(path, s, &err));
      SavedState loaded;
      CPPUNIT_ASSERT_MESSAGE(err, load_state(path, &loaded, &err));
      Predictor after(cfg);
      after.restore(loaded.rings);
      CPPUNIT_ASSERT_EQUAL(before.users(), after.users());
      for (UserId u = 0; u < 45; ++u) {  // 40..44 have no history
        CPPUNIT_ASSERT(before.history(u).size() == after.history(u).size());
        for (Time est : estimates) {
          CPPUNIT_ASSERT_EQUAL(before.predict(u, est), after.predict(u, est));
          CPPUNIT_ASSERT_EQUAL(before.predict(u, est + 1), after.predict(u, est + 1));
          CPPUNIT_ASSERT_EQUAL(before.has_history_for(u, est), after.has_history_for(u, est));
        }
      }
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PluginStateTest);
