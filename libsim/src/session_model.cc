#include "easypp/sim/session_model.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "easypp/sim/random.h"

namespace easypp {

using detrand::det_exp;
using detrand::det_log;
using detrand::exponential;
using detrand::log_uniform;
using detrand::Rng;

namespace {

constexpr Time kDay = 86400;
constexpr Time kDayStart = 7 * 3600 + 1800;    // 7:30
constexpr Time kNightStart = 17 * 3600 + 1800; // 17:30
constexpr Time kDayLength = kNightStart - kDayStart;
constexpr Time kNightLength = kDay - kDayLength;
constexpr Time kMaxShift = 3600;        // +-60 minutes per user
constexpr Time kSessionGap = 1200;      // the paper's 20-minute threshold
constexpr Time kMaxBreak = 8 * 3600;    // breaks longer than 8 h were filtered out
constexpr double kShortThinkMean = 240; // s, exponential below the threshold
constexpr double kSingleBatch = 0.6;    // batches of one job
constexpr double kBatchStop = 0.4;      // wider batches: 2 + geometric
constexpr std::uint32_t kMaxBatch = 20;
constexpr double kBatchGapMean = 10;    // s between the jobs of a batch
constexpr double kRepeatStop = 0.35;    // size repetitions: 1 + geometric
constexpr double kSerial = 0.25;
constexpr double kSizeDecay = 0.6;
constexpr double kNotPow2 = 0.15;
constexpr double kAskMax = 0.2;
constexpr std::uint32_t kMaxUsers = 100000, kMaxDays = 3660;
constexpr std::int64_t kMaxProcs = 10000000;
constexpr std::int64_t kRound[] = {300,   600,   900,   1800,  3600,  7200,
                                   14400, 28800, 43200, 86400, 172800};

std::uint32_t geometric(Rng& g, double stop, std::uint32_t cap) {
  std::uint32_t n = 0;
  while (n < cap && !g.chance(stop)) ++n;
  return n;
}

std::int64_t draw_size(Rng& g, std::int64_t procs) {
  if (procs <= 1 || g.chance(kSerial)) return 1;
  const std::int64_t cap = std::max<std::int64_t>(2, procs / 2);
  int max_log = 1;
  while ((std::int64_t(1) << (max_log + 1)) <= cap) ++max_log;
  double total = 0, p = 1;
  std::vector<double> w;
  for (int k = 1; k <= max_log; ++k) {
    p *= kSizeDecay;
    w.push_back(p);
    total += p;
  }
  double x = g.uniform() * total;
  int k = 1;
  for (; k < max_log && x >= w[std::size_t(k - 1)]; ++k) x -= w[std::size_t(k - 1)];
  const std::int64_t size = std::min(cap, std::int64_t(1) << k);
  if (k >= 2 && g.chance(kNotPow2)) return g.between((size >> 1) + 1, size - 1);
  return size;
}

// Runtimes dominated by short jobs (about a minute or less), as in the
// paper's figure 5: short, medium and long classes, log-uniform within.
double draw_runtime(Rng& g, double max_estimate) {
  const double u = g.uniform();
  if (u < 0.45) return log_uniform(g, 5.0, 60.0);
  if (u < 0.75) return log_uniform(g, 60.0, 600.0);
  return log_uniform(g, 600.0, std::max(601.0, std::min(8 * 3600.0, max_estimate)));
}

Time round_estimate(double x, Time max_estimate) {
  for (std::int64_t v : kRound)
    if (v < max_estimate && double(v) >= x) return v;
  return max_estimate;
}

template <class T>
bool parse_number(std::string_view v, T& out, T lo, T hi) {
  T x{};
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || x < lo || x > hi)
    return false;
  out = x;
  return true;
}

bool parse_fraction(std::string_view v, double& out, double lo, double hi) {
  double x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x, std::chars_format::fixed);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !(x >= lo) || !(x <= hi))
    return false;
  out = x;
  return true;
}

std::string fmt(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

}  // namespace

