// From SWF records to simulatable jobs (spec section 6): every convention is
// a WorkloadOptions switch, every dropped or adjusted record is counted in
// WorkloadReport, and the first drop of each reason is described in a
// Diagnostic naming the file, line and field. Choices the counts alone do not
// explain (where a missing estimate's value or the machine size came from)
// get a Diagnostic too; plain counts (runtimes over the estimate, unsorted
// records, flurries, load scaling) are left to the report.
#include "easypp/sim/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace easypp {

namespace {

std::string fmt_double(double v, int prec = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, v);
  return buf;
}

/// Turns records into jobs one at a time (so load_workload can stream) and
/// applies the whole-log conventions at the end.
class Converter {
 public:
  Converter(std::string source, const WorkloadOptions& opt) : opt_(opt) {
    w_.source = std::move(source);
    name_ = w_.source == "-" ? "<stdin>" : w_.source;
  }

  /// The header is complete once the first record is seen.
  void set_header(const swf::Header& h) { w_.header = h; }

  /// Returns false once max_jobs jobs have been collected.
  bool add(const swf::Record& r);

  /// Applies the whole-log conventions. `reader_diags` go first in
  /// Workload::diagnostics. Throws swf::Error on the fatal cases.
  Workload finish(const std::vector<swf::Diagnostic>& reader_diags);

  WorkloadReport& report() { return w_.report; }

 private:
  enum Reason { kSubmit, kRuntime, kSize, kTooWide, kNumReasons };

  void note(std::uint64_t line, int field, std::string msg) {
    if (diags_.size() < opt_.reader.max_messages)
      diags_.push_back(swf::Diagnostic{name_, line, field, std::move(msg)});
  }
  void drop(Reason why, const swf::Record& r, int field, const std::string& what) {
    if (noted_[why]) return;
    noted_[why] = true;
    note(r.line, field,
         "job " + std::to_string(r.job) + " dropped: " + what +
             " (further drops for this reason are only counted)");
  }
  void determine_machine();

  const WorkloadOptions& opt_;
  Workload w_;
  std::string name_;
  std::vector<swf::Diagnostic> diags_;
  bool noted_[kNumReasons] = {};
  bool machine_known_ = false;
  Time max_runtime_ = 0;
  Time max_submit_ = std::numeric_limits<Time>::min();
  std::uint64_t max_submit_line_ = 0;
  std::int64_t max_submit_job_ = -1;
  std::uint64_t ordinal_ = 0;
};

void Converter::determine_machine() {
  machine_known_ = true;
  if (opt_.machine_procs > 0) {
    w_.procs = opt_.machine_procs;
    return;
  }
  if (auto p = w_.header.max_procs(); p && *p > 0) {
    w_.procs = *p;
    return;
  }
  if (auto n = w_.header.max_nodes(); n && *n > 0) {
    w_.procs = *n;
    note(0, 0, "no MaxProcs header: machine size taken from MaxNodes (" + std::to_string(*n) + ")");
    return;
  }
  throw swf::Error(swf::Diagnostic{
      name_, 0, 0,
      "the machine size is unknown: the header has neither a usable MaxProcs nor MaxNodes "
      "line; pass the number of processors with --procs N"});
}

