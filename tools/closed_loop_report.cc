// The closed-loop section of easypp-sim's report (--feedback): kept apart
// from report.cc, which the open replay's figures fill.
#include <iomanip>
#include <sstream>

#include "report.h"

namespace easypp::report {

namespace {

std::string fixed(double v, int prec) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(prec) << v;
  return o.str();
}

std::string change(double v, double base) {
  if (base == 0) return "";
  const double c = 100.0 * (v - base) / base;
  std::ostringstream o;
  o << std::showpos << std::fixed << std::setprecision(1) << c << "%";
  return o.str();
}

}  // namespace

void print_closed_loop(std::ostream& os, const std::vector<Run>& runs) {
  if (runs.empty() || !runs[0].has_closed_loop) return;
  std::size_t namew = 9;
  for (const Run& r : runs) namew = std::max(namew, r.result->config.name.size() + 2);
  const FeedbackReport& f = runs[0].result->feedback;
  os << "\nclosed loop (--feedback): " << f.linked << " jobs follow their preceding job, "
     << f.independent << " have none";
  if (f.fallbacks() > 0)
    os << ", " << f.fallbacks() << " fall back to their logged submit time (" << f.missing
       << " preceding job not in the workload, " << f.not_earlier << " not earlier in the log, "
       << f.no_think << " think time unknown)";
  os << "\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right << std::setw(11)
     << "submitted" << std::setw(9) << "unsubm." << std::setw(9) << "earlier" << std::setw(9)
     << "later" << std::setw(10) << "jobs/h" << std::setw(9) << "change" << std::setw(10)
     << "sessions" << std::setw(9) << "jobs/s" << std::setw(9) << "change" << "\n";
  const ClosedLoopMetrics& b = runs[0].closed_loop;
  for (const Run& r : runs) {
    const ClosedLoopMetrics& m = r.closed_loop;
    const FeedbackReport& rf = r.result->feedback;
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right
       << std::setw(11) << m.jobs_submitted << std::setw(9) << m.jobs_not_submitted
       << std::setw(9) << rf.earlier << std::setw(9) << rf.later << std::setw(10)
       << fixed(m.throughput_per_hour, 2) << std::setw(9)
       << (&r == &runs[0] ? "" : change(m.throughput_per_hour, b.throughput_per_hour))
       << std::setw(10) << m.sessions << std::setw(9) << fixed(m.avg_session_jobs, 2)
       << std::setw(9) << (&r == &runs[0] ? "" : change(m.avg_session_jobs, b.avg_session_jobs))
       << "\n";
  }
  os << "per runtime class (jobs: wait min / response min / bsld):\n";
  os << std::left << std::setw(int(namew)) << "scheduler" << std::right;
  for (const RuntimeClassMetrics& c : b.classes) os << std::setw(30) << (std::string(c.name) + " runtime");
  os << "\n";
  for (const Run& r : runs) {
    os << std::left << std::setw(int(namew)) << r.result->config.name << std::right;
    for (const RuntimeClassMetrics& c : r.closed_loop.classes)
      os << std::setw(30)
         << (std::to_string(c.jobs) + ": " + fixed(c.avg_wait_minutes, 1) + " / " +
             fixed(c.avg_response_minutes, 1) + " / " + fixed(c.avg_bounded_slowdown, 1));
    os << "\n";
  }
}

json_t* closed_loop_json(const Run& r) {
  const ClosedLoopMetrics& m = r.closed_loop;
  const FeedbackReport& f = r.result->feedback;
  json_t* o = json_object();
  json_object_set_new(o, "jobs_submitted", json_integer(json_int_t(m.jobs_submitted)));
  json_object_set_new(o, "jobs_not_submitted", json_integer(json_int_t(m.jobs_not_submitted)));
  json_object_set_new(o, "span_hours", json_real(m.span_hours));
  json_object_set_new(o, "throughput_per_hour", json_real(m.throughput_per_hour));
  json_object_set_new(o, "sessions", json_integer(json_int_t(m.sessions)));
  json_object_set_new(o, "avg_session_jobs", json_real(m.avg_session_jobs));
  json_t* links = json_object();
  json_object_set_new(links, "linked", json_integer(json_int_t(f.linked)));
  json_object_set_new(links, "independent", json_integer(json_int_t(f.independent)));
  json_object_set_new(links, "fallback_missing", json_integer(json_int_t(f.missing)));
  json_object_set_new(links, "fallback_not_earlier", json_integer(json_int_t(f.not_earlier)));
  json_object_set_new(links, "fallback_no_think", json_integer(json_int_t(f.no_think)));
  json_object_set_new(links, "submitted_earlier", json_integer(json_int_t(f.earlier)));
  json_object_set_new(links, "submitted_later", json_integer(json_int_t(f.later)));
  json_object_set_new(o, "links", links);
  json_t* classes = json_array();
  for (const RuntimeClassMetrics& c : m.classes) {
    json_t* x = json_object();
    json_object_set_new(x, "runtime", json_string(c.name));
    json_object_set_new(x, "jobs", json_integer(json_int_t(c.jobs)));
    json_object_set_new(x, "avg_wait_minutes", json_real(c.avg_wait_minutes));
    json_object_set_new(x, "avg_response_minutes", json_real(c.avg_response_minutes));
    json_object_set_new(x, "avg_bounded_slowdown", json_real(c.avg_bounded_slowdown));
    json_array_append_new(classes, x);
  }
  json_object_set_new(o, "runtime_classes", classes);
  return o;
}

}  // namespace easypp::report
