#include "easypp/sim/batch.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"

namespace easypp {

std::string replay_key(const SchedulerConfig& cfg) {
  SchedulerConfig c = cfg;
  c.name.clear();
  PredictorConfig& p = c.predictor;
  // With 'history-type=all' and a partial window (a window of one is), the
  // fallback is used only when the user has no history at all; 'relative'
  // then has no ratio to apply and gives the estimate, as 'estimate' does.
  if (p.type == HistoryType::All && (p.fullness == Fullness::Partial || p.window == 1))
    p.fallback = Fallback::Estimate;
  if (p.window == 1) {  // one runtime: every metric is that runtime, full is partial
    p.metric = Metric::Avg;
    p.fullness = Fullness::Full;
  } else if (p.window == 2 && p.metric == Metric::Median) {
    p.metric = Metric::Avg;  // the median of two is their average, rounded up alike
  }
  return c.describe();
}

void run_batch(const Workload& w, const std::vector<SchedulerConfig>& cfgs, unsigned threads,
               MetricsOptions mo,
               const std::function<void(std::size_t, const BatchFigures&)>& done,
               const SimOptions& so) {
  mo.per_user = false;
  mo.fairness = false;
  const std::size_t n = cfgs.size();
  // The first setting of each replay key replays; the others repeat it.
  std::vector<std::size_t> first(n);
  std::vector<std::size_t> todo;
  {
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [it, fresh] = seen.emplace(replay_key(cfgs[i]), i);
      first[i] = it->second;
      if (fresh) todo.push_back(i);
    }
  }
  std::vector<BatchFigures> figs(n);
  std::vector<char> finished(n, 0);
  std::size_t reported = 0;  // settings 0..reported-1 were handed to done()
  std::mutex mu;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;

  // Under mu: report every setting whose turn has come.
  auto report = [&] {
    while (reported < n && !failed) {
      const std::size_t i = reported;
      if (first[i] != i) {
        if (!finished[first[i]]) break;
        BatchFigures f = figs[first[i]];
        f.same_as = first[i];
        f.replay_seconds = 0;
        done(i, f);
      } else {
        if (!finished[i]) break;
        done(i, figs[i]);
      }
      ++reported;
    }
  };
  auto worker = [&] {
    for (std::size_t k; !failed && (k = next++) < todo.size();) {
      const std::size_t i = todo[k];
      try {
        const auto t0 = std::chrono::steady_clock::now();
        BatchFigures f;
        {
          const RunResult r = Simulator(w, cfgs[i], so).run();
          if (so.feedback) {  // measured on the workload the replay made
            RunResult rr;
            const Workload made = realized_workload(w, r, &rr);
            f.metrics = compute_metrics(made, rr, mo);
            f.has_closed_loop = true;
            f.closed_loop = compute_closed_loop(made, rr, r.feedback.not_submitted, mo);
          } else {
            f.metrics = compute_metrics(w, r, mo);
          }
          f.passes = r.stats.passes;
          f.tested = r.stats.tested;
        }  // the run's per-job outcomes are freed here
        f.replay_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard<std::mutex> lock(mu);
        figs[i] = std::move(f);
        finished[i] = 1;
        report();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  const unsigned t = unsigned(std::max<std::size_t>(
      1, std::min<std::size_t>(threads ? threads : available_cores(), todo.size())));
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < t; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  std::lock_guard<std::mutex> lock(mu);
  report();
}

}  // namespace easypp
