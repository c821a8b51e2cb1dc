// The seeded synthetic workload generator (see generator.h and
// docs/synthetic-workload.md for the model and why each feature is there).
//
// Determinism: the output depends only on the configuration. There is no
// std:: distribution (their algorithms are implementation-defined) and no
// libm transcendental (std::log/std::exp may differ by an ulp between C
// libraries): the PRNG is xoshiro256** seeded with splitmix64, and log/exp
// are implemented here with IEEE-754 basic operations (+ - * / sqrt, exactly
// rounded everywhere) plus the exact frexp/ldexp/floor. Floating-point
// contraction (fused multiply-add) would change roundings, so it is disabled:
// GCC does not contract in ISO mode (-std=c++17), clang is told below. Do not
// build this file with -ffast-math.
#include "easypp/sim/generator.h"
#include "easypp/sim/random.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace easypp {
namespace {

// The random numbers and the portable log and exp are shared with the
// fitted Markov model (random.h).
using namespace detrand;

// ---------------------------------------------------------------------------
// The model's constants (documented in docs/synthetic-workload.md).

constexpr std::uint64_t kStreamUsers = 1;
constexpr std::uint64_t kStreamSessions = 2;

/// Monday 2024-01-01 00:00:00 UTC: submit time 0 is a Monday midnight, so the
/// daily and weekly cycles line up with the calendar.
constexpr std::int64_t kUnixStartTime = 1704067200;

/// Relative submission rate per hour of the day (shape of the daily cycle in
/// real logs: low at night, a plateau through the working day).
constexpr double kHourWeight[24] = {
    0.45, 0.35, 0.30, 0.25, 0.25, 0.30, 0.40, 0.60, 1.00, 1.50, 1.80, 1.80,
    1.50, 1.70, 1.80, 1.80, 1.70, 1.40, 1.10, 0.90, 0.80, 0.75, 0.65, 0.55};
/// Relative submission rate per day of the week, Monday first.
constexpr double kDayWeight[7] = {1.0, 1.0, 1.0, 1.0, 0.95, 0.50, 0.45};

// --- users ---
/// The r-th most active user starts ~ 1/r^kZipf of the sessions. Users are
/// ranked by their typical log job size plus normal noise of sd kRankNoise
/// (users of wide jobs submit fewer of them).
constexpr double kZipf = 0.8;
constexpr double kRankNoise = 1.5;
/// Job classes per user: 1 + geometric(kClassStop), at most kMaxClasses.
constexpr double kClassStop = 0.35;
constexpr std::uint32_t kMaxClasses = 8;
/// Share of users who round up to the fine estimate values too.
constexpr double kFineUsers = 0.3;
/// Share of "lazy" users, who ask for the maximum in a session with
/// probability kLazyMax whatever the runtime.
constexpr double kLazyUsers = 0.05;
constexpr double kLazyMax = 0.6;

// --- job classes ---
/// Sizes: serial with kSerial, else 2^k (k >= 1) with weight kSizeDecay^k up
/// to half the machine; kNotPow2 of those with k >= 2 are moved between
/// 2^(k-1) and 2^k. No job is wider than half the machine: a wider job at the
/// head of the queue can starve under prediction-based backfilling (backfilled
/// jobs that outlive their predictions keep pushing its reservation back), and
/// real logs have few (0.1-2%).
constexpr double kSerial = 0.2;
constexpr double kSizeDecay = 0.8;
constexpr double kNotPow2 = 0.15;
/// Typical runtime kinds (short, medium, long) for narrow classes and for
/// classes wider than a quarter of the machine (wide jobs are seldom long: in
/// real logs their mean runtime is no longer than that of narrow ones).
/// Ranges (log-uniform): short 1..30 min, medium 10 min..max/4, long
/// max/4..0.8 max.
constexpr double kKindNarrow[3] = {0.30, 0.45, 0.25};
constexpr double kKindWide[3] = {0.35, 0.55, 0.10};
/// Runtime noise within a session: lognormal sigma uniform in
/// [kSigmaMin, kSigmaMin + kSigmaRange] (kSigmaRangeLong for long classes);
/// between sessions of a class: kSessionSigma.
constexpr double kSigmaMin = 0.03;
constexpr double kSigmaRange = 0.27;
constexpr double kSigmaRangeLong = 0.12;
constexpr double kSessionSigma = 0.2;
/// Probability that a session asks for the maximum, by kind of class (short,
/// medium, long; lazy users: kLazyMax).
constexpr double kMaxByKind[3] = {0.05, 0.15, 0.75};
/// Otherwise the user asks for the session's typical runtime times
/// exp(kEstimateSpread * sigma) (covering nearly every run) times a per-class
/// slack (lognormal, median kSlack, shape kSlackSigma, at least 1), rounded up
/// to a popular value.
constexpr double kEstimateSpread = 2.0;
constexpr double kSlack = 1.2;
constexpr double kSlackSigma = 0.2;
/// Per job: probability of asking for the maximum anyway is uniform in
/// [0, kUseMax] per class; of failing early (1..kFailRuntime s) uniform in
/// [0, kFailMax] per class; of an outlier runtime (times 0.1..5): kOutlier.
constexpr double kUseMax = 0.12;
constexpr double kFailMax = 0.3;
constexpr double kFailRuntime = 180;
constexpr double kOutlier = 0.03;
/// Class weights within a user: lognormal (shape kClassWeightSigma) divided
/// by runtime^kLongPenalty (long jobs are run less often), times
/// kWideClassWeight for classes wider than a quarter of the machine.
constexpr double kClassWeightSigma = 0.7;
constexpr double kLongPenalty = 0.3;
constexpr double kWideClassWeight = 0.35;
/// Largest share of all sessions one (user, class) pair may have: any class,
/// classes wider than a quarter of the machine.
constexpr double kClassCap = 0.03;
constexpr double kWideClassCap = 0.01;

// --- sessions ---
/// Probability that a session continues the user's previous class.
constexpr double kStickiness = 0.5;
/// Jobs per session: 1 + geometric(p), p = kSessionStop for jobs up to an
/// hour, growing as (runtime / 1 h)^0.3 up to kSessionStopMax; at least
/// kWideSessionStop for classes wider than a quarter of the machine.
constexpr double kSessionStop = 0.22;
constexpr double kSessionStopMax = 0.6;
constexpr double kWideSessionStop = 0.5;
constexpr std::uint32_t kMaxSessionJobs = 60;
/// Bursts ("flurries"): with probability kBurst a session of a class of jobs
/// up to 2 h and at most 1/8 of the machine has kBurstMin..kBurstMax jobs.
constexpr double kBurst = 0.03;
constexpr std::int64_t kBurstMin = 10;
constexpr std::int64_t kBurstMax = 80;
/// Sessions are batches (jobs submitted kBatchGap s apart on average,
/// exponential) with probability kBatch, else sequential (each job submitted
/// a think time, exponential with mean kThink s, after the previous one ends).
constexpr double kBatch = 0.5;
constexpr double kBatchGap = 30;
constexpr double kThink = 900;

/// The "round" values users pick as estimates (seconds). Most users round up
/// to the coarse values; some also use the finer ones. The partition maximum
/// is added to the values below it.
constexpr std::int64_t kCoarseEstimates[] = {
    300,   600,   900,   1800,  3600,   7200,   14400,  28800,
    43200, 64800, 86400, 129600, 172800, 259200, 345600, 604800};
constexpr std::int64_t kFineEstimates[] = {120, 1200, 2700, 5400, 10800, 21600, 36000};

/// A job killed at its time limit ends up to this late (the time it takes to
/// kill it), as real logs show.
constexpr std::int64_t kMaxKillDelay = 60;

enum Kind { kShort = 0, kMedium = 1, kLong = 2 };

struct JobClass {
  std::int64_t size = 1;
  Kind kind = kShort;
  double runtime = 60;     ///< typical runtime (median), seconds
  double sigma = 0.2;      ///< lognormal runtime noise within a session
  double p_max = 0;        ///< probability that a session asks for the maximum
  double slack = 1.2;      ///< estimate slack when not asking for the maximum
  double use_max = 0;      ///< probability that a job asks for the maximum anyway
  double fail = 0.05;      ///< probability that a job fails early
  std::int64_t app = 0;    ///< SWF field 14
};

struct User {
  std::int64_t group = 1;
  const std::vector<std::int64_t>* estimates = nullptr;  ///< round values used
  std::vector<JobClass> classes;
  std::vector<double> class_weight;
  int last_class = -1;     ///< class of the user's previous session
};

struct EstimateMenu {
  std::vector<std::int64_t> coarse;  ///< coarse values below the maximum, and the maximum
  std::vector<std::int64_t> fine;    ///< coarse and fine values below the maximum, and the maximum
};

EstimateMenu estimate_menu(Time max_estimate) {
  EstimateMenu m;
  for (std::int64_t x : kCoarseEstimates)
    if (x < max_estimate) m.coarse.push_back(x);
  m.fine = m.coarse;
  for (std::int64_t x : kFineEstimates)
    if (x < max_estimate) m.fine.push_back(x);
  std::sort(m.fine.begin(), m.fine.end());
  m.coarse.push_back(max_estimate);
  m.fine.push_back(max_estimate);
  return m;
}

/// The smallest round value >= x (the maximum if none is).
std::int64_t round_up(const std::vector<std::int64_t>& values, double x) {
  for (std::int64_t v : values)
    if (double(v) >= x) return v;
  return values.back();
}

/// A job size: mostly narrow, power-of-two biased, some wide, at most half
/// the machine (at most 2 on machines of 2 or 3 processors).
std::int64_t draw_size(Rng& g, std::int64_t procs) {
  if (procs <= 1 || g.chance(kSerial)) return 1;
  const std::int64_t cap = std::max<std::int64_t>(2, procs / 2);
  int max_log = 1;
  while ((std::int64_t(1) << (max_log + 1)) <= cap) ++max_log;  // 2^max_log <= cap
  std::vector<double> w;
  double p = 1;
  for (int k = 1; k <= max_log; ++k) {
    p = p * kSizeDecay;
    w.push_back(p);
  }
  const int k = int(discrete(g, w)) + 1;
  const std::int64_t size = std::int64_t(1) << k;
  // not a power of two: between the power below and this one
  if (k >= 2 && g.chance(kNotPow2)) return g.between((size >> 1) + 1, size - 1);
  return size;
}

/// Log-uniform in [lo, hi], with lo clamped to hi (tiny partition limits).
double runtime_between(Rng& g, double lo, double hi) { return log_uniform(g, std::min(lo, hi), hi); }

std::vector<double> weights(const double (&w)[3]) { return {w[0], w[1], w[2]}; }

User make_user(Rng& g, const GeneratorConfig& cfg, const EstimateMenu& menu,
               std::int64_t& next_app) {
  User u;
  const double max_est = double(cfg.max_estimate);
  const bool lazy = g.chance(kLazyUsers);
  u.estimates = g.chance(kFineUsers) ? &menu.fine : &menu.coarse;
  const std::uint32_t n = 1 + std::min<std::uint32_t>(geometric(g, kClassStop), kMaxClasses - 1);
  for (std::uint32_t c = 0; c < n; ++c) {
    JobClass k;
    k.size = draw_size(g, cfg.procs);
    // Typical runtime: short (tests, small runs), medium, or long (production
    // runs that need a good part of the partition limit).
    const bool wide = k.size * 4 > cfg.procs;
    k.kind = Kind(discrete(g, weights(wide ? kKindWide : kKindNarrow)));
    switch (k.kind) {
      case kShort: k.runtime = runtime_between(g, 60, std::min(1800.0, max_est / 2)); break;
      case kMedium: k.runtime = runtime_between(g, 600, max_est / 4); break;
      case kLong: k.runtime = runtime_between(g, max_est / 4, max_est * 0.8); break;
    }
    k.sigma = kSigmaMin + (k.kind == kLong ? kSigmaRangeLong : kSigmaRange) * g.uniform();
    // Long jobs need the maximum; some users ask for it anyway.
    k.p_max = lazy ? kLazyMax : kMaxByKind[k.kind];
    k.slack = std::max(1.0, lognormal(g, kSlack, kSlackSigma));
    k.use_max = kUseMax * g.uniform();
    k.fail = kFailMax * g.uniform();
    k.app = ++next_app;
    u.classes.push_back(k);
    u.class_weight.push_back((wide ? kWideClassWeight : 1.0) * lognormal(g, 1.0, kClassWeightSigma) /
                             det_exp(kLongPenalty * det_log(k.runtime)));
  }
  return u;
}

/// One job before its submit time is known.
struct Draft {
  std::uint32_t session = 0;
  double offset = 0;          ///< seconds after the session start
  std::int64_t runtime = 1;
  std::int64_t estimate = 1;
  std::int64_t size = 1;
  std::int64_t user = 1;
  std::int64_t group = 1;
  std::int64_t app = 1;
  std::int64_t status = 1;
  std::int64_t think = -1;    ///< think time after the preceding job (sequential sessions)
  bool follows = false;       ///< preceded by the previous draft in the same session
  std::int64_t submit = 0;
};

// ---------------------------------------------------------------------------
// The arrival cycle: a piecewise-constant rate per hour of the week (mean 1),
// and its integral Lambda. Sessions arrive as a unit-rate Poisson process in
// "operational time" tau = Lambda(t); mapping back through Lambda^-1 gives
// the daily and weekly cycle, and scaling tau (not t) to hit the offered load
// keeps the cycle's period.

class Cycle {
 public:
  Cycle() {
    double total = 0;
    for (int h = 0; h < 168; ++h) total += kDayWeight[h / 24] * kHourWeight[h % 24];
    const double mean = total / 168;
    cum_[0] = 0;
    for (int h = 0; h < 168; ++h) {
      rate_[h] = kDayWeight[h / 24] * kHourWeight[h % 24] / mean;
      cum_[h + 1] = cum_[h] + rate_[h] * 3600;
    }
  }

