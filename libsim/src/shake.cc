// Input shaking (see shake.h): perturbed copies, replayed in parallel, and the
// statistics of their metrics.
#include "easypp/sim/shake.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <boost/math/distributions/students_t.hpp>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "easypp/sim/simulator.h"

namespace easypp {

double shake_load_factor(const ShakeOptions& o, unsigned i) {
  if (o.copies == 0) return 1.0;
  // Midpoint of stratum i of [1 - band, 1 + band] cut into `copies` parts.
  return 1.0 + o.band * ((2.0 * i + 1.0) / double(o.copies) - 1.0);
}

namespace {

// splitmix64: a small, well-known generator whose output is the same on every
// platform (std::uniform_int_distribution is not), so a seed names a copy.
std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Workload shaken_copy(const Workload& base, const ShakeOptions& o, unsigned i) {
  Workload w;
  w.source = base.source;
  w.header = base.header;
  w.procs = base.procs;
  w.report = base.report;
  w.sessions = base.sessions;  // (only a --feedback replay asks it)
  w.jobs = base.jobs;
  // A copy whose offered load is f times the base's: interarrivals / f.
  const double f = shake_load_factor(o, i);
  if (f != 1.0) {
    scale_interarrivals(w.jobs, 1.0 / f);
    w.report.load_scale = base.report.load_scale / f;
  }
  if (o.jitter > 0) {
    std::uint64_t state = o.seed * 0x100000001b3ULL + i;
    const auto span = std::uint64_t(2 * o.jitter + 1);
    for (Job& j : w.jobs) {
      const Time shift = Time(splitmix64(state) % span) - o.jitter;
      j.submit = std::max<Time>(0, j.submit + shift);
    }
    std::stable_sort(w.jobs.begin(), w.jobs.end(),
                     [](const Job& a, const Job& b) { return a.submit < b.submit; });
  }
  return w;
}

unsigned available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return unsigned(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

ShakeResult run_shaken(const Workload& base, const std::vector<SchedulerConfig>& cfgs,
                       const ShakeOptions& o, MetricsOptions mo, const SimOptions& so) {
  mo.per_user = false;
  mo.fairness = false;
  ShakeResult res;
  const unsigned n = o.copies;
  const std::size_t s = cfgs.size();
  res.metrics.assign(s, std::vector<Metrics>(n));
  res.load_factors.resize(n);
  res.offered_loads.resize(n);
  if (so.feedback) {
    res.closed_loop.assign(s, std::vector<ClosedLoopMetrics>(n));
    res.links.resize(n);
  }
  const std::size_t tasks = std::size_t(n) * s;
  res.threads = unsigned(std::min<std::size_t>(o.threads ? o.threads : available_cores(), tasks));
  if (tasks == 0) return res;

  const auto t0 = std::chrono::steady_clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mu;
  // Task k: copy k / s under scheduler k % s. Each task builds its own copy
  // (a linear pass, negligible next to the replay) so that at most one copy
  // per thread is alive.
  auto worker = [&] {
    for (std::size_t k; !failed && (k = next++) < tasks;) {
      const auto copy = unsigned(k / s);
      const std::size_t sched = k % s;
      try {
        const Workload w = shaken_copy(base, o, copy);
        if (sched == 0) {
          res.load_factors[copy] = shake_load_factor(o, copy);
          res.offered_loads[copy] = offered_load(w.jobs, w.procs);
        }
        const RunResult r = Simulator(w, cfgs[sched], so).run();
        if (so.feedback) {  // measured on the workload this replay made of the copy
          RunResult rr;
          const Workload made = realized_workload(w, r, &rr);
          res.metrics[sched][copy] = compute_metrics(made, rr, mo);
          res.closed_loop[sched][copy] = compute_closed_loop(made, rr, r.feedback.not_submitted, mo);
          if (sched == 0) res.links[copy] = r.feedback;
        } else {
          res.metrics[sched][copy] = compute_metrics(w, r, mo);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < res.threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  res.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

Spread spread_of(const std::vector<double>& xs) {
  Spread sp;
  sp.n = xs.size();
  if (xs.empty()) return sp;
  double sum = 0;
  sp.min = sp.max = xs.front();
  for (double x : xs) {
    sum += x;
    sp.min = std::min(sp.min, x);
    sp.max = std::max(sp.max, x);
  }
  sp.mean = sum / double(sp.n);
  sp.ci_low = sp.ci_high = sp.mean;
  if (sp.n < 2) return sp;
  double sq = 0;
  for (double x : xs) sq += (x - sp.mean) * (x - sp.mean);
  sp.sd = std::sqrt(sq / double(sp.n - 1));
  const boost::math::students_t t(double(sp.n - 1));
  const double half = boost::math::quantile(t, 0.975) * sp.sd / std::sqrt(double(sp.n));
  sp.ci_low = sp.mean - half;
  sp.ci_high = sp.mean + half;
  return sp;
}

}  // namespace easypp
