// Seeded random numbers that give the same values on every platform, shared
// by the synthetic generator (generator.cc) and the fitted Markov model
// (markov_model.cc): xoshiro256** seeded with splitmix64, and log/exp made of
// IEEE-754 basic operations only (+ - * / sqrt are exactly rounded
// everywhere; std::log/std::exp may differ by an ulp between C libraries).
// No std:: distribution (their algorithms are implementation-defined).
// Floating-point contraction (fused multiply-add) would change roundings:
// GCC does not contract in ISO mode (-std=c++17); clang is told below, for
// every file that includes this one. Do not build with -ffast-math.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace easypp::detrand {

/// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code): seeds the
/// main generator.
inline std::uint64_t splitmix64(std::uint64_t& x) {
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
inline double det_log(double x) {
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
inline double det_exp(double x) {
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
inline double exponential(Rng& g, double mean) { return -mean * det_log(g.uniform_pos()); }

/// Standard normal (Marsaglia's polar method; needs only log and sqrt).
inline double normal(Rng& g) {
  for (;;) {
    const double u = 2 * g.uniform() - 1;
    const double v = 2 * g.uniform() - 1;
    const double s = u * u + v * v;
    if (s > 0 && s < 1) return u * std::sqrt(-2 * det_log(s) / s);
  }
}

/// Lognormal with the given median and shape sigma.
inline double lognormal(Rng& g, double median, double sigma) {
  return median * det_exp(sigma * normal(g));
}

/// Log-uniform in [lo, hi], 0 < lo <= hi.
inline double log_uniform(Rng& g, double lo, double hi) {
  return lo * det_exp(g.uniform() * det_log(hi / lo));
}

/// Index drawn with probability proportional to weights[i] (all >= 0, sum > 0).
inline std::size_t discrete(Rng& g, const std::vector<double>& weights) {
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
inline std::uint32_t geometric(Rng& g, double p) {
  std::uint32_t n = 0;
  while (!g.chance(p) && n < 100000) ++n;
  return n;
}

}  // namespace easypp::detrand
