#include "report.h"

#include <jansson.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace easypp::report {

namespace {

double pct_change(double x, double base) {
  if (base == 0) return 0;
  return 100.0 * (x - base) / base;
}

std::string fmt(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

std::string signed_pct(double v) {
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << v << "%";
  return o.str();
}

double jobs_per_second(const RunResult& r) {
  return r.stats.elapsed_seconds > 0 ? double(r.jobs.size()) / r.stats.elapsed_seconds : 0;
}

void print_input(std::ostream& os, const Workload& w, double read_seconds) {
  const WorkloadReport& r = w.report;
  os << "workload: " << w.source << "\n";
  os << "  " << r.jobs << " jobs simulated on " << w.procs << " processors (";
  if (w.source.rfind("synthetic", 0) == 0)
    os << "generated";
  else
    os << "read " << r.records << " records from " << r.lines << " lines";
  os << " in " << fmt(read_seconds, 2) << " s)\n";
  const std::uint64_t dropped = r.dropped_submit + r.dropped_runtime + r.dropped_size + r.dropped_too_wide;
  if (r.malformed || dropped)
    os << "  skipped: " << r.malformed << " malformed lines; dropped: " << r.dropped_submit
       << " submit<0, " << r.dropped_runtime << " runtime<0, " << r.dropped_size << " no size, "
       << r.dropped_too_wide << " wider than the machine\n";
  if (r.estimate_missing)
    os << "  " << r.estimate_missing << " jobs without an estimate got " << r.default_estimate << " s\n";
  if (r.runtime_over_estimate)
    os << "  " << r.runtime_over_estimate << " jobs ran longer than their estimate ("
       << (r.runtime_clipped ? "clipped" : "kept") << ")\n";
  if (r.unsorted) os << "  " << r.unsorted << " records were out of submit order (sorted)\n";
  if (r.made_unknown)
    os << "  " << r.made_unknown << " absurd values in optional fields taken as unknown (jobs kept)\n";
  if (r.load_scale != 1.0)
    os << "  interarrival times x" << fmt(r.load_scale, 4) << " (offered load "
       << fmt(r.offered_load_before, 3) << " before scaling)\n";
  if (r.flurry_jobs)
    os << "  flurries: " << r.flurry_jobs << " jobs of " << r.flurry_users << " users\n";
}

void print_runs(std::ostream& os, const std::vector<Run>& runs, bool flurry_free) {
  const Metrics& base = flurry_free ? runs[0].without_flurries : runs[0].metrics;
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size());
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(10)
     << "wait(min)" << std::setw(9) << "vs first" << std::setw(9) << "bsld" << std::setw(9)
     << "vs first" << std::setw(9) << "maxw(h)" << std::setw(8) << "acc(%)" << std::setw(10) << "corr/job" << std::setw(7)
     << "util" << std::setw(7) << "bf(%)" << std::setw(9) << "run(s)" << std::setw(11)
     << "jobs/s" << "\n";
  for (const Run& r : runs) {
    const Metrics& m = flurry_free ? r.without_flurries : r.metrics;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right
       << std::setw(10) << fmt(m.avg_wait_minutes, 1) << std::setw(9)
       << signed_pct(pct_change(m.avg_wait_minutes, base.avg_wait_minutes)) << std::setw(9)
       << fmt(m.avg_bounded_slowdown, 2) << std::setw(9)
       << signed_pct(pct_change(m.avg_bounded_slowdown, base.avg_bounded_slowdown))
       << std::setw(9) << fmt(m.max_wait_minutes / 60.0, 1) << std::setw(8)
       << fmt(m.avg_accuracy_percent, 1) << std::setw(10)
       << fmt(m.corrections_per_job, 3) << std::setw(7) << fmt(m.utilization, 3) << std::setw(7)
       << fmt(m.backfilled_percent, 1) << std::setw(9) << fmt(r.result->stats.elapsed_seconds, 3)
       << std::setw(11) << std::llround(jobs_per_second(*r.result)) << "\n";
  }
}

json_t* metrics_json(const Metrics& m) {
  json_t* o = json_object();
  json_object_set_new(o, "jobs_simulated", json_integer(json_int_t(m.jobs_simulated)));
  json_object_set_new(o, "jobs_measured", json_integer(json_int_t(m.jobs_measured)));
  json_object_set_new(o, "jobs_after_last_arrival", json_integer(json_int_t(m.jobs_after_last_arrival)));
  json_object_set_new(o, "max_wait_minutes", json_real(m.max_wait_minutes));
  json_object_set_new(o, "avg_wait_minutes", json_real(m.avg_wait_minutes));
  json_object_set_new(o, "avg_response_minutes", json_real(m.avg_response_minutes));
  json_object_set_new(o, "avg_bounded_slowdown", json_real(m.avg_bounded_slowdown));
  json_object_set_new(o, "avg_accuracy_percent", json_real(m.avg_accuracy_percent));
  json_object_set_new(o, "corrections_per_job", json_real(m.corrections_per_job));
  json_object_set_new(o, "corrections_stddev", json_real(m.corrections_stddev));
  json_object_set_new(o, "backfilled_percent", json_real(m.backfilled_percent));
  json_object_set_new(o, "utilization", json_real(m.utilization));
  json_object_set_new(o, "offered_load", json_real(m.offered_load));
  json_object_set_new(o, "window_start", json_integer(m.window_start));
  json_object_set_new(o, "window_end", json_integer(m.window_end));
  const Predictability& p = m.predictability;
  json_t* pj = json_object();
  json_object_set_new(pj, "reserved_jobs", json_integer(json_int_t(p.reserved_jobs)));
  json_object_set_new(pj, "rate_percent", json_real(p.rate_percent));
  json_object_set_new(pj, "mean_abs_deviation_minutes", json_real(p.mean_abs_dev_minutes));
  json_object_set_new(pj, "median_abs_deviation_minutes", json_real(p.median_abs_dev_minutes));
  json_object_set_new(pj, "stddev_abs_deviation_minutes", json_real(p.stddev_abs_dev_minutes));
  json_object_set_new(pj, "late_jobs", json_integer(json_int_t(p.late_jobs)));
  json_object_set_new(pj, "late_rate_percent", json_real(p.late_rate_percent));
  json_object_set_new(pj, "late_mean_minutes", json_real(p.late_mean_minutes));
  json_object_set_new(pj, "late_median_minutes", json_real(p.late_median_minutes));
  json_object_set_new(o, "predictability", pj);
  json_t* cats = json_array();
  for (const CategoryMetrics& c : m.categories) {
    json_t* cj = json_object();
    json_object_set_new(cj, "category", json_string(c.name.c_str()));
    json_object_set_new(cj, "jobs", json_integer(json_int_t(c.jobs)));
    json_object_set_new(cj, "avg_wait_minutes", json_real(c.avg_wait_minutes));
    json_object_set_new(cj, "avg_bounded_slowdown", json_real(c.avg_bounded_slowdown));
    json_object_set_new(cj, "avg_accuracy_percent", json_real(c.avg_accuracy_percent));
    json_array_append_new(cats, cj);
  }
  json_object_set_new(o, "categories", cats);
  return o;
}

json_t* input_json(const Workload& w, double read_seconds) {
  const WorkloadReport& r = w.report;
  json_t* o = json_object();
  json_object_set_new(o, "source", json_string(w.source.c_str()));
  json_object_set_new(o, "procs", json_integer(w.procs));
  json_object_set_new(o, "lines", json_integer(json_int_t(r.lines)));
  json_object_set_new(o, "records", json_integer(json_int_t(r.records)));
  json_object_set_new(o, "jobs", json_integer(json_int_t(r.jobs)));
  json_object_set_new(o, "read_seconds", json_real(read_seconds));
  json_t* sk = json_object();
  json_object_set_new(sk, "malformed_lines", json_integer(json_int_t(r.malformed)));
  json_object_set_new(sk, "submit_negative", json_integer(json_int_t(r.dropped_submit)));
  json_object_set_new(sk, "runtime_negative", json_integer(json_int_t(r.dropped_runtime)));
  json_object_set_new(sk, "no_size", json_integer(json_int_t(r.dropped_size)));
  json_object_set_new(sk, "wider_than_machine", json_integer(json_int_t(r.dropped_too_wide)));
  json_object_set_new(o, "dropped", sk);
  json_t* ad = json_object();
  json_object_set_new(ad, "estimate_missing", json_integer(json_int_t(r.estimate_missing)));
  json_object_set_new(ad, "default_estimate", json_integer(r.default_estimate));
  json_object_set_new(ad, "runtime_over_estimate", json_integer(json_int_t(r.runtime_over_estimate)));
  json_object_set_new(ad, "runtime_clipped", json_integer(json_int_t(r.runtime_clipped)));
  json_object_set_new(ad, "unsorted_sorted", json_integer(json_int_t(r.unsorted)));
  json_object_set_new(ad, "absurd_values_made_unknown", json_integer(json_int_t(r.made_unknown)));
  json_object_set_new(o, "adjusted", ad);
  json_object_set_new(o, "load_scale", json_real(r.load_scale));
  json_object_set_new(o, "offered_load_before_scaling", json_real(r.offered_load_before));
  json_t* fl = json_object();
  json_object_set_new(fl, "jobs", json_integer(json_int_t(r.flurry_jobs)));
  json_object_set_new(fl, "users", json_integer(json_int_t(r.flurry_users)));
  json_object_set_new(o, "flurries", fl);
  json_t* msgs = json_array();
  for (const auto& d : w.diagnostics) json_array_append_new(msgs, json_string(d.format().c_str()));
  json_object_set_new(o, "messages", msgs);
  return o;
}

}  // namespace

