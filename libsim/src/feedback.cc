#include "easypp/sim/feedback.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "easypp/sim/session_model.h"

namespace easypp {

FeedbackLinks link_feedback(const Workload& w) {
  FeedbackLinks l;
  const std::size_t n = w.jobs.size();
  l.pred.assign(n, FeedbackLinks::kNone);
  std::unordered_map<std::uint64_t, std::uint32_t> index;  // job number -> index
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(w.jobs[i].id, std::uint32_t(i));
  const bool model = w.sessions != nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const Job& j = w.jobs[i];
    if (j.preceding < 0) {
      ++l.report.independent;
      continue;
    }
    const auto it = index.find(std::uint64_t(j.preceding));
    if (it == index.end()) {
      ++l.report.missing;
      continue;
    }
    // Earlier in the log (submit order): a chain of links ends at a job
    // submitted at its logged time, never in a loop.
    if (it->second >= i) {
      ++l.report.not_earlier;
      continue;
    }
    if (!model && j.think < 0) {
      ++l.report.no_think;
      continue;
    }
    l.pred[i] = it->second;
    ++l.report.linked;
  }
  return l;
}

Workload realized_workload(const Workload& w, const RunResult& r, RunResult* out) {
  Workload v;
  v.source = w.source;
  v.header = w.header;
  v.procs = w.procs;
  v.records = w.records;
  v.report = w.report;
  v.diagnostics = w.diagnostics;
  v.sessions = w.sessions;
  *out = RunResult();
  out->config = r.config;
  out->stats = r.stats;
  out->feedback = r.feedback;
  if (r.submitted.empty()) {
    v.jobs = w.jobs;
    out->jobs = r.jobs;
    return v;
  }
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (r.submitted[i] >= 0) order.push_back(std::uint32_t(i));
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return r.submitted[a] < r.submitted[b];
  });
  v.jobs.reserve(order.size());
  out->jobs.reserve(order.size());
  for (std::uint32_t i : order) {
    Job j = w.jobs[i];
    j.submit = r.submitted[i];
    v.jobs.push_back(j);
    out->jobs.push_back(r.jobs[i]);
  }
  v.report.jobs = v.jobs.size();
  return v;
}

ClosedLoopMetrics compute_closed_loop(const Workload& v, const RunResult& r,
                                      std::uint64_t not_submitted, const MetricsOptions& opt) {
  ClosedLoopMetrics m;
  static const char* const kNames[3] = {"<=1m", "1-10m", ">10m"};
  for (int c = 0; c < 3; ++c) m.classes[c].name = kNames[c];
  m.jobs_submitted = v.jobs.size();
  m.jobs_not_submitted = not_submitted;
  if (v.jobs.empty()) return m;
  Time first = v.jobs.front().submit, last = first;
  for (const Job& j : v.jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  m.span_hours = double(last - first) / 3600.0;
  if (last > first) m.throughput_per_hour = double(v.jobs.size()) / m.span_hours;

  // Sessions: per user, in submit order, a new session starts when the job
  // is submitted more than the threshold after the latest end of the user's
  // earlier jobs (a negative think time, a batch, continues it).
  std::unordered_map<UserId, Time> latest_end;
  for (std::size_t i = 0; i < v.jobs.size(); ++i) {  // v is in submit order
    const Job& j = v.jobs[i];
    if (j.user == kNoUser) {
      ++m.sessions;
      continue;
    }
    const auto it = latest_end.find(j.user);
    if (it == latest_end.end() || j.submit - it->second > kSessionThreshold) ++m.sessions;
    Time& e = latest_end[j.user];
    e = it == latest_end.end() ? r.jobs[i].end : std::max(e, r.jobs[i].end);
  }
  m.avg_session_jobs = m.sessions ? double(v.jobs.size()) / double(m.sessions) : 0;

  const MeasuredSet measured(v, r, opt);
  for (std::size_t i = 0; i < v.jobs.size(); ++i) {
    if (!measured(i)) continue;
    const Job& j = v.jobs[i];
    const Time wait = r.jobs[i].start - j.submit;
    RuntimeClassMetrics& c = m.classes[j.runtime <= 60 ? 0 : j.runtime <= 600 ? 1 : 2];
    ++c.jobs;
    c.avg_wait_minutes += double(wait) / 60.0;
    c.avg_response_minutes += double(wait + j.runtime) / 60.0;
    c.avg_bounded_slowdown += bounded_slowdown(wait, j.runtime);
  }
  for (RuntimeClassMetrics& c : m.classes) {
    if (c.jobs == 0) continue;
    c.avg_wait_minutes /= double(c.jobs);
    c.avg_response_minutes /= double(c.jobs);
    c.avg_bounded_slowdown /= double(c.jobs);
  }
  return m;
}

}  // namespace easypp
