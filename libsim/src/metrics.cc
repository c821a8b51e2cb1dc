#include "easypp/sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "easypp/sim/selective_metrics.h"

namespace easypp {

int slowdown_bin(double x) {
  return x <= 1 ? 0 : x <= 1.5 ? 1 : x <= 2 ? 2 : x <= 4 ? 3 : 4;
}

double bounded_slowdown(Time wait, Time runtime) {
  const double r = double(std::max<Time>(runtime, 0));
  return std::max(1.0, (double(wait) + r) / std::max(10.0, r));
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(m), v.end());
  if (v.size() % 2 == 1) return v[m];
  const double hi = v[m];
  const double lo = *std::max_element(v.begin(), v.begin() + std::ptrdiff_t(m));
  return (lo + hi) / 2;
}

double overlap(Time a0, Time a1, Time b0, Time b1) {
  const Time lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? double(hi - lo) : 0.0;
}

struct Acc {
  std::uint64_t n = 0;
  double wait = 0, bsld = 0, acc = 0;
  void add(double w, double b, double a) {
    ++n;
    wait += w;
    bsld += b;
    acc += a;
  }
};

}  // namespace

MeasuredSet::MeasuredSet(const Workload& w, const RunResult& r, const MetricsOptions& opt)
    : w_(w), r_(r), exclude_flurries_(opt.exclude_flurries) {
  if (w.jobs.empty()) return;
  warm_ = std::uint32_t(std::ceil(opt.warmup_fraction * double(w.jobs.size())));
  last_arrival_ = w.jobs.back().submit;
}