void print_text(std::ostream& os, const Workload& w, double read_seconds, const std::vector<Run>& runs) {
  print_input(os, w, read_seconds);
  if (runs.empty()) return;
  const Metrics& m0 = runs[0].metrics;
  os << "  measured " << m0.jobs_measured << " jobs; offered load " << fmt(m0.offered_load, 3)
     << " over the measured window\n\n";
  print_runs(os, runs, false);
  if (runs[0].has_without_flurries) {
    os << "\nwithout flurry jobs (" << runs[0].without_flurries.jobs_measured << " measured):\n";
    print_runs(os, runs, true);
  }
  os << "\nper category (wait min / bsld / acc%):\n";
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size());
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const auto& c : m0.categories) os << std::setw(24) << (c.name + " (" + std::to_string(c.jobs) + ")");
  os << "\n";
  for (const Run& r : runs) {
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (const auto& c : r.metrics.categories)
      os << std::setw(24)
         << (fmt(c.avg_wait_minutes, 1) + " / " + fmt(c.avg_bounded_slowdown, 1) + " / " +
             fmt(c.avg_accuracy_percent, 0));
    os << "\n";
  }
  os << "\npredictability (head reservations vs actual start, minutes):\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(9) << "rate(%)"
     << std::setw(10) << "mean|dev|" << std::setw(10) << "median" << std::setw(9) << "stddev"
     << std::setw(9) << "late(%)" << std::setw(11) << "late mean" << std::setw(12) << "late median" << "\n";
  for (const Run& r : runs) {
    const Predictability& p = r.metrics.predictability;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right << std::setw(9)
       << fmt(p.rate_percent, 1) << std::setw(10) << fmt(p.mean_abs_dev_minutes, 1) << std::setw(10)
       << fmt(p.median_abs_dev_minutes, 1) << std::setw(9) << fmt(p.stddev_abs_dev_minutes, 1)
       << std::setw(9) << fmt(p.late_rate_percent, 1) << std::setw(11) << fmt(p.late_mean_minutes, 1)
       << std::setw(12) << fmt(p.late_median_minutes, 1) << "\n";
  }
}

