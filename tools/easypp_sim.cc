// easypp-sim: replay an SWF workload through the EASY++ scheduling core.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include <memory>
#include <optional>

#include "cli.h"
#include "easypp/sim/batch.h"
#include "easypp/sim/feedback.h"
#include "easypp/sim/session_model.h"
#include "easypp/sim/generator.h"
#include "easypp/sim/markov_model.h"
#include "easypp/sim/selective_metrics.h"
#include "easypp/sim/series.h"
#include "easypp/sim/shake.h"
#include "easypp/sim/simulator.h"
#include "html_report.h"
#include "report.h"

using namespace easypp;

namespace {

Workload load(const cli::Options& o) {
  const std::string& src = o.workload;
  if (src.rfind("model:", 0) == 0) {  // drawn from a fitted Markov model
    std::string path, err;
    ModelGenConfig g;
    if (!parse_model_spec(std::string_view(src).substr(6), &path, g, &err))
      cli::usage_error("--workload " + src + ": " + err);
    const MarkovModel m = read_markov_model(path);  // ModelError: exit 2 in main
    return generate_model_workload(m, g, src, o.wl);
  }
  if (src == "sessions" || src.rfind("sessions:", 0) == 0) {
    SessionModelConfig g;
    std::string err;
    if (!parse_session_spec(src, g, &err)) cli::usage_error("--workload " + src + ": " + err);
    if (o.wl.target_load > 0)
      cli::usage_error("--load does not apply to a sessions workload (its load is what its users make of it: change users=)");
    return generate_session_workload(g, o.wl);
  }
  if (src == "synthetic" || src.rfind("synthetic:", 0) == 0) {
    GeneratorConfig g;
    std::string err;
    if (src.size() > 10 && !parse_generator_spec(src.substr(10), g, &err))
      cli::usage_error("--workload " + src + ": " + err);
    err = g.validate();
    if (!err.empty()) cli::usage_error("--workload " + src + ": " + err);
    return generate_workload(g, o.wl);
  }
  return load_workload(src, o.wl);
}

std::string output_name(const std::string& pattern, const std::string& sched) {
  const auto p = pattern.find("%s");
  if (p == std::string::npos) return pattern;
  std::string safe;
  for (char c : sched) safe += (std::isalnum((unsigned char)c) || c == '+' || c == '-' || c == '.') ? c : '_';
  return pattern.substr(0, p) + safe + pattern.substr(p + 2);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// --csv: the batch's rows, streamed in the order of the schedulers.
int print_csv(const Workload& w, const std::vector<SchedulerConfig>& cfgs, const cli::Options& opt) {
  std::cout << "scheduler,jobs_measured,avg_wait_minutes,avg_bounded_slowdown,avg_accuracy_percent,"
               "corrections_per_job,utilization,offered_load,max_wait_minutes,p99_wait_minutes,"
               "backfilled_percent,scheduling_passes,candidates_tested,replay_seconds,same_as,"
               "jobs_simulated,procs,log_offered_load"
            << (opt.sim.feedback ? ",jobs_submitted,jobs_not_submitted,throughput_per_hour,sessions,"
                                   "avg_session_jobs"
                                 : "")
            << "\n";
  bool ok = true;
  run_batch(w, cfgs, opt.threads, opt.metrics, [&](std::size_t i, const BatchFigures& f) {
    const Metrics& m = f.metrics;
    char buf[512];
    std::snprintf(buf, sizeof buf, ",%llu,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%llu,%llu,%.6f,",
                  (unsigned long long)m.jobs_measured, m.avg_wait_minutes, m.avg_bounded_slowdown,
                  m.avg_accuracy_percent, m.corrections_per_job, m.utilization, m.offered_load,
                  m.max_wait_minutes, m.p99_wait_minutes, m.backfilled_percent,
                  (unsigned long long)f.passes, (unsigned long long)f.tested, f.replay_seconds);
    char tail[128];
    std::snprintf(tail, sizeof tail, ",%llu,%lld,%.10g", (unsigned long long)m.jobs_simulated,
                  (long long)w.procs, w.report.offered_load_before);
    std::cout << csv_field(cfgs[i].name) << buf
              << (f.same_as == SIZE_MAX ? std::string() : csv_field(cfgs[f.same_as].name)) << tail;
    if (f.has_closed_loop) {  // --feedback: the closed system's figures
      const ClosedLoopMetrics& c = f.closed_loop;
      std::snprintf(tail, sizeof tail, ",%llu,%llu,%.10g,%llu,%.10g",
                    (unsigned long long)c.jobs_submitted, (unsigned long long)c.jobs_not_submitted,
                    c.throughput_per_hour, (unsigned long long)c.sessions, c.avg_session_jobs);
      std::cout << tail;
    }
    std::cout << "\n";
    std::cout.flush();
    ok = ok && bool(std::cout);
  }, opt.sim);
  if (!ok) {
    std::cerr << "easypp-sim: cannot write to standard output\n";
    return 1;
  }
  return 0;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  cli::Options parsed = cli::parse(argc, argv);
  std::vector<SchedulerConfig> cfgs = cli::schedulers(parsed);
  parsed.metrics.fairness = cli::fairness_wanted(parsed, cfgs);
  const cli::Options& opt = parsed;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const Workload w = load(opt);
    const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!opt.quiet) {
      for (const auto& d : w.diagnostics) std::cerr << "easypp-sim: " << d.format() << "\n";
      if (w.report.malformed > 0)
        std::cerr << "easypp-sim: " << w.source << ": " << w.report.malformed
                  << " malformed lines skipped in all (counts by reason: --json)\n";
    }

    if (opt.parse_only) {
      report::Report rep;
      rep.workload = &w;
      rep.read_seconds = read_s;
      if (opt.json ? !report::print_json(std::cout, rep) : (report::print_text(std::cout, rep), !std::cout)) {
        std::cerr << "easypp-sim: cannot write to standard output\n";
        return 1;
      }
      return 0;
    }

    // sel, sel-d...: the thresholds from a conservative run of this
    // workload, as Srinivasan et al. derive them (shaken copies use these).
    resolve_selective_thresholds(w, opt.sim, cfgs);

    if (opt.csv) return print_csv(w, cfgs, opt);

    // Checked before any replay: a typo in --report costs nothing. (After
    // the reading, which may still exit without unwinding on a bad
    // synthetic spec.)
    std::unique_ptr<report::ReportDir> report_dir;
    if (!opt.report_dir.empty()) {
      try {
        report_dir = std::make_unique<report::ReportDir>(opt.report_dir);
      } catch (const report::BadReportDir& e) {
        std::cerr << "easypp-sim: " << e.what() << "\n";
        return 2;
      }
    }

    std::vector<RunResult> results;
    results.reserve(cfgs.size());
    for (const auto& c : cfgs) results.push_back(Simulator(w, c, opt.sim).run());
    // A feedback run made its own workload (its jobs, submitted when it
    // submitted them): everything per run is computed on that one.
    std::vector<Workload> made;
    made.reserve(results.size());
    if (opt.sim.feedback)
      for (auto& r : results) {
        RunResult rr;
        made.push_back(realized_workload(w, r, &rr));
        r = std::move(rr);
      }
    auto workload_of = [&](std::size_t i) -> const Workload& { return made.empty() ? w : made[i]; };

    std::optional<ShakeResult> shaken;
    if (opt.shake.copies > 0) shaken = run_shaken(w, cfgs, opt.shake, opt.metrics, opt.sim);

    report::Report rep;
    rep.workload = &w;
    rep.read_seconds = read_s;
    rep.top_users = opt.top_users;
    rep.sim = &opt.sim;
    if (shaken) {
      rep.shake = &opt.shake;
      rep.shaken = &*shaken;
    }
    std::vector<report::Run>& runs = rep.runs;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const RunResult& r = results[i];
      const Workload& rw = workload_of(i);
      std::vector<Time> fair;  // fair start times, once for both calls
      MetricsOptions with = opt.metrics;
      if (opt.flurries) with.fair_cache = &fair;
      report::Run run{&r, compute_metrics(rw, r, with), false, {}, false, {}, false, {}};
      if (opt.flurries) {
        MetricsOptions mo = with;
        mo.exclude_flurries = true;
        run.has_without_flurries = true;
        run.without_flurries = compute_metrics(rw, r, mo);
      }
      if (opt.sim.feedback) {
        run.has_closed_loop = true;
        run.closed_loop = compute_closed_loop(rw, r, r.feedback.not_submitted, opt.metrics);
      }
      // Per-job factors need the same jobs at the same index: open runs only.
      if (!runs.empty() && !opt.sim.feedback) {
        run.has_improvement = true;
        run.improvement = compute_improvement(w, results.front(), r, opt.metrics);
      }
      runs.push_back(run);
    }
    if (!opt.output_swf.empty()) {
      for (std::size_t i = 0; i < results.size(); ++i) {
        const RunResult& r = results[i];
        try {
          report::write_swf(output_name(opt.output_swf, r.config.name), workload_of(i), r);
        } catch (const std::runtime_error& e) {
          std::cerr << "easypp-sim: --output-swf: " << e.what() << "\n";
          return 2;
        }
      }
    }