  /// Lambda^-1(tau), tau >= 0.
  double time_of(double tau) const {
    const double week = cum_[168];
    const double weeks = std::floor(tau / week);
    double rest = tau - weeks * week;
    int h = int(std::upper_bound(cum_, cum_ + 169, rest) - cum_) - 1;
    h = std::clamp(h, 0, 167);
    return weeks * 604800.0 + h * 3600.0 + (rest - cum_[h]) / rate_[h];
  }

 private:
  double rate_[168];
  double cum_[169];
};

void append(swf::Header& h, const char* key, std::string value) {
  h.entries.emplace_back(key, std::move(value));
}

std::string format_double(double x) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

template <class T>
bool parse_unsigned(std::string_view s, T& out, T lo, T hi) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  if (v < std::uint64_t(lo) || v > std::uint64_t(hi)) return false;
  out = T(v);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------

namespace {
constexpr std::uint32_t kMaxJobs = 10000000;
constexpr std::int64_t kMaxProcs = 100000000;
constexpr std::uint32_t kMaxUsers = 1000000;
constexpr double kMaxLoad = 10;
constexpr Time kMinEstimate = 60;
constexpr Time kMaxEstimate = 365LL * 86400;
}  // namespace

std::string GeneratorConfig::validate() const {
  if (jobs < 1 || jobs > kMaxJobs)
    return "jobs must be between 1 and " + std::to_string(kMaxJobs) + " (got " +
           std::to_string(jobs) + ")";
  if (procs < 1 || procs > kMaxProcs)
    return "procs must be between 1 and " + std::to_string(kMaxProcs) + " (got " +
           std::to_string(procs) + ")";
  if (users < 1 || users > kMaxUsers)
    return "users must be between 1 and " + std::to_string(kMaxUsers) + " (got " +
           std::to_string(users) + ")";
  if (!(load > 0) || !(load <= kMaxLoad))
    return "load must be greater than 0 and at most " + format_double(kMaxLoad) + " (got " +
           format_double(load) + ")";
  if (max_estimate < kMinEstimate || max_estimate > kMaxEstimate)
    return "max-estimate must be between " + std::to_string(kMinEstimate) + " and " +
           std::to_string(kMaxEstimate) + " seconds (got " + std::to_string(max_estimate) + ")";
  return {};
}

std::string GeneratorConfig::describe() const {
  return "synthetic:seed=" + std::to_string(seed) + ",jobs=" + std::to_string(jobs) +
         ",procs=" + std::to_string(procs) + ",users=" + std::to_string(users) +
         ",load=" + format_double(load) + ",max-estimate=" + std::to_string(max_estimate);
}

bool parse_generator_spec(std::string_view spec, GeneratorConfig& cfg, std::string* error) {
  auto fail = [&](std::string msg) {
    if (error) *error = std::move(msg);
    return false;
  };
  if (spec.substr(0, 9) == "synthetic") {
    spec.remove_prefix(9);
    if (!spec.empty()) {
      if (spec.front() != ':') return fail("expected 'synthetic' or 'synthetic:key=value,...'");
      spec.remove_prefix(1);
    }
  }
  GeneratorConfig c = cfg;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (comma != std::string_view::npos && spec.empty())
      return fail("trailing ',' in generator spec");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return fail("generator spec item '" + std::string(item) + "' is not key=value");
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    const std::string bad = "bad value '" + std::string(value) + "' for " + std::string(key);
    if (key == "seed") {
      if (!parse_unsigned<std::uint64_t>(value, c.seed, 0, std::numeric_limits<std::uint64_t>::max()))
        return fail(bad + " (expected an integer 0.." +
                    std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")");
    } else if (key == "jobs") {
      if (!parse_unsigned<std::uint32_t>(value, c.jobs, 1, kMaxJobs))
        return fail(bad + " (expected an integer 1.." + std::to_string(kMaxJobs) + ")");
    } else if (key == "procs") {
      if (!parse_unsigned<std::int64_t>(value, c.procs, 1, kMaxProcs))
        return fail(bad + " (expected an integer 1.." + std::to_string(kMaxProcs) + ")");
    } else if (key == "users") {
      if (!parse_unsigned<std::uint32_t>(value, c.users, 1, kMaxUsers))
        return fail(bad + " (expected an integer 1.." + std::to_string(kMaxUsers) + ")");
    } else if (key == "load") {
      double x = 0;
      const auto r = std::from_chars(value.data(), value.data() + value.size(), x,
                                     std::chars_format::fixed);
      if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size() ||
          !(x > 0) || !(x <= kMaxLoad))
        return fail(bad + " (expected a number greater than 0 and at most " +
                    format_double(kMaxLoad) + ")");
      c.load = x;
    } else if (key == "max-estimate") {
      if (!parse_unsigned<Time>(value, c.max_estimate, kMinEstimate, kMaxEstimate))
        return fail(bad + " (expected seconds, " + std::to_string(kMinEstimate) + ".." +
                    std::to_string(kMaxEstimate) + ")");
    } else {
      return fail("unknown generator spec key '" + std::string(key) +
                  "' (known: seed, jobs, procs, users, load, max-estimate)");
    }
  }
  const std::string problem = c.validate();
  if (!problem.empty()) return fail(problem);
  cfg = c;
  return true;
}