bool print_json(std::ostream& os, const Workload& w, double read_seconds, const std::vector<Run>& runs) {
  json_t* root = json_object();
  json_object_set_new(root, "input", input_json(w, read_seconds));
  json_t* arr = json_array();
  for (const Run& r : runs) {
    json_t* o = metrics_json(r.metrics);
    json_object_set_new(o, "scheduler", json_string(r.result->config.name.c_str()));
    json_object_set_new(o, "knobs", json_string(r.result->config.describe().c_str()));
    json_object_set_new(o, "elapsed_seconds", json_real(r.result->stats.elapsed_seconds));
    json_object_set_new(o, "jobs_per_second", json_real(jobs_per_second(*r.result)));
    json_object_set_new(o, "scheduling_passes", json_integer(json_int_t(r.result->stats.passes)));
    json_object_set_new(o, "max_queue_length", json_integer(json_int_t(r.result->stats.max_queue)));
    json_object_set_new(o, "candidates_tested", json_integer(json_int_t(r.result->stats.tested)));
    json_object_set_new(o, "corrections", json_integer(json_int_t(r.result->stats.corrections)));
    const Metrics& b = runs[0].metrics;
    json_t* ch = json_object();
    json_object_set_new(ch, "avg_wait_minutes", json_real(pct_change(r.metrics.avg_wait_minutes, b.avg_wait_minutes)));
    json_object_set_new(ch, "avg_bounded_slowdown", json_real(pct_change(r.metrics.avg_bounded_slowdown, b.avg_bounded_slowdown)));
    json_object_set_new(o, "percent_change_vs_first", ch);
    if (r.has_without_flurries) json_object_set_new(o, "without_flurries", metrics_json(r.without_flurries));
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "runs", arr);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  json_object_set_new(root, "peak_rss_mb", json_real(double(ru.ru_maxrss) / 1024.0));
  char* s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER);
  json_decref(root);
  if (!s) return false;
  os << s << "\n";
  std::free(s);
  return bool(os);
}

void write_swf(const std::string& path, const Workload& w, const RunResult& r) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::string head = swf::format_header(w.header);
  head += "; Note: simulated by easypp-sim, scheduler " + r.config.name + " (" + r.config.describe() + ")\n";
  std::fputs(head.c_str(), f);
  // In job-number order, as the input.
  std::vector<std::size_t> order(w.jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return w.jobs[a].record < w.jobs[b].record;
  });
  for (std::size_t i : order) {
    const Job& j = w.jobs[i];
    swf::Record rec;
    if (j.record < w.records.size()) rec = w.records[j.record];
    rec.job = std::int64_t(j.id);
    rec.submit = j.submit;
    rec.wait = r.jobs[i].start - j.submit;
    rec.run = j.runtime;
    rec.alloc_procs = j.size;
    rec.req_time = j.estimate;
    rec.user = j.user;
    const std::string line = swf::format_record(rec) + "\n";
    std::fputs(line.c_str(), f);
  }
  const bool err = std::ferror(f);
  const bool close_err = (f != stdout) ? std::fclose(f) != 0 : std::fflush(f) != 0;
  if (err || close_err) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace easypp::report