    if (opt.json) {
      if (!report::print_json(std::cout, rep)) {
        std::cerr << "easypp-sim: cannot write the JSON report\n";
        return 1;
      }
    } else {
      report::print_text(std::cout, rep);
    }
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "easypp-sim: cannot write to standard output\n";
      return 1;
    }
    if (report_dir) {
      json_t* doc = report::build_json(rep);
      json_object_set_new(doc, "command", json_string(command_line(argc, argv).c_str()));
      json_t* figs = json_array();
      for (std::size_t i = 0; i < results.size(); ++i)
        json_array_append_new(figs, report::series_json(compute_series(workload_of(i), results[i], opt.metrics)));
      json_object_set_new(doc, "figures", figs);
      try {
        report_dir->write(doc);
      } catch (const std::runtime_error& e) {
        json_decref(doc);
        std::cerr << "easypp-sim: " << e.what() << "\n";
        return 1;
      }
      json_decref(doc);
      if (!opt.quiet) std::cerr << "easypp-sim: report written to " << report_dir->dir() << "/index.html\n";
    }
    return 0;
  } catch (const swf::Error& e) {
    std::cerr << "easypp-sim: " << e.what() << "\n";
    return 2;
  } catch (const ModelError& e) {
    std::cerr << "easypp-sim: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "easypp-sim: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "easypp-sim: " << e.what() << "\n";
    return 1;
  }
}