std::string SessionModelConfig::validate() const {
  if (users < 1 || users > kMaxUsers) return "users must be 1.." + std::to_string(kMaxUsers);
  if (days < 1 || days > kMaxDays) return "days must be 1.." + std::to_string(kMaxDays);
  if (procs < 1 || procs > kMaxProcs) return "procs must be 1.." + std::to_string(kMaxProcs);
  if (max_estimate < 600) return "max-estimate must be at least 600";
  if (!(cont_max > 0 && cont_max <= 1)) return "cont-max must be in (0, 1]";
  if (!(cont_slope >= 0 && cont_slope <= 100)) return "cont-slope must be 0..100";
  return {};
}

std::string SessionModelConfig::describe() const {
  return "sessions:seed=" + std::to_string(seed) + ",users=" + std::to_string(users) +
         ",days=" + std::to_string(days) + ",procs=" + std::to_string(procs) +
         ",max-estimate=" + std::to_string(max_estimate) + ",cont-max=" + fmt(cont_max) +
         ",cont-slope=" + fmt(cont_slope) + ",day-share=" + fmt(day_share) +
         ",weekday-share=" + fmt(weekday_share);
}

bool parse_session_spec(std::string_view spec, SessionModelConfig& cfg, std::string* error) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  if (spec.substr(0, 8) == "sessions") {
    spec.remove_prefix(8);
    if (!spec.empty()) {
      if (spec.front() != ':') return fail("expected 'sessions' or 'sessions:key=value,...'");
      spec.remove_prefix(1);
    }
  }
  SessionModelConfig c = cfg;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (comma != std::string_view::npos && spec.empty()) return fail("trailing ',' in sessions spec");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail("sessions spec item '" + std::string(item) + "' is not key=value");
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    const std::string bad = "bad value '" + std::string(value) + "' for " + std::string(key);
    bool ok = true;
    std::string want;
    if (key == "seed") {
      ok = parse_number<std::uint64_t>(value, c.seed, 0, std::numeric_limits<std::uint64_t>::max());
      want = "an integer >= 0";
    } else if (key == "users") {
      ok = parse_number<std::uint32_t>(value, c.users, 1, kMaxUsers);
      want = "an integer 1.." + std::to_string(kMaxUsers);
    } else if (key == "days") {
      ok = parse_number<std::uint32_t>(value, c.days, 1, kMaxDays);
      want = "an integer 1.." + std::to_string(kMaxDays);
    } else if (key == "procs") {
      ok = parse_number<std::int64_t>(value, c.procs, 1, kMaxProcs);
      want = "an integer 1.." + std::to_string(kMaxProcs);
    } else if (key == "max-estimate") {
      ok = parse_number<Time>(value, c.max_estimate, 600, 10LL * 365 * 86400);
      want = "seconds, 600..315360000";
    } else if (key == "cont-max") {
      ok = parse_fraction(value, c.cont_max, 1e-9, 1);
      want = "a number in (0, 1]";
    } else if (key == "cont-slope") {
      ok = parse_fraction(value, c.cont_slope, 0, 100);
      want = "a number 0..100 (per minute)";
    } else if (key == "day-share") {
      ok = parse_fraction(value, c.day_share, 0, 1);
      want = "a number 0..1";
    } else if (key == "weekday-share") {
      ok = parse_fraction(value, c.weekday_share, 0, 1);
      want = "a number 0..1";
    } else {
      return fail("unknown sessions spec key '" + std::string(key) +
                  "' (known: seed, users, days, procs, max-estimate, cont-max, cont-slope, "
                  "day-share, weekday-share)");
    }
    if (!ok) return fail(bad + " (expected " + want + ")");
  }
  const std::string problem = c.validate();
  if (!problem.empty()) return fail(problem);
  cfg = c;
  return true;
}

Time SessionModel::next_active(UserId user, Time t) const {
  if (user < 1 || std::size_t(user) > users.size()) return t;
  const User& u = users[std::size_t(user - 1)];
  const Time begin = u.day ? kDayStart : kNightStart;
  const Time length = u.day ? kDayLength : kNightLength;
  // A window belongs to the day it begins on; the latest one that can still
  // hold t began less than a day and a shift before it.
  Time d = (t - begin - u.shift) / kDay - 1;
  if (t - begin - u.shift < 0) d = -1;
  for (int k = 0; k < 16; ++k, ++d) {
    if (d < 0) continue;
    const bool weekday = d % 7 < 5;
    if (weekday != u.weekday) continue;
    const Time start = d * kDay + begin + u.shift, end = start + length;
    if (end > t) return std::max(t, start);
  }
  return t;  // no window (cannot happen: both kinds of days recur weekly)
}

