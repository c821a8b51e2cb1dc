// Figure data of one run (see series.h): every series is reduced while it is
// computed, so its size depends on SeriesOptions, not on the log.
#include "easypp/sim/series.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace easypp {

namespace {

constexpr double kDay = 86400.0;

// Waiting jobs over [t0, t1], averaged over `buckets` equal buckets: a sweep
// over the submit (+1) and start (-1) events.
std::vector<SeriesPoint> queue_series(const Workload& w, const RunResult& r, std::size_t buckets) {
  std::vector<SeriesPoint> out;
  if (w.jobs.empty() || buckets == 0) return out;
  const Time t0 = w.jobs.front().submit;
  Time t1 = t0;
  std::vector<std::pair<Time, int>> ev;
  ev.reserve(2 * w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const Time start = r.jobs[i].start;
    if (start < 0 || start <= w.jobs[i].submit) continue;  // never waited
    ev.emplace_back(w.jobs[i].submit, +1);
    ev.emplace_back(start, -1);
    t1 = std::max(t1, start);
  }
  if (t1 <= t0) t1 = t0 + 1;
  std::sort(ev.begin(), ev.end());
  const double width = double(t1 - t0) / double(buckets);
  std::vector<double> area(buckets, 0.0);
  // Adds q waiting jobs over [a, b) to the buckets it covers.
  auto add = [&](double a, double b, double q) {
    if (q == 0 || b <= a) return;
    auto k = std::size_t(std::max(0.0, (a - double(t0)) / width));
    while (k < buckets && a < b) {
      const double edge = double(t0) + width * double(k + 1);
      const double e = std::min(b, edge);
      area[k] += q * (e - a);
      a = e;
      ++k;
    }
  };
  long q = 0;
  Time prev = t0;
  for (const auto& [t, d] : ev) {
    add(double(prev), double(t), double(q));
    prev = t;
    q += d;
  }
  out.reserve(buckets);
  for (std::size_t k = 0; k < buckets; ++k)
    out.push_back({(width * (double(k) + 0.5)) / kDay, area[k] / width});
  return out;
}

}  // namespace

RunSeries compute_series(const Workload& w, const RunResult& r, const MetricsOptions& mo,
                         const SeriesOptions& so) {
  RunSeries s;
  s.accuracy_hist.assign(std::max<std::size_t>(so.bins, 1), 0);
  if (w.jobs.empty()) return s;
  const MeasuredSet measured(w, r, mo);
  const Time t0 = w.jobs.front().submit;

  std::vector<std::size_t> idx;  // measured jobs, in submit order
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (measured(i)) idx.push_back(i);
  const std::size_t m = idx.size();
  const std::size_t points = std::max<std::size_t>(so.points, 2);

  // Running average bounded slowdown, one point every `stride` jobs and the last.
  const std::size_t stride = std::max<std::size_t>(1, (m + points - 1) / points);
  double sum = 0;
  std::vector<Time> waits;
  waits.reserve(m);
  for (std::size_t k = 0; k < m; ++k) {
    const Job& j = w.jobs[idx[k]];
    const JobOutcome& o = r.jobs[idx[k]];
    sum += bounded_slowdown(o.start - j.submit, j.runtime);
    if ((k + 1) % stride == 0 || k + 1 == m)
      s.running_bsld.push_back({double(j.submit - t0) / kDay, sum / double(k + 1)});
    waits.push_back(o.start - j.submit);
    const double acc = std::clamp(o.accuracy, 0.0, 1.0);
    const auto bin = std::min(s.accuracy_hist.size() - 1,
                              std::size_t(acc * double(s.accuracy_hist.size())));
    ++s.accuracy_hist[bin];
  }

  // Wait CDF at every half percent (nearest rank).
  if (m > 0) {
    std::sort(waits.begin(), waits.end());
    for (int p = 0; p <= 200; ++p) {
      const double q = p / 200.0;
      const auto rank = std::size_t(std::max(1.0, std::ceil(q * double(m)))) - 1;
      s.wait_cdf.push_back({double(waits[rank]) / 60.0, q});
    }
  }

  s.queue_length = queue_series(w, r, points);
  return s;
}

}  // namespace easypp
