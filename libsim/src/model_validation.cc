#include "easypp/sim/model_validation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "easypp/sim/metrics.h"
#include "easypp/sim/simulator.h"

namespace easypp {

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

double quantile_sorted(const std::vector<double>& v, double q) {  // nearest rank
  if (v.empty()) return 0;
  const auto rank = std::size_t(std::max(1.0, std::ceil(q * double(v.size())))) - 1;
  return v[std::min(rank, v.size() - 1)];
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= double(n);
  my /= double(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

double accuracy(Time p, Time r) { return prediction_accuracy(p, r); }

// One scheduler's figures on one workload.
struct SchedFigures {
  double wait = 0, bsld = 0, util = 0, acc = 0, awrt = 0;
};

SchedFigures replay(const Workload& w, const SchedulerConfig& cfg) {
  const RunResult r = Simulator(w, cfg).run();
  MetricsOptions mo;
  mo.per_user = false;
  mo.fairness = false;
  const Metrics m = compute_metrics(w, r, mo);
  SchedFigures f{m.avg_wait_minutes, m.avg_bounded_slowdown, m.utilization, m.avg_accuracy_percent, 0};
  // Krampe et al.'s AWRT: response time weighted by resource consumption
  // (runtime * size), over the measured jobs, in hours.
  const MeasuredSet measured(w, r, mo);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    if (!measured(i)) continue;
    const Job& j = w.jobs[i];
    const double weight = double(j.runtime) * double(j.size);
    num += weight * double(r.jobs[i].end - j.submit);
    den += weight;
  }
  f.awrt = den > 0 ? num / den / 3600.0 : 0;
  return f;
}

}  // namespace

WorkloadStats workload_stats(const Workload& w) {
  WorkloadStats s;
  const std::vector<Job>& jobs = w.jobs;
  s.jobs = jobs.size();
  if (jobs.empty()) return s;
  s.offered_load = offered_load(jobs, w.procs);
  std::vector<double> sz, run, est, ia_x, ia_size, ia_run;
  std::unordered_set<UserId> users;
  std::unordered_map<UserId, std::pair<std::int64_t, Time>> last;  // size, estimate
  std::unordered_map<UserId, std::vector<Time>> hist;
  double est_acc = 0, pred_acc = 0;
  std::uint64_t under = 0, serial = 0, pow2 = 0, repeats = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    sz.push_back(double(j.size));
    run.push_back(double(j.runtime));
    est.push_back(double(j.estimate));
    if (i > 0) {
      ia_x.push_back(double(j.submit - jobs[i - 1].submit));
      ia_size.push_back(double(j.size));
      ia_run.push_back(double(j.runtime));
    }
    serial += j.size == 1;
    pow2 += (j.size & (j.size - 1)) == 0;
    under += j.runtime > j.estimate;
    est_acc += accuracy(j.estimate, j.runtime);
    Time p = j.estimate;
    if (j.user != kNoUser) {
      users.insert(j.user);
      std::vector<Time>& h = hist[j.user];
      if (h.size() >= 2) p = std::clamp<Time>((h[h.size() - 1] + h[h.size() - 2] + 1) / 2, 1, std::max<Time>(j.estimate, 1));
      const auto it = last.find(j.user);
      repeats += it != last.end() && it->second.first == j.size && it->second.second == j.estimate;
      last[j.user] = {j.size, j.estimate};
      h.push_back(j.runtime);
      if (h.size() > 2) h.erase(h.begin());
    }
    pred_acc += accuracy(p, j.runtime);
  }
  const double n = double(jobs.size());
  s.users = users.size();
  s.serial_percent = 100.0 * double(serial) / n;
  s.pow2_percent = 100.0 * double(pow2) / n;
  s.underestimated_percent = 100.0 * double(under) / n;
  s.estimate_accuracy_percent = 100.0 * est_acc / n;
  s.predictor_accuracy_percent = 100.0 * pred_acc / n;
  s.repeat_percent = 100.0 * double(repeats) / n;
  s.corr_runtime_size = pearson(run, sz);
  s.corr_runtime_estimate = pearson(run, est);
  s.corr_interarrival_size = pearson(ia_x, ia_size);
  s.corr_interarrival_runtime = pearson(ia_x, ia_run);
  s.size_mean = mean_of(sz);
  s.runtime_mean = mean_of(run);
  s.interarrival_mean = mean_of(ia_x);
  s.sizes = sz;
  s.runtimes = run;
  s.interarrivals = ia_x;
  std::sort(s.sizes.begin(), s.sizes.end());
  std::sort(s.runtimes.begin(), s.runtimes.end());
  std::sort(s.interarrivals.begin(), s.interarrivals.end());
  s.size_median = quantile_sorted(s.sizes, 0.5);
  s.runtime_median = quantile_sorted(s.runtimes, 0.5);
  s.runtime_p90 = quantile_sorted(s.runtimes, 0.9);
  s.interarrival_median = quantile_sorted(s.interarrivals, 0.5);
  return s;
}