Time SessionModel::submit_after(std::uint32_t lead, UserId user, Time pred_submit,
                                Time pred_end) const {
  const Draws& d = draws[lead];
  const bool go_on = d.u < p_continue(pred_end - pred_submit);
  return next_active(user, pred_end + (go_on ? d.short_think : d.long_think));
}

Workload generate_session_workload(const SessionModelConfig& cfg, const WorkloadOptions& opt) {
  {
    const std::string problem = cfg.validate();
    if (!problem.empty()) throw std::invalid_argument("sessions: " + problem);
  }
  auto model = std::make_shared<SessionModel>();
  model->horizon = Time(cfg.days) * kDay;
  model->cont_max = cfg.cont_max;
  model->cont_slope = cfg.cont_slope;
  Rng ug(cfg.seed, 101), jg(cfg.seed, 102);
  for (std::uint32_t i = 0; i < cfg.users; ++i) {
    SessionModel::User u;
    u.shift = ug.between(-kMaxShift, kMaxShift);
    u.day = ug.chance(cfg.day_share);
    u.weekday = ug.chance(cfg.weekday_share);
    model->users.push_back(u);
  }

  // Each user's jobs on an empty machine (response = runtime): the earliest
  // any scheduler can submit them, so the jobs submitted before the horizon
  // there are all the jobs any replay can submit.
  struct Draft {
    swf::Record rec;
    SessionModel::Draws draws;  // lead: index into drafts
  };
  std::vector<Draft> drafts;
  const double max_est = double(cfg.max_estimate);
  for (std::uint32_t ui = 0; ui < cfg.users; ++ui) {
    const UserId user = UserId(ui) + 1;
    Time t = model->next_active(user, Time(jg.below(kDay)));
    std::int64_t prev_last = -1;  // draft index of the previous batch's last job
    std::int64_t size = 1;
    double base = 60;
    Time estimate = 600;
    std::uint32_t repeat_left = 0;
    bool done = false;
    while (!done) {
      std::uint32_t width = 1;
      if (!jg.chance(kSingleBatch)) width = 2 + geometric(jg, kBatchStop, kMaxBatch - 2);
      Time offset = 0;
      const std::size_t lead = drafts.size();
      for (std::uint32_t k = 0; k < width; ++k) {
        SessionModel::Draws d;
        d.u = jg.uniform();
        double st = exponential(jg, kShortThinkMean);
        if (st >= double(kSessionGap)) st = jg.uniform() * double(kSessionGap - 1);
        d.short_think = Time(st);
        d.long_think = Time(log_uniform(jg, double(kSessionGap), double(kMaxBreak)));
        if (k > 0) offset += Time(exponential(jg, kBatchGapMean));
        d.lead = std::uint32_t(lead);
        d.offset = offset;
        if (repeat_left == 0) {  // a new job kind, repeated a few times
          size = std::min(draw_size(jg, cfg.procs), cfg.procs);
          base = draw_runtime(jg, max_est);
          const double slack = det_exp(0.7 * detrand::normal(jg) + 0.7);
          estimate = jg.chance(kAskMax) ? cfg.max_estimate
                                        : round_estimate(base * std::max(1.2, slack), cfg.max_estimate);
          repeat_left = 1 + geometric(jg, kRepeatStop, 50);
        }
        --repeat_left;
        double rt = base * det_exp(0.1 * detrand::normal(jg));
        const Time runtime = std::clamp<Time>(Time(rt + 0.5), 1, estimate);
        if (k == 0 && prev_last >= 0) {
          const swf::Record& p = drafts[std::size_t(prev_last)].rec;
          t = model->next_active(user, p.submit + p.run +
                                           (d.u < model->p_continue(p.run) ? d.short_think
                                                                            : d.long_think));
        }
        const Time submit = t + offset;
        if (submit > model->horizon) {
          done = true;
          break;
        }
        swf::Record r;
        r.submit = submit;
        r.wait = -1;
        r.run = runtime;
        r.alloc_procs = size;
        r.req_procs = size;
        r.req_time = estimate;
        r.status = 1;
        r.user = user;
        r.group = 1;
        r.app = -1;
        r.queue = 1;
        r.partition = 1;
        if (prev_last >= 0) {
          const swf::Record& p = drafts[std::size_t(prev_last)].rec;
          r.preceding = std::int64_t(prev_last);  // a draft index until numbered
          r.think = submit - (p.submit + p.run);
        }
        drafts.push_back({r, d});
      }
      if (drafts.size() > lead) {
        // The next batch follows the job of this one that ends last on an
        // empty machine (the paper: the batch's last job, marked X).
        std::size_t last = lead;
        for (std::size_t k = lead; k < drafts.size(); ++k)
          if (drafts[k].rec.submit + drafts[k].rec.run >= drafts[last].rec.submit + drafts[last].rec.run)
            last = k;
        prev_last = std::int64_t(last);
      }
    }
  }
  if (drafts.empty()) throw std::invalid_argument("sessions: no job before the horizon");

  // Sorted by submit time (ties in generation order), numbered 1..N.
  std::vector<std::uint32_t> order(drafts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return drafts[a].rec.submit < drafts[b].rec.submit;
  });
  std::vector<std::int64_t> number(drafts.size());
  for (std::size_t i = 0; i < order.size(); ++i) number[order[i]] = std::int64_t(i) + 1;
  std::vector<swf::Record> records;
  records.reserve(drafts.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    swf::Record r = drafts[order[i]].rec;
    r.job = std::int64_t(i) + 1;
    if (r.preceding >= 0) r.preceding = number[std::size_t(r.preceding)];
    r.line = 0;
    records.push_back(r);
  }
  swf::Header h;
  auto add = [&](const char* k, std::string v) { h.entries.emplace_back(k, std::move(v)); };
  add("Version", "2.2");
  add("Computer", "synthetic site (" + std::to_string(cfg.procs) + " processors)");
  add("Installation", "easypp user-session model (Shmueli and Feitelson), docs/closed-loop.md");
  add("MaxJobs", std::to_string(records.size()));
  add("MaxRecords", std::to_string(records.size()));
  add("UnixStartTime", "1704067200");
  add("TimeZoneString", "UTC");
  add("StartTime", "Mon Jan 01 00:00:00 UTC 2024");
  add("MaxNodes", std::to_string(cfg.procs));
  add("MaxProcs", std::to_string(cfg.procs));
  add("MaxRuntime", std::to_string(cfg.max_estimate));
  add("Note", "session model " + cfg.describe() +
                  "; submit and think times are those of an empty machine (fields 17, 18); "
                  "replay with --feedback to let users react to the scheduler");
  WorkloadOptions o = opt;
  if (o.machine_procs <= 0) o.machine_procs = cfg.procs;
  o.target_load = 0;  // a closed system: its load is what its users make of it
  Workload w = make_workload(cfg.describe(), std::move(h), std::move(records), o);
  // The draws, parallel to the jobs kept (by job number: a max-jobs cut
  // keeps a prefix).
  std::vector<std::int64_t> index_of(drafts.size() + 1, -1);
  for (std::size_t i = 0; i < w.jobs.size(); ++i)
    if (w.jobs[i].id >= 1 && w.jobs[i].id <= drafts.size()) index_of[w.jobs[i].id] = std::int64_t(i);
  model->draws.resize(w.jobs.size());
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const std::uint32_t di = order[std::size_t(w.jobs[i].id - 1)];
    SessionModel::Draws d = drafts[di].draws;
    const std::int64_t lead_index = index_of[std::size_t(number[d.lead])];
    d.lead = lead_index >= 0 ? std::uint32_t(lead_index) : std::uint32_t(i);
    if (d.lead == i) d.offset = 0;
    model->draws[i] = d;
  }
  w.sessions = std::move(model);
  return w;
}

}  // namespace easypp