bool Converter::add(const swf::Record& r) {
  if (opt_.max_jobs > 0 && w_.jobs.size() >= opt_.max_jobs) return false;
  ++ordinal_;
  WorkloadReport& rep = w_.report;
  if (r.run > max_runtime_) max_runtime_ = r.run;

  if (r.submit < 0) {
    ++rep.dropped_submit;
    drop(kSubmit, r, 2, "submit time " + std::to_string(r.submit) + " (unknown)");
    return true;
  }
  if (r.run < 0) {
    ++rep.dropped_runtime;
    drop(kRuntime, r, 4, "run time " + std::to_string(r.run) + " (unknown; usually cancelled before it started)");
    return true;
  }
  std::int64_t size;
  int size_field;
  if (opt_.size_from == SizeFrom::Requested) {
    size = r.req_procs > 0 ? r.req_procs : r.alloc_procs;
    size_field = r.req_procs > 0 ? 8 : 5;
  } else {
    size = r.alloc_procs > 0 ? r.alloc_procs : r.req_procs;
    size_field = r.alloc_procs > 0 ? 5 : 8;
  }
  if (size <= 0) {
    ++rep.dropped_size;
    drop(kSize, r, 5, "no size: allocated (" + std::to_string(r.alloc_procs) + ") and requested (" +
                          std::to_string(r.req_procs) + ") processors are both unknown");
    return true;
  }
  if (!machine_known_) determine_machine();
  if (size > w_.procs) {
    ++rep.dropped_too_wide;
    drop(kTooWide, r, size_field,
         std::to_string(size) + " processors, wider than the machine (" + std::to_string(w_.procs) + ")");
    return true;
  }

  // Sortedness among the records kept (LLNL-Thunder has submit=-1 records
  // out of order, dropped above).
  if (r.submit < max_submit_) {
    if (opt_.unsorted == UnsortedPolicy::Fail) {
      throw swf::Error(swf::Diagnostic{
          name_, r.line, 2,
          "submit time " + std::to_string(r.submit) + " of job " + std::to_string(r.job) +
              " is earlier than " + std::to_string(max_submit_) + " of job " +
              std::to_string(max_submit_job_) +
              (max_submit_line_ ? " on line " + std::to_string(max_submit_line_) : std::string()) +
              ": the log is not sorted by submit time; to sort it (stably) pass --unsorted=sort"});
    }
    ++rep.unsorted;
  } else {
    max_submit_ = r.submit;
    max_submit_line_ = r.line;
    max_submit_job_ = r.job;
  }

  Job j;
  j.id = r.job >= 0 ? static_cast<std::uint64_t>(r.job) : ordinal_;
  j.submit = r.submit;
  j.runtime = r.run;
  j.estimate = r.req_time > 0 ? r.req_time : 0;  // 0: filled in by finish()
  if (j.estimate == 0) ++rep.estimate_missing;
  j.size = size;
  j.user = r.user >= 0 ? r.user : kNoUser;
  j.completed = r.status == 1 || r.status == -1;
  j.preceding = r.preceding;
  j.think = r.think;
  if (opt_.keep_records) {
    j.record = static_cast<std::uint32_t>(w_.records.size());
    w_.records.push_back(r);
  }
  w_.jobs.push_back(j);
  return !(opt_.max_jobs > 0 && w_.jobs.size() >= opt_.max_jobs);
}

Workload Converter::finish(const std::vector<swf::Diagnostic>& reader_diags) {
  WorkloadReport& rep = w_.report;
  std::vector<Job>& jobs = w_.jobs;

  if (jobs.empty()) {
    std::string why = std::to_string(rep.records) + " records read";
    auto add = [&why](std::uint64_t n, const char* what) {
      if (n) why += ", " + std::to_string(n) + " " + what;
    };
    add(rep.malformed, "malformed lines skipped");
    add(rep.dropped_submit, "dropped for submit < 0");
    add(rep.dropped_runtime, "dropped for runtime < 0");
    add(rep.dropped_size, "dropped for having no size");
    add(rep.dropped_too_wide, "dropped as wider than the machine");
    throw swf::Error(swf::Diagnostic{name_, 0, 0, "no simulatable job (" + why + ")"});
  }

  // Missing estimates.
  if (rep.estimate_missing > 0) {
    Time def = opt_.default_estimate;
    std::string how;
    if (def > 0) {
      how = "the given default";
    } else {
      Time hdr = w_.header.max_runtime().value_or(0);
      def = std::max<Time>({hdr, max_runtime_, 1});
      how = "the larger of the MaxRuntime header (" + (hdr > 0 ? std::to_string(hdr) : std::string("none")) +
            ") and the largest runtime in the log (" + std::to_string(max_runtime_) + ")";
    }
    rep.default_estimate = def;
    for (Job& j : jobs)
      if (j.estimate == 0) j.estimate = def;
    note(0, 9,
         std::to_string(rep.estimate_missing) + " jobs have no requested time (<= 0); their estimate is " +
             std::to_string(def) + " s, " + how);
  }

  // Runtimes beyond the estimate: kept (the beyond-estimate correction
  // exists for them) unless clipping was asked for.
  for (Job& j : jobs) {
    if (j.runtime > j.estimate) {
      ++rep.runtime_over_estimate;
      if (opt_.clip_runtime) {
        j.runtime = j.estimate;
        ++rep.runtime_clipped;
      }
    }
  }

  if (rep.unsorted > 0) {
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit < b.submit; });
  }

  // Flurries are a property of the log as recorded: found before scaling.
  if (opt_.flurry_jobs > 0) {
    rep.flurry_jobs = mark_flurries(jobs, opt_.flurry_jobs, opt_.flurry_window, &rep.flurry_users);
  }

  rep.offered_load_before = offered_load(jobs, w_.procs);
  if (opt_.target_load > 0) {
    if (!(rep.offered_load_before > 0)) {
      throw swf::Error(swf::Diagnostic{
          name_, 0, 0,
          "cannot scale the load to " + fmt_double(opt_.target_load) +
              ": the offered load is 0 (all jobs submitted at the same time, or no work)"});
    }
    double factor = rep.offered_load_before / opt_.target_load;
    scale_interarrivals(jobs, factor);
    rep.load_scale = factor;
  }

  rep.jobs = jobs.size();

  // Reader messages first, then ours, within the one cap.
  w_.diagnostics.reserve(std::min(opt_.reader.max_messages, reader_diags.size() + diags_.size()));
  for (const auto& d : reader_diags) {
    if (w_.diagnostics.size() >= opt_.reader.max_messages) break;
    w_.diagnostics.push_back(d);
  }
  for (auto& d : diags_) {
    if (w_.diagnostics.size() >= opt_.reader.max_messages) break;
    w_.diagnostics.push_back(std::move(d));
  }
  return std::move(w_);
}

}  // namespace