double ks_distance(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return a.empty() && b.empty() ? 0 : 1;
  std::size_t i = 0, k = 0;
  double d = 0;
  while (i < a.size() && k < b.size()) {
    const double x = std::min(a[i], b[k]);
    while (i < a.size() && a[i] <= x) ++i;
    while (k < b.size() && b[k] <= x) ++k;
    d = std::max(d, std::fabs(double(i) / double(a.size()) - double(k) / double(b.size())));
  }
  return d;
}

Validation validate_model(const MarkovModel& m, const std::string& model_source, const Workload& log,
                          const ValidationOptions& opt) {
  std::vector<SchedulerConfig> scheds;
  for (const std::string& spec : opt.schedulers) {
    std::string err;
    auto c = parse_scheduler_spec(spec, {}, &err);
    if (!c) throw std::invalid_argument(err);
    scheds.push_back(*c);
  }
  Validation v;
  v.log_source = log.source;
  v.model_source = model_source;

  // Rows: what, how to get it from a workload's stats.
  struct StatRow {
    const char* group;
    const char* name;
    double (*get)(const WorkloadStats&);
  };
  static const StatRow kStats[] = {
      {"workload", "jobs", [](const WorkloadStats& s) { return double(s.jobs); }},
      {"workload", "offered load", [](const WorkloadStats& s) { return s.offered_load; }},
      {"size", "mean", [](const WorkloadStats& s) { return s.size_mean; }},
      {"size", "median", [](const WorkloadStats& s) { return s.size_median; }},
      {"size", "serial (%)", [](const WorkloadStats& s) { return s.serial_percent; }},
      {"size", "powers of two (%)", [](const WorkloadStats& s) { return s.pow2_percent; }},
      {"runtime", "mean (s)", [](const WorkloadStats& s) { return s.runtime_mean; }},
      {"runtime", "median (s)", [](const WorkloadStats& s) { return s.runtime_median; }},
      {"runtime", "90th percentile (s)", [](const WorkloadStats& s) { return s.runtime_p90; }},
      {"interarrival", "mean (s)", [](const WorkloadStats& s) { return s.interarrival_mean; }},
      {"interarrival", "median (s)", [](const WorkloadStats& s) { return s.interarrival_median; }},
      {"estimate", "accuracy (%)", [](const WorkloadStats& s) { return s.estimate_accuracy_percent; }},
      {"estimate", "underestimated (%)", [](const WorkloadStats& s) { return s.underestimated_percent; }},
      {"correlation", "runtime / size", [](const WorkloadStats& s) { return s.corr_runtime_size; }},
      {"correlation", "runtime / estimate", [](const WorkloadStats& s) { return s.corr_runtime_estimate; }},
      {"correlation", "interarrival / size", [](const WorkloadStats& s) { return s.corr_interarrival_size; }},
      {"correlation", "interarrival / runtime", [](const WorkloadStats& s) { return s.corr_interarrival_runtime; }},
      {"users", "users", [](const WorkloadStats& s) { return double(s.users); }},
      {"users", "repeats of the user's previous job (%)", [](const WorkloadStats& s) { return s.repeat_percent; }},
      {"users", "paper's predictor accuracy, offline (%)", [](const WorkloadStats& s) { return s.predictor_accuracy_percent; }},
  };
  const WorkloadStats ls = workload_stats(log);
  for (const StatRow& r : kStats) v.rows.push_back({r.group, r.name, r.get(ls), {}, false});
  const std::size_t ks_first = v.rows.size();
  for (const char* name : {"size", "runtime", "interarrival"})
    v.rows.push_back({"KS distance", name, 0, {}, true});
  const std::size_t sched_first = v.rows.size();
  static const char* kSchedRows[] = {"wait (min)", "bounded slowdown", "utilization", "accuracy (%)",
                                     "AWRT (h)"};
  auto sched_values = [](const SchedFigures& f) {
    return std::vector<double>{f.wait, f.bsld, f.util, f.acc, f.awrt};
  };
  for (const SchedulerConfig& c : scheds) {
    const std::vector<double> lv = sched_values(replay(log, c));
    for (std::size_t k = 0; k < lv.size(); ++k) v.rows.push_back({c.name, kSchedRows[k], lv[k], {}, false});
  }

  WorkloadOptions wo;
  wo.machine_procs = log.procs;
  for (std::uint32_t k = 0; k < opt.seeds; ++k) {
    ModelGenConfig g;
    g.seed = opt.first_seed + k;
    g.jobs = log.jobs.size();
    v.seeds.push_back(g.seed);
    const Workload w = generate_model_workload(m, g, model_source, wo);
    const WorkloadStats gs = workload_stats(w);
    for (std::size_t r = 0; r < std::size(kStats); ++r) v.rows[r].model.push_back(kStats[r].get(gs));
    v.rows[ks_first].model.push_back(ks_distance(ls.sizes, gs.sizes));
    v.rows[ks_first + 1].model.push_back(ks_distance(ls.runtimes, gs.runtimes));
    v.rows[ks_first + 2].model.push_back(ks_distance(ls.interarrivals, gs.interarrivals));
    std::size_t row = sched_first;
    for (const SchedulerConfig& c : scheds)
      for (double x : sched_values(replay(w, c))) v.rows[row++].model.push_back(x);
  }
  return v;
}

}  // namespace easypp