std::vector<swf::Record> generate_records(const GeneratorConfig& cfg, swf::Header* header) {
  {
    const std::string problem = cfg.validate();
    if (!problem.empty()) throw std::invalid_argument("generator: " + problem);
  }
  const EstimateMenu menu = estimate_menu(cfg.max_estimate);

  // Users: a Zipf-like activity (a few users submit most sessions). Users
  // whose jobs are wide tend to submit fewer of them: ranks go by the user's
  // typical log size plus noise, smallest first.
  Rng ug(cfg.seed, kStreamUsers);
  std::vector<User> users;
  users.reserve(cfg.users);
  std::int64_t next_app = 0;
  const std::int64_t groups = std::max<std::int64_t>(1, (cfg.users + 7) / 8);
  std::vector<double> rank_key(cfg.users);
  for (std::uint32_t i = 0; i < cfg.users; ++i) {
    users.push_back(make_user(ug, cfg, menu, next_app));
    User& u = users.back();
    u.group = 1 + std::int64_t(ug.below(std::uint64_t(groups)));
    double wsum = 0, log_size = 0;
    for (std::size_t c = 0; c < u.classes.size(); ++c) {
      wsum += u.class_weight[c];
      log_size += u.class_weight[c] * det_log(double(u.classes[c].size));
    }
    rank_key[i] = log_size / wsum + kRankNoise * normal(ug);
  }
  std::vector<std::uint32_t> by_key(cfg.users);
  std::iota(by_key.begin(), by_key.end(), 0u);
  std::stable_sort(by_key.begin(), by_key.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return rank_key[a] < rank_key[b]; });
  std::vector<double> activity(cfg.users);
  for (std::uint32_t r = 0; r < cfg.users; ++r)
    activity[by_key[r]] = 1.0 / det_exp(kZipf * det_log(double(r + 1)));

  // No single application dominates: a (user, class) pair gets at most a
  // small share of the sessions, smaller for wide jobs (a wide job at the
  // head of the queue drains much of the machine). Capped pairs lose sessions; the
  // users' activities become their pairs' sums.
  {
    double total_activity = 0;
    for (double a : activity) total_activity += a;
    for (std::uint32_t i = 0; i < cfg.users; ++i) {
      User& u = users[i];
      double wsum = 0;
      for (double w : u.class_weight) wsum += w;
      double user_sum = 0;
      for (std::size_t c = 0; c < u.classes.size(); ++c) {
        const double cap = u.classes[c].size * 4 > cfg.procs ? kWideClassCap : kClassCap;
        const double share = activity[i] / total_activity * u.class_weight[c] / wsum;
        u.class_weight[c] = std::min(share, cap);
        user_sum += u.class_weight[c];
      }
      activity[i] = user_sum;
    }
  }

  // Sessions: who, which class, how many jobs, submitted how.
  Rng g(cfg.seed, kStreamSessions);
  std::vector<Draft> drafts;
  drafts.reserve(cfg.jobs);
  std::vector<double> session_tau;  // operational arrival time (unscaled)
  std::vector<double> session_len;  // offset of its last job
  double tau = 0;
  while (drafts.size() < cfg.jobs) {
    const std::uint32_t s = std::uint32_t(session_tau.size());
    tau += exponential(g, 1.0);
    session_tau.push_back(tau);
    const std::size_t ui = discrete(g, activity);
    User& u = users[ui];
    int ci;
    if (u.last_class >= 0 && g.chance(kStickiness)) {
      ci = u.last_class;  // users keep working on the same thing for a while
    } else {
      ci = int(discrete(g, u.class_weight));
    }
    u.last_class = ci;
    const JobClass& k = u.classes[std::size_t(ci)];
    std::uint32_t n;
    bool batch;
    if (k.runtime <= 7200 && k.size * 8 <= cfg.procs && g.chance(kBurst)) {
      n = std::uint32_t(g.between(kBurstMin, kBurstMax));  // a small "flurry"
      batch = true;
    } else {
      // long jobs and wide jobs come in shorter sessions
      double p_end = kSessionStop;
      if (k.runtime > 3600)
        p_end = std::min(kSessionStopMax, kSessionStop * det_exp(0.3 * det_log(k.runtime / 3600)));
      if (k.size * 4 > cfg.procs) p_end = std::max(p_end, kWideSessionStop);
      n = 1 + std::min<std::uint32_t>(geometric(g, p_end), kMaxSessionJobs - 1);
      batch = g.chance(kBatch);
    }
    // Inputs change from session to session: runtimes within one session are
    // closer than across sessions. The user sizes the estimate for the
    // session (most sessions of a class get the same round value).
    const double session_runtime = k.runtime * lognormal(g, 1.0, kSessionSigma);
    const std::int64_t session_estimate =
        g.chance(k.p_max) ? cfg.max_estimate
                       : round_up(*u.estimates, session_runtime * det_exp(kEstimateSpread * k.sigma) * k.slack);
    double offset = 0;
    for (std::uint32_t j = 0; j < n && drafts.size() < cfg.jobs; ++j) {
      Draft d;
      d.session = s;
      d.size = k.size;
      d.estimate = g.chance(k.use_max) ? cfg.max_estimate : session_estimate;
      d.user = std::int64_t(ui) + 1;
      d.group = u.group;
      d.app = k.app;
      double rt;
      if (g.chance(k.fail)) {
        rt = log_uniform(g, 1, kFailRuntime);  // failed early (bad input, crash)
        d.status = 0;
      } else {
        rt = session_runtime * lognormal(g, 1.0, k.sigma);
        if (g.chance(kOutlier)) rt = rt * log_uniform(g, 0.1, 5.0);
        d.status = 1;
      }
      std::int64_t runtime = std::max<std::int64_t>(1, std::int64_t(std::floor(rt + 0.5)));
      if (runtime > d.estimate) {
        // killed at the limit, a little late
        runtime = d.estimate + g.between(0, kMaxKillDelay);
        d.status = 0;
      }
      d.runtime = runtime;
      if (j > 0) {
        if (batch) {
          offset += exponential(g, kBatchGap);
        } else {
          d.think = std::int64_t(std::floor(exponential(g, kThink)));
          d.follows = true;
          offset += double(drafts.back().runtime) + double(d.think);
        }
      }
      d.offset = offset;
      drafts.push_back(d);
    }
    session_len.push_back(offset);
  }

  // Offered load: the span that gives the target load, then the times that
  // produce it. A session starts at Lambda^-1(c * tau) and its jobs follow at
  // d * offset: c scales operational time (keeping the daily cycle), d < 1
  // compresses the sessions themselves, which is needed only when sessions
  // are long compared with the whole span (tiny workloads on big machines).
  // One parameter x drives both (c = x, d = min(1, x / x0), x0 being the c
  // that spreads the session starts alone over a quarter of the target
  // span), the span grows with x, and bisection finds the x that gives the
  // target.
  double work = 0;
  for (const Draft& d : drafts) work += double(d.size) * double(d.runtime);
  const double target_span = work / (double(cfg.procs) * cfg.load);
  const Cycle cycle;
  auto span_for = [&](double c, double d) {
    double first = std::numeric_limits<double>::max(), last = 0;
    for (std::size_t s = 0; s < session_tau.size(); ++s) {
      const double t = cycle.time_of(session_tau[s] * c);
      first = std::min(first, t);
      last = std::max(last, t + d * session_len[s]);
    }
    return last - first;
  };
  auto solve = [&](auto span_of) {  // smallest x with span_of(x) >= target (bisection)
    double lo = 0, hi = 1;
    while (span_of(hi) < target_span && hi < 1e15) hi *= 2;
    for (int it = 0; it < 100; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (span_of(mid) < target_span) lo = mid; else hi = mid;
    }
    return hi;
  };
  double c = 1, d = 1;
  if (session_tau.size() >= 2) {
    const double x0 = solve([&](double x) { return 4 * span_for(x, 0); });
    c = solve([&](double x) { return span_for(x, std::min(1.0, x / x0)); });
    d = std::min(1.0, c / x0);
  } else if (session_len[0] > 0) {
    d = std::min(1.0, target_span / session_len[0]);
  }
  for (Draft& dr : drafts) {
    dr.submit = std::int64_t(std::floor(cycle.time_of(session_tau[dr.session] * c) + d * dr.offset));
  }

  // Sort by submit time (ties in generation order), number 1..N.
  std::vector<std::uint32_t> order(drafts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return drafts[a].submit < drafts[b].submit;
  });
  std::vector<std::int64_t> number(drafts.size());
  for (std::size_t i = 0; i < order.size(); ++i) number[order[i]] = std::int64_t(i) + 1;

  std::vector<swf::Record> out;
  out.reserve(drafts.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t di = order[i];
    const Draft& d = drafts[di];
    swf::Record r;
    r.job = std::int64_t(i) + 1;
    r.submit = d.submit;
    r.wait = -1;
    r.run = d.runtime;
    r.alloc_procs = d.size;
    r.req_procs = d.size;
    r.req_time = d.estimate;
    r.status = d.status;
    r.user = d.user;
    r.group = d.group;
    r.app = d.app;
    r.queue = 1;
    r.partition = 1;
    if (d.follows) {
      r.preceding = number[di - 1];
      r.think = d.think;
    }
    r.line = 0;
    out.push_back(r);
  }

  if (header) {
    swf::Header h;
    append(h, "Version", "2.2");
    append(h, "Computer", "synthetic machine (" + std::to_string(cfg.procs) + " processors)");
    append(h, "Installation", "easypp synthetic workload generator");
    append(h, "Information", "docs/synthetic-workload.md in the easypp sources");
    append(h, "Conversion", "generated by easypp-gen, model version 1");
    append(h, "MaxJobs", std::to_string(out.size()));
    append(h, "MaxRecords", std::to_string(out.size()));
    append(h, "Preemption", "No");
    append(h, "UnixStartTime", std::to_string(kUnixStartTime));
    append(h, "TimeZoneString", "UTC");
    append(h, "StartTime", "Mon Jan 01 00:00:00 UTC 2024");
    append(h, "MaxNodes", std::to_string(cfg.procs));
    append(h, "MaxProcs", std::to_string(cfg.procs));
    append(h, "MaxRuntime", std::to_string(cfg.max_estimate));
    append(h, "AllowOveruse", "Yes (jobs killed at their limit end up to " +
                                  std::to_string(kMaxKillDelay) + " s late)");
    append(h, "MaxQueues", "1");
    append(h, "MaxPartitions", "1");
    append(h, "Note", "synthetic workload " + cfg.describe() +
                          " (offered load = sum(size*runtime) / (procs * (last - first submit)))");
    *header = std::move(h);
  }
  return out;
}

Workload generate_workload(const GeneratorConfig& cfg, const WorkloadOptions& opt) {
  swf::Header header;
  std::vector<swf::Record> records = generate_records(cfg, &header);
  WorkloadOptions o = opt;
  if (o.machine_procs <= 0) o.machine_procs = cfg.procs;
  return make_workload(cfg.describe(), std::move(header), std::move(records), o);
}

}  // namespace easypp