Workload load_workload(const std::string& path, const WorkloadOptions& opt) {
  swf::Reader reader(path, opt.reader);
  Converter conv(path, opt);
  swf::Record rec;
  bool first = true;
  while (reader.next(rec)) {
    if (first) {
      conv.set_header(reader.header());
      first = false;
    }
    ++conv.report().records;
    if (!conv.add(rec)) break;
  }
  if (first) conv.set_header(reader.header());
  const swf::ReaderStats& st = reader.stats();
  conv.report().lines = st.lines;
  conv.report().malformed = st.skipped();
  conv.report().made_unknown = st.made_unknown;
  return conv.finish(reader.diagnostics());
}

Workload make_workload(std::string source, swf::Header header, std::vector<swf::Record> records,
                       const WorkloadOptions& opt) {
  Converter conv(std::move(source), opt);
  conv.set_header(header);
  for (const swf::Record& r : records) {
    ++conv.report().records;
    if (!conv.add(r)) break;
  }
  return conv.finish({});
}

double offered_load(const std::vector<Job>& jobs, std::int64_t procs) {
  if (jobs.empty() || procs <= 0) return 0;
  Time first = jobs.front().submit, last = jobs.front().submit;
  double work = 0;
  for (const Job& j : jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
    work += static_cast<double>(j.size) * static_cast<double>(j.runtime);
  }
  if (last <= first) return 0;
  return work / (static_cast<double>(procs) * static_cast<double>(last - first));
}

void scale_interarrivals(std::vector<Job>& jobs, double factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw std::invalid_argument("scale_interarrivals: the factor must be a positive number, not " +
                                fmt_double(factor));
  if (jobs.empty()) return;
  // Offsets from the first submit are scaled and rounded, not each gap, so
  // rounding errors do not accumulate and the order is kept.
  const Time first = jobs.front().submit;
  constexpr double kLimit = static_cast<double>(kNever);
  for (Job& j : jobs) {
    double off = static_cast<double>(j.submit - first) * factor;
    if (off > kLimit)
      throw std::invalid_argument("scale_interarrivals: factor " + fmt_double(factor) +
                                  " makes submit times overflow");
    j.submit = first + static_cast<Time>(std::llround(off));
  }
}

std::uint64_t mark_flurries(std::vector<Job>& jobs, std::uint32_t min_jobs, Time window,
                            std::uint64_t* users) {
  for (Job& j : jobs) j.flurry = false;
  if (users) *users = 0;
  if (min_jobs == 0 || window < 0 || jobs.empty()) return 0;

  // Jobs grouped by user, each user's in submit order. Jobs of unknown users
  // are never a flurry: nothing says they come from one submitter.
  std::vector<std::uint32_t> idx;
  idx.reserve(jobs.size());
  for (std::uint32_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].user != kNoUser) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&jobs](std::uint32_t a, std::uint32_t b) {
    if (jobs[a].user != jobs[b].user) return jobs[a].user < jobs[b].user;
    return jobs[a].submit < jobs[b].submit;
  });

  std::uint64_t marked = 0;
  std::size_t u0 = 0;
  while (u0 < idx.size()) {
    std::size_t u1 = u0;
    while (u1 < idx.size() && jobs[idx[u1]].user == jobs[idx[u0]].user) ++u1;
    // Sliding window over [u0, u1): for each right end r, l is the first job
    // submitted at most `window` seconds before it. If the window holds at
    // least min_jobs jobs, all of them are flurry jobs. `done` is the end of
    // the marked prefix, so each job is marked once: O(n) per user.
    std::size_t l = u0, done = u0;
    bool user_marked = false;
    for (std::size_t r = u0; r < u1; ++r) {
      while (jobs[idx[r]].submit - jobs[idx[l]].submit > window) ++l;
      if (r - l + 1 >= min_jobs) {
        for (std::size_t k = std::max(l, done); k <= r; ++k) {
          jobs[idx[k]].flurry = true;
          ++marked;
        }
        done = r + 1;
        user_marked = true;
      }
    }
    if (user_marked && users) ++*users;
    u0 = u1;
  }
  return marked;
}

}  // namespace easypp