Metrics compute_metrics(const Workload& w, const RunResult& r, const MetricsOptions& opt) {
  Metrics m;
  const std::size_t n = w.jobs.size();
  m.jobs_simulated = n;
  if (n == 0) return m;

  const MeasuredSet measured(w, r, opt);
  const std::uint32_t warm = measured.warmup_jobs();
  const Time last_arrival = measured.last_arrival();
  m.window_start = w.jobs.front().submit;
  m.window_end = last_arrival;
  for (std::size_t i = 0; i < n && warm > 0; ++i)
    if (r.jobs[i].termination_rank == warm - 1) m.window_start = r.jobs[i].end;

  Acc all, cat[4];
  double cat_max[4] = {0, 0, 0, 0};
  double corr_sum = 0, corr_sq = 0;
  std::uint64_t backfilled = 0;
  std::vector<double> devs, lates;
  std::vector<Time> waits;  // all simulated jobs, for the 99th percentile
  waits.reserve(n);
  double wide_wait = 0;
  std::unordered_map<UserId, Acc> users;
  for (std::size_t i = 0; i < n; ++i) {
    const Job& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    if (!(opt.exclude_flurries && j.flurry)) {
      const Time wait = o.start - j.submit;
      waits.push_back(wait);
      m.max_wait_minutes = std::max(m.max_wait_minutes, double(wait) / 60.0);
      if (2 * j.size > w.procs) {
        ++m.wide_jobs;
        wide_wait += double(wait);
        m.wide_max_wait_minutes = std::max(m.wide_max_wait_minutes, double(wait) / 60.0);
      }
      if (o.end > last_arrival) ++m.jobs_after_last_arrival;
    }
    if (!measured(i)) continue;
    const Time wait = o.start - j.submit;
    const double bsld = bounded_slowdown(wait, j.runtime);
    all.add(double(wait), bsld, o.accuracy);
    if (opt.per_user && j.user != kNoUser) users[j.user].add(double(wait), bsld, 0);
    const int c = (j.runtime <= opt.short_threshold ? 0 : 2) + (j.size <= opt.narrow_threshold ? 0 : 1);
    cat[c].add(double(wait), bsld, o.accuracy);
    cat_max[c] = std::max(cat_max[c], bsld);
    m.bsld_histogram[slowdown_bin(bsld)] += 1;
    m.avg_response_minutes += double(wait + j.runtime);
    corr_sum += o.corrections;
    corr_sq += double(o.corrections) * o.corrections;
    backfilled += o.backfilled;
    if (o.first_reservation >= 0) {
      devs.push_back(double(std::llabs(o.first_reservation - o.start)) / 60.0);
      if (o.start > o.first_reservation) lates.push_back(double(o.start - o.first_reservation) / 60.0);
    }
  }
  m.jobs_measured = all.n;
  for (double& h : m.bsld_histogram) h = all.n ? 100.0 * h / double(all.n) : 0;
  if (opt.fairness) {
    // Srinivasan et al.'s fairness: who started after its fair start time.
    // Under FCFS without backfilling every job starts at its fair start
    // time by definition (a unit test checks it): no need to replay the
    // long queues of fcfs again from every arrival.
    const bool fcfs = r.config.policy.backfill == BackfillOrder::None &&
                      r.config.queue_order == QueueOrder::Arrival;
    std::vector<Time> own;
    std::vector<Time>& fair = opt.fair_cache != nullptr ? *opt.fair_cache : own;
    if (!fair.empty()) {
      // computed by an earlier call for this run
    } else if (fcfs) {
      fair.reserve(r.jobs.size());
      for (const JobOutcome& o : r.jobs) fair.push_back(o.start);
    } else {
      fair = fair_start_times(w, r);
    }
    Fairness& f = m.fairness;
    f.computed = true;
    double late_sum = 0;
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      if (!measured(i)) continue;
      const Job& j = w.jobs[i];
      const Time start = r.jobs[i].start;
      const double ratio = bounded_slowdown(start - j.submit, j.runtime) /
                           bounded_slowdown(fair[i] - j.submit, j.runtime);
      f.ratio_histogram[slowdown_bin(ratio)] += 1;
      if (start > fair[i]) {
        ++f.late_jobs;
        late_sum += double(start - fair[i]) / 60.0;
        f.late_max_minutes = std::max(f.late_max_minutes, double(start - fair[i]) / 60.0);
      }
    }
    for (double& h : f.ratio_histogram) h = all.n ? 100.0 * h / double(all.n) : 0;
    if (all.n) f.late_percent = 100.0 * double(f.late_jobs) / double(all.n);
    if (f.late_jobs) f.late_avg_minutes = late_sum / double(f.late_jobs);
  }
  if (all.n > 0) {
    const double k = double(all.n);
    m.avg_wait_minutes = all.wait / k / 60.0;
    m.avg_response_minutes = m.avg_response_minutes / k / 60.0;
    m.avg_bounded_slowdown = all.bsld / k;
    m.avg_accuracy_percent = 100.0 * all.acc / k;
    m.corrections_per_job = corr_sum / k;
    m.corrections_stddev = std::sqrt(std::max(0.0, corr_sq / k - m.corrections_per_job * m.corrections_per_job));
    m.backfilled_percent = 100.0 * double(backfilled) / k;
  }
  if (m.wide_jobs) m.wide_avg_wait_minutes = wide_wait / double(m.wide_jobs) / 60.0;
  if (!waits.empty()) {
    // Nearest rank: the smallest wait that at least 99% of the jobs do not exceed.
    const auto k = std::size_t(std::ceil(0.99 * double(waits.size()))) - 1;
    std::nth_element(waits.begin(), waits.begin() + std::ptrdiff_t(k), waits.end());
    m.p99_wait_minutes = double(waits[k]) / 60.0;
  }
  m.users.reserve(users.size());
  for (const auto& [user, a] : users)
    m.users.push_back(UserMetrics{user, a.n, a.wait / double(a.n) / 60.0, a.bsld / double(a.n)});
  std::sort(m.users.begin(), m.users.end(),
            [](const UserMetrics& a, const UserMetrics& b) { return a.user < b.user; });

  static const char* names[4] = {"short-narrow", "short-wide", "long-narrow", "long-wide"};
  for (int c = 0; c < 4; ++c) {
    CategoryMetrics cm;
    cm.name = names[c];
    cm.jobs = cat[c].n;
    if (cat[c].n) {
      const double k = double(cat[c].n);
      cm.avg_wait_minutes = cat[c].wait / k / 60.0;
      cm.avg_bounded_slowdown = cat[c].bsld / k;
      cm.avg_accuracy_percent = 100.0 * cat[c].acc / k;
      cm.max_bounded_slowdown = cat_max[c];
    }
    m.categories.push_back(cm);
  }

  Predictability& p = m.predictability;
  p.reserved_jobs = devs.size();
  if (all.n) p.rate_percent = 100.0 * double(devs.size()) / double(all.n);
  if (!devs.empty()) {
    double s = 0, sq = 0;
    for (double d : devs) s += d, sq += d * d;
    p.mean_abs_dev_minutes = s / double(devs.size());
    p.stddev_abs_dev_minutes =
        std::sqrt(std::max(0.0, sq / double(devs.size()) - p.mean_abs_dev_minutes * p.mean_abs_dev_minutes));
    p.median_abs_dev_minutes = median(devs);
    p.late_jobs = lates.size();
    p.late_rate_percent = 100.0 * double(lates.size()) / double(devs.size());
    if (!lates.empty()) {
      double ls = 0;
      for (double d : lates) ls += d;
      p.late_mean_minutes = ls / double(lates.size());
      p.late_median_minutes = median(lates);
    }
  }

  // Offered load and utilization over [end of warm-up, last arrival].
  const Time w0 = m.window_start, w1 = m.window_end;
  if (w1 > w0 && w.procs > 0) {
    double offered = 0, used = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Job& j = w.jobs[i];
      const JobOutcome& o = r.jobs[i];
      offered += double(j.size) * overlap(j.submit, j.submit + j.runtime, w0, w1);
      if (o.start >= 0) used += double(j.size) * overlap(o.start, o.end, w0, w1);
    }
    const double cap = double(w.procs) * double(w1 - w0);
    m.offered_load = offered / cap;
    m.utilization = used / cap;
  }
  return m;
}

}  // namespace easypp
