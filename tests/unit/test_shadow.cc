// easypp-shadow's engine (tools/shadow/): the plugin's cycles replayed
// between polls. Above all, that what a poll cannot see does not matter: the
// same cluster history polled every second, every minute or every ten
// minutes (slurmctld having purged finished jobs, accounting filling in)
// gives the same predictions, corrections and history, and so does a
// follower stopped, saved to its file and restarted in the middle. Then the
// JSON of slurmctld's job list (Slurm 22.05's and 24.11's shapes), the
// warm start, and the state file the plugin loads.
#include <cppunit/extensions/HelperMacros.h>
#include <jansson.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "easypp/sim/metrics.h"
#include "plugin_state.h"
#include "shadow/report.h"
#include "shadow/shadow.h"
#include "shadow/shadow_file.h"
#include "shadow/views.h"

using namespace easypp;
using namespace easypp::shadow;

namespace {

// A file name in a fresh private directory (files are written only into
// directories no one else can write to: plugin/safe_file.h, so not /tmp).
struct ScratchFile {
  std::string dir, path;
  explicit ScratchFile(const std::string& name) {
    std::string tmpl = "/tmp/" + name + ".XXXXXX";
    CPPUNIT_ASSERT(mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    path = dir + "/" + name + ".json";
  }
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// One job of a made-up cluster history.
struct TJob {
  std::uint32_t id;
  UserId uid;
  Time submit, start, end, limit;  // start 0: cancelled while pending
};

// What a poll at time t shows: slurmctld lists jobs until min_job_age after
// their end; accounting has every finished job.
std::vector<JobView> views_at(const std::vector<TJob>& jobs, Time t, Time min_job_age) {
  std::vector<JobView> out;
  for (const TJob& j : jobs) {
    if (j.submit > t) continue;
    JobView v;
    v.id = j.id;
    v.name = std::to_string(j.id);
    v.uid = j.uid;
    v.user = "u" + std::to_string(j.uid);
    v.partition = j.id % 3 ? "batch" : "long";
    v.submit = j.submit;
    v.eligible = j.submit;
    v.estimate = j.limit;
    if (j.end <= t) {
      v.phase = JobView::Phase::Finished;
      v.state = j.start ? (j.end - j.start >= j.limit ? "TIMEOUT" : "COMPLETED") : "CANCELLED";
      v.start = j.start;
      v.end = j.end;
      v.had_allocation = j.start > 0;
      v.from_accounting = t - j.end > min_job_age;
    } else if (j.start > 0 && j.start <= t) {
      v.phase = JobView::Phase::Running;
      v.state = "RUNNING";
      v.start = j.start;
    } else {
      v.phase = JobView::Phase::Pending;
      v.state = "PENDING";
    }
    out.push_back(v);
  }
  return out;
}

std::vector<TJob> history(unsigned seed, int n) {
  std::mt19937 rng(seed);
  std::vector<TJob> jobs;
  Time t = 1000000;
  for (int i = 0; i < n; ++i) {
    t += std::uniform_int_distribution<Time>(0, 90)(rng);
    TJob j;
    j.id = std::uint32_t(100 + i);
    j.uid = 1000 + std::uniform_int_distribution<int>(0, 4)(rng);
    j.submit = t;
    const Time runtime = std::uniform_int_distribution<Time>(1, 1500)(rng);
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    j.limit = kind < 3 ? 3600 : kind < 6 ? runtime * (1 + kind) : std::max<Time>(60, runtime / 2);
    const Time wait = std::uniform_int_distribution<Time>(0, 400)(rng);
    if (kind == 9) {  // cancelled while pending
      j.start = 0;
      j.end = t + wait + 1;
    } else {
      j.start = t + wait;
      j.end = j.start + std::min(runtime, j.limit + 3);  // killed a little after its limit
    }
    jobs.push_back(j);
  }
  return jobs;
}

// The plugin's defaults but the paper's learning (every finished job, however
// short): these tests are about the shadow's mechanics, with runtimes of
// seconds, which the default history (learn-min-runtime=60) would not learn.
plugin::PluginConfig config() {
  plugin::PluginConfig c;
  c.sched.predictor.learn_completed_only = false;
  c.sched.predictor.learn_min_runtime = 0;
  return c;
}

// Polls every `interval` from before the first job to after the last end.
void follow(Shadow& sh, const std::vector<TJob>& jobs, Time from, Time to, Time interval,
            Time min_job_age) {
  for (Time t = from; t <= to; t += interval) sh.poll(views_at(jobs, t, min_job_age), t);
}

Time last_end(const std::vector<TJob>& jobs) {
  Time e = 0;
  for (const TJob& j : jobs) e = std::max(e, j.end);
  return e;
}

std::string records_text(const Shadow& sh) {
  std::string s;
  for (const Record& r : sh.records()) {
    json_t* o = record_json(r);
    char* t = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    s += t;
    s += "\n";
    std::free(t);
    json_decref(o);
  }
  return s;
}

// The history (the watermark is the last poll's, which differs with the grid).
std::string rings_text(const Shadow& sh) {
  plugin::SavedState s = sh.plugin_state();
  s.last_learned_end = 0;
  return plugin::state_to_json(s, 0);
}

JobView running_view(std::uint32_t id, UserId uid, Time submit, Time start, Time limit) {
  JobView v;
  v.id = id;
  v.uid = uid;
  v.user = "u";
  v.phase = JobView::Phase::Running;
  v.submit = v.eligible = submit;
  v.start = start;
  v.estimate = limit;
  return v;
}

JobView finished_view(std::uint32_t id, UserId uid, Time submit, Time start, Time end, Time limit) {
  JobView v = running_view(id, uid, submit, start, limit);
  v.phase = JobView::Phase::Finished;
  v.end = end;
  v.had_allocation = true;
  return v;
}

json_t* parse(const char* text) {
  json_error_t e;
  json_t* j = json_loads(text, 0, &e);
  CPPUNIT_ASSERT_MESSAGE(e.text, j != nullptr);
  return j;
}

}  // namespace

class ShadowTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ShadowTest);
  CPPUNIT_TEST(testPredictionCorrectionAndRecord);
  CPPUNIT_TEST(testPollIntervalDoesNotMatter);
  CPPUNIT_TEST(testRestartContinues);
  CPPUNIT_TEST(testWarmStartAndPluginState);
  CPPUNIT_TEST(testJobsBeforeTheStartAreNotJudged);
  CPPUNIT_TEST(testVanishedJobIsForgotten);
  CPPUNIT_TEST(testBlockedJobsArriveWhenReleased);
  CPPUNIT_TEST(testFirstLookIsTheSubmission);
  CPPUNIT_TEST(testLifeAccuracy);
  CPPUNIT_TEST(testCtldView2205);
  CPPUNIT_TEST(testCtldView2411);
  CPPUNIT_TEST(testCtldViewRefusals);
  CPPUNIT_TEST(testStateFileRefusesDamage);
  CPPUNIT_TEST(testSummary);
  CPPUNIT_TEST_SUITE_END();

