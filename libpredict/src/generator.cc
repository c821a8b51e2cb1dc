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
#include "easypp/generator.h"

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

// ---------------------------------------------------------------------------
// Pseudo-random numbers.

/// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code): seeds the
/// main generator.
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// xoshiro256** 1.0 (Blackman and Vigna 2018, https://prng.di.unimi.it/).
class Rng {
 public:
  /// Independent streams for one seed: the stream number is mixed into the
  /// splitmix64 state, so users and jobs draw from different sequences.
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ULL);
    for (auto& w : s_) w = splitmix64(x);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

  /// Uniform in (0, 1]: safe to take the logarithm of.
  double uniform_pos() { return double((next() >> 11) + 1) * 0x1.0p-53; }

  /// Uniform integer in [0, n), n >= 1, unbiased (rejection).
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % n;
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return x % n;
  }

  /// Uniform integer in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + std::int64_t(below(std::uint64_t(hi - lo) + 1));
  }

  bool chance(double p) { return uniform() < p; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// ---------------------------------------------------------------------------
// Portable log and exp (basic operations only; see the file comment).

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm's split of ln 2
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kSqrtHalf = 0.70710678118654752440;

/// Natural logarithm of x > 0 (finite). Relative error ~1e-16.
double det_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
  if (m < kSqrtHalf) {
    m = m * 2;
    e -= 1;
  }
  // m in [sqrt(1/2), sqrt(2)): ln m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  double sum = 0;
  for (int k = 23; k >= 3; k -= 2) sum = (sum + 1.0 / k) * s2;
  const double ln_m = 2 * s * (1 + sum);
  return double(e) * kLn2 + ln_m;
}

/// e^x for |x| < 700. Relative error ~1e-16.
double det_exp(double x) {
  const double k = std::floor(x / kLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;  // |r| <= 0.35
  double term = 1, sum = 1;
  for (int i = 1; i <= 18; ++i) {
    term = term * r / i;
    sum = sum + term;
  }
  return std::ldexp(sum, int(k));
}

/// Exponential with the given mean.
double exponential(Rng& g, double mean) { return -mean * det_log(g.uniform_pos()); }

/// Standard normal (Marsaglia's polar method; needs only log and sqrt).
double normal(Rng& g) {
  for (;;) {
    const double u = 2 * g.uniform() - 1;
    const double v = 2 * g.uniform() - 1;
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2 * det_log(s) / s);
  }
}

/// Lognormal with the given median and shape sigma.
double lognormal(Rng& g, double median, double sigma) {
  return median * det_exp(sigma * normal(g));
}

/// Log-uniform in [lo, hi], 0 < lo <= hi.
double log_uniform(Rng& g, double lo, double hi) {
  return lo * det_exp(g.uniform() * det_log(hi / lo));
}

/// Index drawn with probability proportional to weights[i] (all >= 0, sum > 0).
std::size_t discrete(Rng& g, const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w;
  double x = g.uniform() * total;
  for (std::size_t i = 0; i + 1 < weights.size(); ++i) {
    if (x < weights[i]) return i;
    x -= weights[i];
  }
  return weights.size() - 1;
}

/// Number of failures before the first success, success probability p.
std::uint32_t geometric(Rng& g, double p) {
  std::uint32_t n = 0;
  while (!g.chance(p) && n < 100000) ++n;
  return n;
}

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

struct JobClass {
  std::int64_t size = 1;
  double runtime = 60;     ///< typical runtime (median), seconds
  double sigma = 0.2;      ///< lognormal runtime noise within a session
  std::int64_t estimate = 3600;
  double fail = 0.05;      ///< probability that a job fails early
  double use_max = 0;      ///< probability that a job asks for the maximum anyway
  std::int64_t app = 0;    ///< SWF field 14
};

