// Fuzz target: the SWF reader (libsim/src/swf.cc) and the conversion to a
// workload (libsim/src/workload.cc), then a short replay of what was read.
//
// The input is an SWF file (plain or gzip, detected by content). Options
// (size from field 5 or 8, unsorted policy, clipping, flurries, load
// scaling, a machine size, the scheduler preset) come from a hash of the
// input, so one input always runs the same way. Checked:
//  - the only exception is swf::Error, with a message;
//  - the reader's records and header, written back with format_record and
//    format_header, read back the same (fractions to the writer's 2
//    decimals);
//  - the workload keeps its promises (sorted, sizes within the machine,
//    estimates > 0, counts adding up);
//  - the replay starts every job once, at or after its submission, ends it
//    after exactly its runtime, and never uses more processors than the
//    machine has.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "easypp/policy.h"
#include "easypp/sim/simulator.h"
#include "easypp/sim/swf.h"
#include "easypp/sim/workload.h"
#include "fuzz_util.h"

using namespace easypp;
using easypp::fuzz::TempDir;

namespace {

constexpr std::size_t kMaxJobs = 100;  // a short replay

bool close_enough(double a, double b) {
  return a == b || std::fabs(a - b) <= 0.0051 + std::fabs(a) * 1e-12;
}

bool same_record(const swf::Record& a, const swf::Record& b) {
  return a.job == b.job && a.submit == b.submit && a.wait == b.wait && a.run == b.run &&
         a.alloc_procs == b.alloc_procs && close_enough(a.avg_cpu, b.avg_cpu) &&
         close_enough(a.used_mem, b.used_mem) && a.req_procs == b.req_procs &&
         a.req_time == b.req_time && close_enough(a.req_mem, b.req_mem) && a.status == b.status &&
         a.user == b.user && a.group == b.group && a.app == b.app && a.queue == b.queue &&
         a.partition == b.partition && a.preceding == b.preceding && a.think == b.think;
}

// Reads `path` with the Reader alone (at most kMaxJobs * 4 records). False
// if the file was refused.
bool read_records(const std::string& path, swf::Header* header, std::vector<swf::Record>* out) {
  try {
    swf::Reader r(path);
    swf::Record rec;
    while (out->size() < kMaxJobs * 4 && r.next(rec)) out->push_back(rec);
    *header = r.header();
    const swf::ReaderStats& st = r.stats();
    FUZZ_CHECK(st.records >= out->size());
    FUZZ_CHECK(st.records + st.comments + st.skipped() <= st.lines);
    for (const swf::Diagnostic& d : r.diagnostics()) FUZZ_CHECK(!d.format().empty());
    return true;
  } catch (const swf::Error& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return false;
  }
}

// What was read, written with the project's writer, reads back the same.
void check_round_trip(const TempDir& dir, const swf::Header& header,
                      const std::vector<swf::Record>& records) {
  std::string text = swf::format_header(header);
  for (const swf::Record& r : records) text += swf::format_record(r) + "\n";
  const std::string path =
      dir.write("again.swf", reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  swf::Header h2;
  std::vector<swf::Record> again;
  FUZZ_CHECK(read_records(path, &h2, &again));
  FUZZ_CHECK(again.size() == records.size());
  for (std::size_t i = 0; i < records.size(); ++i) FUZZ_CHECK(same_record(records[i], again[i]));
  // Header values cannot span lines: the writer turns CR and LF into spaces.
  FUZZ_CHECK(h2.entries.size() == header.entries.size());
  for (std::size_t i = 0; i < header.entries.size(); ++i) {
    std::string v = header.entries[i].second;
    std::replace(v.begin(), v.end(), '\r', ' ');
    // The reader trims the value; a CR turned space at an end is trimmed too.
    const std::size_t b = v.find_first_not_of(" \t\r\v\f");
    v = b == std::string::npos ? std::string() : v.substr(b, v.find_last_not_of(" \t\r\v\f") - b + 1);
    FUZZ_CHECK(h2.entries[i].first == header.entries[i].first);
    FUZZ_CHECK(h2.entries[i].second == v);
  }
}

// The replay's invariants, checked as it runs.
class Checker : public SimObserver {
 public:
  void after_pass(const SimView& v, Time /*now*/, const PassResult&) override {
    FUZZ_CHECK(v.free_procs() >= 0 && v.free_procs() <= v.total_procs());
    std::int64_t used = 0;
    for (JobHandle h : v.running_jobs()) used += v.workload().jobs[h].size;
    FUZZ_CHECK(used == v.total_procs() - v.free_procs());
  }
  void on_start(const SimView& v, JobHandle h, Time now, bool) override {
    FUZZ_CHECK(now >= v.workload().jobs[h].submit);
    ++started;
  }
  std::size_t started = 0;
};

void check_workload(const Workload& w, const WorkloadOptions& opt) {
  const WorkloadReport& r = w.report;
  FUZZ_CHECK(w.procs > 0);
  FUZZ_CHECK(!w.jobs.empty() && w.jobs.size() == r.jobs && w.jobs.size() <= kMaxJobs);
  FUZZ_CHECK(r.dropped_submit + r.dropped_runtime + r.dropped_size + r.dropped_too_wide + r.jobs <=
             r.records);
  FUZZ_CHECK(r.records + r.malformed <= r.lines);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const Job& j = w.jobs[i];
    FUZZ_CHECK(j.submit >= 0 && j.runtime >= 0 && j.estimate > 0);
    FUZZ_CHECK(j.size >= 1 && j.size <= w.procs);
    if (opt.clip_runtime) FUZZ_CHECK(j.runtime <= j.estimate);
    if (i > 0) FUZZ_CHECK(w.jobs[i - 1].submit <= j.submit);
    if (opt.keep_records) FUZZ_CHECK(j.record < w.records.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static TempDir dir("swf");
  const std::string path = dir.write("input.swf", data, size);

  // The reader alone, and its writer's round trip.
  {
    swf::Header header;
    std::vector<swf::Record> records;
    if (read_records(path, &header, &records)) check_round_trip(dir, header, records);
  }

  // The workload, with options from the input's hash.
  const std::uint32_t h = fuzz::hash(data, size);
  WorkloadOptions opt;
  opt.max_jobs = kMaxJobs;
  opt.size_from = (h & 1) ? SizeFrom::Requested : SizeFrom::Allocated;
  opt.unsorted = (h & 2) ? UnsortedPolicy::Sort : UnsortedPolicy::Fail;
  opt.clip_runtime = (h & 4) != 0;
  opt.flurry_jobs = (h & 8) ? 2 + (h >> 28) : 0;
  opt.keep_records = (h & 16) != 0;
  if (h & 32) opt.machine_procs = 1 + (h >> 8) % 4096;
  if (h & 64) opt.target_load = 0.1 + double((h >> 16) % 200) / 100.0;
  if (h & 128) opt.default_estimate = 1 + (h >> 12) % 100000;
  opt.reader.max_messages = 5;
  Workload w;
  try {
    w = load_workload(path, opt);
  } catch (const swf::Error& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }
  check_workload(w, opt);

  // A short replay under one preset.
  const std::vector<std::string> presets = preset_names();
  const std::string& name = presets[(h >> 20) % presets.size()];
  std::string err;
  const std::optional<SchedulerConfig> cfg = parse_scheduler_spec(name, {}, &err);
  FUZZ_CHECK(cfg.has_value());
  Simulator sim(w, *cfg);
  Checker checker;
  const RunResult res = sim.run(&checker);
  FUZZ_CHECK(res.jobs.size() == w.jobs.size());
  FUZZ_CHECK(checker.started == w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobOutcome& o = res.jobs[i];
    FUZZ_CHECK(o.start >= w.jobs[i].submit);
    FUZZ_CHECK(o.end == o.start + w.jobs[i].runtime);
    FUZZ_CHECK(o.accuracy >= 0 && o.accuracy <= 1.0 + 1e-9);
  }
  return 0;
}