 public:
  // Two runs of user 7 make the third's prediction (60 s, rounded up);
  // it runs 200 s: the correction falls due at start + 60 + 1 and raises the
  // prediction to its limit.
  void testPredictionCorrectionAndRecord() {
    Shadow sh(config());
    sh.poll({}, 100);
    std::vector<JobView> v = {finished_view(1, 7, 110, 110, 150, 600),
                              finished_view(2, 7, 111, 111, 191, 600)};
    sh.poll(v, 200);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), sh.counters().learned);
    JobView j3 = running_view(3, 7, 300, 305, 900);
    v.push_back(j3);
    sh.poll(v, 310);
    const JobPlan* p = sh.book().find(3);
    CPPUNIT_ASSERT(p != nullptr);
    CPPUNIT_ASSERT_EQUAL(Time(60), p->prediction);
    sh.poll(v, 365);  // due at 305 + 60 + 1 = 366: not yet
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sh.counters().corrections);
    j3 = finished_view(3, 7, 300, 305, 505, 900);
    v.back() = j3;
    const PollResult r = sh.poll(v, 600);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), sh.counters().corrections);
    CPPUNIT_ASSERT_EQUAL(1u, r.corrections);
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), sh.records().size());
    const Record& rec = sh.records().back();
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(3), rec.id);
    CPPUNIT_ASSERT_EQUAL(Time(60), rec.first_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(60), rec.start_prediction);
    CPPUNIT_ASSERT_EQUAL(Time(900), rec.final_prediction);
    CPPUNIT_ASSERT_EQUAL(1u, rec.corrections);
    CPPUNIT_ASSERT(rec.from_history);
    CPPUNIT_ASSERT_EQUAL(Time(200), rec.runtime);
    CPPUNIT_ASSERT_EQUAL(Time(300), rec.arrival);
    // time-weighted: 60 s (acc 0.3) over [300, 366), 900 s (acc 2/9) over [366, 505]
    const double want = (0.3 * 66 + (200.0 / 900) * 139) / 205;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(want, rec.accuracy, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(200.0 / 900, rec.limit_accuracy, 1e-12);
    // the first two had no history: their limit was their prediction
    CPPUNIT_ASSERT(!sh.records()[0].from_history);
    CPPUNIT_ASSERT_EQUAL(Time(600), sh.records()[0].first_prediction);
    // learned once, though slurmctld lists them again and again
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), sh.counters().learned);
    sh.poll(v, 700);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), sh.counters().learned);
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), sh.records().size());
  }

  // The same history seen every 1, 13, 60 and 600 s (at 600 s, slurmctld
  // has purged many finished jobs: accounting's views stand in): the same
  // records, corrections and history.
  void testPollIntervalDoesNotMatter() {
    const std::vector<TJob> jobs = history(7, 300);
    const Time from = jobs.front().submit - 5, to = last_end(jobs) + 700;
    Shadow ref(config());
    follow(ref, jobs, from, to, 1, 300);
    CPPUNIT_ASSERT(ref.records().size() > 200);
    CPPUNIT_ASSERT(ref.counters().corrections > 20);
    std::uint64_t from_history = 0;
    for (const Record& r : ref.records()) from_history += r.from_history;
    CPPUNIT_ASSERT(from_history > 150);
    CPPUNIT_ASSERT(ref.counters().never_ran > 10);
    for (Time interval : {13, 60, 600}) {
      Shadow sh(config());
      follow(sh, jobs, from, to, interval, 300);
      CPPUNIT_ASSERT_EQUAL_MESSAGE("interval " + std::to_string(interval), records_text(ref),
                                   records_text(sh));
      CPPUNIT_ASSERT_EQUAL(ref.counters().corrections, sh.counters().corrections);
      CPPUNIT_ASSERT_EQUAL(ref.counters().never_ran, sh.counters().never_ran);
      CPPUNIT_ASSERT_EQUAL(rings_text(ref), rings_text(sh));
      CPPUNIT_ASSERT(sh.counters().cycles < ref.counters().cycles);
    }
  }

  // Stopped at any point, saved to its file, read back and continued: the
  // same as never stopped (PredictionBook::adopt puts the plans back).
  void testRestartContinues() {
    const std::vector<TJob> jobs = history(11, 200);
    const Time from = jobs.front().submit - 5, to = last_end(jobs) + 700;
    Shadow ref(config());
    follow(ref, jobs, from, to, 30, 300);
    const ScratchFile scratch("easypp-shadow-test");
    const char* path = scratch.path.c_str();
    for (Time stop : {from + 3000, from + 6100, (from + to) / 2}) {
      Shadow a(config());
      follow(a, jobs, from, stop, 30, 300);
      std::string err;
      CPPUNIT_ASSERT_MESSAGE(err, save_shadow_state(path, a.save(), &err));
      ShadowState s;
      CPPUNIT_ASSERT_MESSAGE(err, load_shadow_state(path, &s, &err));
      Shadow b(config());
      b.restore(s, stop);
      // down for ten minutes; then polls on the old grid
      Time t = stop + 600;
      t += (30 - (t - from) % 30) % 30;
      follow(b, jobs, t, to, 30, 300);
      CPPUNIT_ASSERT_EQUAL(records_text(ref), records_text(b));
      CPPUNIT_ASSERT_EQUAL(ref.counters().corrections, b.counters().corrections);
      CPPUNIT_ASSERT_EQUAL(rings_text(ref), rings_text(b));
    }
  }

  void testWarmStartAndPluginState() {
    plugin::SavedState warm;
    warm.last_learned_end = 500;
    warm.learned_jobs = 40;
    Predictor::Ring ring;
    ring.user = 7;
    ring.entries = {{100, 600}, {301, 600}};
    warm.rings = {ring};
    Shadow sh(config());
    sh.warm_start(warm, 1000);
    // a job that ended before the warm start's last one is not learned again
    std::vector<JobView> v = {finished_view(1, 7, 400, 400, 450, 600),
                              running_view(2, 7, 990, 995, 3600)};
    sh.poll(v, 1000);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sh.counters().learned);
    CPPUNIT_ASSERT_EQUAL(Time(201), sh.book().find(2)->prediction);  // (100 + 301) / 2, up
    v[1] = finished_view(2, 7, 990, 995, 1095, 3600);
    sh.poll(v, 1100);
    const plugin::SavedState out = sh.plugin_state();
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(41), out.learned_jobs);
    CPPUNIT_ASSERT_EQUAL(Time(1099), out.last_learned_end);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), out.rings.size());
    CPPUNIT_ASSERT_EQUAL(Time(301), out.rings[0].entries[0].runtime);
    CPPUNIT_ASSERT_EQUAL(Time(100), out.rings[0].entries[1].runtime);
    // the plugin loads what it writes
    const ScratchFile scratch("easypp-shadow-plugin");
    const char* path = scratch.path.c_str();
    std::string err;
    CPPUNIT_ASSERT_MESSAGE(err, plugin::save_state(path, out, &err));
    plugin::SavedState back;
    CPPUNIT_ASSERT_MESSAGE(err, plugin::load_state(path, &back, &err));
    CPPUNIT_ASSERT_EQUAL(out.last_learned_end, back.last_learned_end);
  }

  // Waiting or running when the shadow started: their runtimes are history,
  // but their predictions are not judged (the plugin would have made them
  // earlier, from a history the shadow did not see).
  void testJobsBeforeTheStartAreNotJudged() {
    Shadow sh(config());
    std::vector<JobView> v = {running_view(1, 7, 50, 60, 600), running_view(2, 8, 150, 0, 600)};
    v[1].phase = JobView::Phase::Pending;
    v[1].start = 0;
    sh.poll(v, 200);
    v[0] = finished_view(1, 7, 50, 60, 260, 600);
    v[1] = finished_view(2, 8, 150, 210, 250, 600);
    v.push_back(finished_view(3, 8, 220, 225, 270, 600));
    sh.poll(v, 300);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), sh.counters().before_start);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), sh.records().size());
    CPPUNIT_ASSERT_EQUAL(std::uint32_t(3), sh.records()[0].id);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), sh.counters().learned);
  }

  // A job gone from slurmctld with no end anywhere: forgotten, so it does
  // not keep the correction timer (nor a correction count) going.
  void testVanishedJobIsForgotten() {
    Shadow sh(config());
    sh.poll({}, 10);
    sh.poll({running_view(1, 7, 20, 20, 600)}, 30);
    sh.poll({}, 2000);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), sh.counters().vanished);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sh.counters().corrections);
    CPPUNIT_ASSERT(sh.book().find(1) == nullptr);
    CPPUNIT_ASSERT_EQUAL(kNever, sh.book().next_expiry());
  }

  // A held job is no candidate: its prediction is made when it is released
  // (from the history of then).
  void testBlockedJobsArriveWhenReleased() {
    Shadow sh(config());
    sh.poll({}, 10);
    JobView held;
    held.id = 5;
    held.uid = 7;
    held.submit = 20;
    held.estimate = 900;
    held.blocked = true;
    std::vector<JobView> v = {held, finished_view(1, 7, 21, 21, 61, 600),
                              finished_view(2, 7, 22, 22, 82, 600)};
    sh.poll(v, 100);
    CPPUNIT_ASSERT(sh.book().find(5) == nullptr);
    v[0].blocked = false;
    v[0].eligible = 150;
    sh.poll(v, 200);
    CPPUNIT_ASSERT(sh.book().find(5) != nullptr);
    CPPUNIT_ASSERT_EQUAL(Time(50), sh.book().find(5)->prediction);
    CPPUNIT_ASSERT_EQUAL(Time(150), sh.jobs().at(5).arrival);
  }

  // Slurm stamps the begin time at its first look at a job, a moment that
  // depends on when it looked: within kFirstLook of the submission the job
  // is a candidate from its submission, whoever saw which stamp.
  void testFirstLookIsTheSubmission() {
    JobView v = running_view(1, 7, 100, 130, 600);
    v.eligible = 0;
    CPPUNIT_ASSERT_EQUAL(Time(0), candidate_since(v));
    for (Time e : {100, 101, 105}) {
      v.eligible = e;
      CPPUNIT_ASSERT_EQUAL(Time(100), candidate_since(v));
    }
    v.eligible = 106;  // a real delay (--begin, a released hold)
    CPPUNIT_ASSERT_EQUAL(Time(106), candidate_since(v));
    // two followers, one seeing the job before Slurm looked at it, one after
    Shadow a(config()), b(config());
    a.poll({}, 90);
    b.poll({}, 90);
    JobView p;
    p.id = 1;
    p.uid = 7;
    p.submit = 100;
    p.eligible = 100;  // ctld_view: not yet looked at, eligible from submission
    p.estimate = 600;
    a.poll({p}, 101);
    JobView r = running_view(1, 7, 100, 104, 600);
    r.eligible = 103;
    a.poll({r}, 110);
    b.poll({r}, 110);
    CPPUNIT_ASSERT_EQUAL(Time(100), a.jobs().at(1).arrival);
    CPPUNIT_ASSERT_EQUAL(Time(100), b.jobs().at(1).arrival);
  }

  void testLifeAccuracy() {
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, life_accuracy({{0, 100}}, 0, 100, 100), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, life_accuracy({{0, 200}}, 0, 100, 100), 1e-12);
    // half the life at 50 (0.5), half at 100 (1)
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.75, life_accuracy({{0, 50}, {50, 100}}, 0, 100, 100), 1e-12);
    // no life: the last value's accuracy
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, life_accuracy({{5, 200}}, 5, 5, 100), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(prediction_accuracy(30, 60), 0.5, 1e-12);
  }

  // Slurm 22.05 (v0.0.38, squeue --json): plain numbers, state strings.
  void testCtldView2205() {
    json_t* j = parse(R"({"job_id": 12, "user_id": 999, "user_name": "alice",
      "partition": "batch", "job_state": "PENDING", "state_reason": "Resources",
      "priority": 4294901757, "submit_time": 1000, "eligible_time": 1001,
      "start_time": 5000, "end_time": 9000, "time_limit": 5, "het_job_id": 0,
      "het_job_offset": 0, "array_job_id": 0, "array_task_id": null, "nodes": ""})");
    JobView v;
    std::string why;
    CPPUNIT_ASSERT_MESSAGE(why, ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Pending);
    CPPUNIT_ASSERT(!v.blocked);
    CPPUNIT_ASSERT_EQUAL(Time(300), v.estimate);
    CPPUNIT_ASSERT_EQUAL(Time(0), v.start);  // a pending job's start_time is a plan
    CPPUNIT_ASSERT_EQUAL(Time(1001), v.eligible);
    CPPUNIT_ASSERT_EQUAL(UserId(999), v.uid);
    CPPUNIT_ASSERT_EQUAL(std::string("12"), v.name);
    json_object_set_new(j, "state_reason", json_string("JobHeldUser"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why) && v.blocked);
    json_object_set_new(j, "state_reason", json_string("QOSMaxJobsPerUserLimit"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why) && v.blocked);
    json_object_set_new(j, "state_reason", json_string("Priority"));
    json_object_set_new(j, "priority", json_integer(0));  // held
    CPPUNIT_ASSERT(ctld_view(j, &v, &why) && v.blocked);
    // a limit of 0 minutes: 1 s, as the plugin; none: a year
    json_object_set_new(j, "time_limit", json_integer(0));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(Time(1), v.estimate);
    json_object_set_new(j, "partition", json_string("short,long"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(std::string("short"), v.partition);
    json_object_set_new(j, "time_limit", json_null());
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(kUnlimitedEstimate, v.estimate);
    // cancelled while pending: finished, never allocated
    json_object_set_new(j, "job_state", json_string("CANCELLED"));
    json_object_set_new(j, "start_time", json_integer(2000));
    json_object_set_new(j, "end_time", json_integer(2000));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Finished && !v.had_allocation);
    // completing: finished (its end is known)
    json_object_set_new(j, "job_state", json_string("COMPLETING"));
    json_object_set_new(j, "nodes", json_string("n1"));
    json_object_set_new(j, "end_time", json_integer(2100));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Finished && v.had_allocation);
    // an array task, a het component
    json_object_set_new(j, "array_job_id", json_integer(10));
    json_object_set_new(j, "array_task_id", json_integer(2));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(std::string("10_2"), v.name);
    json_object_set_new(j, "het_job_id", json_integer(11));
    json_object_set_new(j, "het_job_offset", json_integer(1));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(std::string("11+1"), v.name);
    CPPUNIT_ASSERT(v.het_component);
    json_decref(j);
  }

  // Slurm 24.11 (v0.0.40+): {"set", "infinite", "number"} numbers, state arrays.
  void testCtldView2411() {
    json_t* j = parse(R"({"job_id": 30, "user_id": 1001, "user_name": "bob",
      "partition": "long", "job_state": ["RUNNING"], "state_reason": "None",
      "priority": {"set": true, "infinite": false, "number": 100},
      "submit_time": {"set": true, "infinite": false, "number": 1000},
      "eligible_time": {"set": true, "infinite": false, "number": 1000},
      "start_time": {"set": true, "infinite": false, "number": 1010},
      "end_time": {"set": true, "infinite": false, "number": 4610},
      "time_limit": {"set": true, "infinite": false, "number": 60},
      "het_job_id": {"set": true, "infinite": false, "number": 0},
      "array_job_id": {"set": true, "infinite": false, "number": 0},
      "array_task_id": {"set": false, "infinite": false, "number": 0}})");
    JobView v;
    std::string why;
    CPPUNIT_ASSERT_MESSAGE(why, ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Running);
    CPPUNIT_ASSERT_EQUAL(Time(1010), v.start);
    CPPUNIT_ASSERT_EQUAL(Time(0), v.end);  // a running job's end_time is its limit
    CPPUNIT_ASSERT_EQUAL(Time(3600), v.estimate);
    CPPUNIT_ASSERT_EQUAL(std::string("RUNNING"), v.state);
    json_object_set_new(j, "job_state", parse(R"(["COMPLETED", "COMPLETING"])"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Finished);
    json_object_set_new(j, "job_state", parse(R"(["PENDING", "REQUEUE_HOLD"])"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT(v.phase == JobView::Phase::Pending && v.blocked);
    json_object_set_new(j, "job_state", parse(R"(["PENDING"])"));
    json_object_set_new(j, "time_limit", parse(R"({"set": true, "infinite": true, "number": 0})"));
    CPPUNIT_ASSERT(ctld_view(j, &v, &why));
    CPPUNIT_ASSERT_EQUAL(kUnlimitedEstimate, v.estimate);
    CPPUNIT_ASSERT(!v.blocked);
    json_decref(j);
  }

  void testCtldViewRefusals() {
    const char* bad[] = {
        R"({"user_id": 1, "job_state": "PENDING", "submit_time": 5})",
        R"({"job_id": 1, "job_state": "MYSTERY", "submit_time": 5})",
        R"({"job_id": 1, "job_state": "RUNNING", "submit_time": 5, "start_time": 0})",
        R"({"job_id": 1, "job_state": "COMPLETED", "submit_time": 5, "start_time": 9, "end_time": 7})",
        R"({"job_id": 1, "job_state": "PENDING", "submit_time": -5})",
        R"({"job_id": 1, "job_state": "PENDING", "submit_time": 5, "time_limit": "x"})",
        R"({"job_id": 1, "job_state": "PENDING"})",
        R"([1, 2])",
    };
    for (const char* b : bad) {
      json_t* j = parse(b);
      JobView v;
      std::string why;
      CPPUNIT_ASSERT_MESSAGE(b, !ctld_view(j, &v, &why));
      CPPUNIT_ASSERT_MESSAGE(b, !why.empty());
      json_decref(j);
    }
  }

  // A damaged file is refused with the field named, never half-used.
  void testStateFileRefusesDamage() {
    const std::vector<TJob> jobs = history(3, 40);
    Shadow a(config());
    follow(a, jobs, jobs.front().submit - 1, jobs.front().submit + 2000, 60, 300);
    const ScratchFile scratch("easypp-shadow-damage");
    const char* path = scratch.path.c_str();
    std::string err;
    CPPUNIT_ASSERT(save_shadow_state(path, a.save(), &err));
    std::string text;
    CPPUNIT_ASSERT(plugin::read_json_text(path, &text, &err));
    auto damaged = [&](const std::string& from, const std::string& to) {
      std::string t = text;
      const auto at = t.find(from);
      CPPUNIT_ASSERT_MESSAGE(from, at != std::string::npos);
      t.replace(at, from.size(), to);
      FILE* f = std::fopen(path, "w");
      std::fputs(t.c_str(), f);
      std::fclose(f);
      ShadowState s;
      s.first = 42;
      std::string why;
      CPPUNIT_ASSERT(!load_shadow_state(path, &s, &why));
      CPPUNIT_ASSERT_EQUAL(Time(42), s.first);  // untouched
      return why;
    };
    CPPUNIT_ASSERT(damaged("\"kind\":\"easypp-shadow\"", "\"kind\":\"other\"").find("field kind") !=
                   std::string::npos);
    CPPUNIT_ASSERT(damaged("\"estimate\":", "\"estimate\":-").find(".estimate") !=
                   std::string::npos);
    CPPUNIT_ASSERT(damaged("\"records\":[", "\"records\":7,\"x\":[").find("records") !=
                   std::string::npos);
    CPPUNIT_ASSERT(damaged("{", "{{").find("not valid JSON") != std::string::npos);
    unlink(path);
    bool missing = false;
    ShadowState s;
    CPPUNIT_ASSERT(!load_shadow_state(path, &s, &err, &missing));
    CPPUNIT_ASSERT(missing);
  }

  void testSummary() {
    Record a;
    a.user = "alice";
    a.partition = "batch";
    a.estimate = 1000;
    a.runtime = 100;  // limit 10x: over 2x and 5x, not over 10x
    a.first_prediction = 100;
    a.accuracy = 1.0;
    a.limit_accuracy = 0.1;
    a.corrections = 0;
    a.from_history = true;
    Record b = a;
    b.user = "bob";
    b.estimate = 150;
    b.limit_accuracy = 100.0 / 150;
    b.corrections = 2;
    b.accuracy = 0.5;
    b.from_history = false;
    const Summary s = summarize({a, b, a});
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), s.all.jobs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.5 / 3, s.all.accuracy, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL((0.2 + 100.0 / 150) / 3, s.all.limit_accuracy, 1e-12);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), s.all.over2);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), s.all.over5);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), s.all.over10);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), s.all.corrections);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), s.all.corrected_jobs);
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), s.all.from_history);
    CPPUNIT_ASSERT_EQUAL(std::size_t(2), s.users.size());
    CPPUNIT_ASSERT_EQUAL(std::string("alice"), s.users[0].key);  // most jobs first
    CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), s.users[0].jobs);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), s.partitions.size());
    CPPUNIT_ASSERT_EQUAL(std::string("1:00:00"), fmt_duration(3600));
    CPPUNIT_ASSERT_EQUAL(std::string("1-00:00:01"), fmt_duration(86401));
    CPPUNIT_ASSERT_EQUAL(std::string("59s"), fmt_duration(59));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ShadowTest);
