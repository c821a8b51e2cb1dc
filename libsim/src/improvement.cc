#include "easypp/sim/improvement.h"

#include <algorithm>
#include <cmath>

namespace easypp {

namespace {

FactorDistribution distribution(std::vector<double>& f, std::size_t points) {
  FactorDistribution d;
  if (f.empty()) return d;
  const double n = double(f.size());
  double sum = 0, logs = 0;
  std::uint64_t better = 0, same = 0;
  for (double x : f) {
    sum += x;
    logs += std::log(x);
    better += x > 1;
    same += x == 1;
  }
  d.mean = sum / n;
  d.geometric_mean = std::exp(logs / n);
  d.better_percent = 100.0 * double(better) / n;
  d.same_percent = 100.0 * double(same) / n;
  d.worse_percent = 100.0 - d.better_percent - d.same_percent;
  std::sort(f.begin(), f.end());
  points = std::max<std::size_t>(points, 2);
  for (std::size_t k = 0; k < points; ++k) {
    const double q = double(k) / double(points - 1);
    const auto rank = std::size_t(std::max(1.0, std::ceil(q * n))) - 1;
    d.quantiles.push_back(f[rank]);
  }
  return d;
}

}  // namespace

Improvement compute_improvement(const Workload& w, const RunResult& base, const RunResult& run,
                                const MetricsOptions& opt, std::size_t quantile_points) {
  Improvement imp;
  const MeasuredSet in_base(w, base, opt), in_run(w, run, opt);
  std::vector<double> resp, bsld;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    if (!in_base(i) || !in_run(i)) continue;
    const Job& j = w.jobs[i];
    const Time wb = base.jobs[i].start - j.submit, wr = run.jobs[i].start - j.submit;
    const double rb = double(std::max<Time>(wb + j.runtime, 1));
    const double rr = double(std::max<Time>(wr + j.runtime, 1));
    resp.push_back(rb / rr);
    bsld.push_back(bounded_slowdown(wb, j.runtime) / bounded_slowdown(wr, j.runtime));
  }
  imp.jobs = resp.size();
  imp.response = distribution(resp, quantile_points);
  imp.bounded_slowdown = distribution(bsld, quantile_points);
  return imp;
}

}  // namespace easypp