struct User {
  double activity = 1;     ///< relative number of sessions
  std::int64_t group = 1;
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

/// A job size: mostly narrow, power-of-two biased, some wide; 1..procs.
std::int64_t draw_size(Rng& g, std::int64_t procs) {
  if (procs <= 1) return 1;
  if (g.chance(0.28)) return 1;  // serial
  int max_log = 0;
  while ((std::int64_t(1) << (max_log + 1)) <= procs) ++max_log;  // 2^max_log <= procs
  // log2 of the size: 1..max_log with weights 0.72^k (narrow jobs dominate);
  // the full machine (rare) is one more option.
  std::vector<double> w;
  double p = 1;
  for (int k = 1; k <= max_log; ++k) {
    p = p * 0.72;
    w.push_back(p);
  }
  w.push_back(p * 0.72);  // whole machine
  const std::size_t i = discrete(g, w);
  if (i == w.size() - 1) return procs;
  const int k = int(i) + 1;
  std::int64_t size = std::int64_t(1) << k;
  if (g.chance(0.15)) {
    // not a power of two: somewhere between the neighbouring powers
    size = g.between((std::int64_t(1) << (k - 1)) + 1, std::min(procs, size * 2 - 1));
  }
  return std::min(size, procs);
}

User make_user(Rng& g, const GeneratorConfig& cfg, const EstimateMenu& menu,
               std::int64_t& next_app) {
  User u;
  // Some users give the partition maximum for most of their jobs; the others
  // round a multiple of the typical runtime up to a popular value, and
  // occasionally also use the maximum.
  const bool lazy = g.chance(0.10);
  const double p_max = lazy ? 0.7 : 0.03;
  const std::vector<std::int64_t>& estimates = g.chance(0.3) ? menu.fine : menu.coarse;
  const std::uint32_t n = 1 + std::min<std::uint32_t>(geometric(g, 0.35), 7);
  const double max_rt = std::max(1.0, 0.25 * double(cfg.max_estimate));
  const double min_rt = std::min(60.0, max_rt);
  for (std::uint32_t c = 0; c < n; ++c) {
    JobClass k;
    k.size = draw_size(g, cfg.procs);
    if (g.chance(0.2)) {
      k.runtime = log_uniform(g, min_rt, std::max(min_rt, std::min(max_rt, 1800.0)));
    } else {
      k.runtime = log_uniform(g, min_rt, max_rt);
    }
    k.sigma = 0.05 + 0.45 * g.uniform();
    if (g.chance(p_max)) {
      k.estimate = cfg.max_estimate;
    } else {
      const double factor = std::max(1.5, lognormal(g, 2.5, 0.5));
      k.estimate = round_up(estimates, k.runtime * factor);
    }
    // Per job, the class's estimate is sometimes replaced by the maximum
    // ("just give it the most").
    k.use_max = 0.3 * g.uniform();
    k.fail = 0.15 * g.uniform();
    k.app = ++next_app;
    u.classes.push_back(k);
    u.class_weight.push_back(lognormal(g, 1.0, 0.7));
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

  // Users: a Zipf-like activity (a few users submit most sessions), ranks
  // shuffled over the user ids.
  Rng ug(cfg.seed, kStreamUsers);
  std::vector<User> users;
  users.reserve(cfg.users);
  std::int64_t next_app = 0;
  const std::int64_t groups = std::max<std::int64_t>(1, (cfg.users + 7) / 8);
  for (std::uint32_t i = 0; i < cfg.users; ++i) {
    users.push_back(make_user(ug, cfg, menu, next_app));
    users.back().group = 1 + std::int64_t(ug.below(std::uint64_t(groups)));
  }
  std::vector<std::uint32_t> rank(cfg.users);
  std::iota(rank.begin(), rank.end(), 0u);
  for (std::uint32_t i = cfg.users; i > 1; --i) std::swap(rank[i - 1], rank[ug.below(i)]);
  std::vector<double> activity(cfg.users);
  for (std::uint32_t i = 0; i < cfg.users; ++i) activity[i] = 1.0 / det_exp(0.8 * det_log(double(rank[i] + 1)));

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
    if (u.last_class >= 0 && g.chance(0.5)) {
      ci = u.last_class;  // users keep working on the same thing for a while
    } else {
      ci = int(discrete(g, u.class_weight));
    }
    u.last_class = ci;
    const JobClass& k = u.classes[std::size_t(ci)];
    std::uint32_t n;
    bool batch;
    if (g.chance(0.03)) {  // a burst of many similar jobs (a small "flurry")
      n = std::uint32_t(g.between(10, 80));
      batch = true;
    } else {
      n = 1 + std::min<std::uint32_t>(geometric(g, 0.28), 60);
      batch = g.chance(0.5);
    }
    // Inputs change from session to session: runtimes within one session are
    // closer than across sessions.
    const double session_runtime = k.runtime * lognormal(g, 1.0, 0.25);
    double offset = 0;
    for (std::uint32_t j = 0; j < n && drafts.size() < cfg.jobs; ++j) {
      Draft d;
      d.session = s;
      d.size = k.size;
      d.estimate = g.chance(k.use_max) ? cfg.max_estimate : k.estimate;
      d.user = std::int64_t(ui) + 1;
      d.group = u.group;
      d.app = k.app;
      double rt;
      if (g.chance(k.fail)) {
        rt = log_uniform(g, 1, 300);  // failed early (bad input, crash)
        d.status = 0;
      } else {
        rt = session_runtime * lognormal(g, 1.0, k.sigma);
        if (g.chance(0.03)) rt = rt * log_uniform(g, 0.1, 5.0);  // outlier
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
          offset += exponential(g, 30.0);
        } else {
          const double think = exponential(g, 900.0);
          d.think = std::int64_t(std::floor(think));
          d.follows = true;
          offset += double(drafts.back().runtime) + double(d.think);
        }
      }
      d.offset = offset;
      drafts.push_back(d);
    }
    session_len.push_back(offset);
  }

  // Offered load: the span that gives the target load, then the scale of
  // operational time that produces that span (bisection; the span grows with
  // the scale).
  double work = 0;
  for (const Draft& d : drafts) work += double(d.size) * double(d.runtime);
  const double target_span = work / (double(cfg.procs) * cfg.load);
  const Cycle cycle;
  auto span_for = [&](double c) {
    double first = std::numeric_limits<double>::max(), last = 0;
    for (std::size_t s = 0; s < session_tau.size(); ++s) {
      const double t = cycle.time_of(session_tau[s] * c);
      first = std::min(first, t);
      last = std::max(last, t + session_len[s]);
    }
    return last - first;
  };
  double lo = 0, hi = 1;
  while (span_for(hi) < target_span && hi < 1e15) hi *= 2;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (span_for(mid) < target_span) lo = mid; else hi = mid;
  }
  const double scale = hi;
  for (Draft& d : drafts) {
    d.submit = std::int64_t(std::floor(cycle.time_of(session_tau[d.session] * scale) + d.offset));
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
