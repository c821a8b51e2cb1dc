#include "easypp/correction.h"

#include <algorithm>

namespace easypp {

Time beyond_estimate_increment(std::uint32_t i) {
  if (i <= 1) return 60;
  // 15 min * 2^(i-2), saturating: a job would have to be corrected ~40 times
  // past its estimate to reach the cap (centuries of runtime).
  const std::uint32_t shift = std::min<std::uint32_t>(i - 2, 40);
  return Time(900) << shift;
}

Time correct_prediction(CorrectionPolicy policy, Time p, Time e, CorrectionState& st) {
  switch (policy) {
    case CorrectionPolicy::None:
      return p;
    case CorrectionPolicy::Estimate:
      ++st.count;
      if (p < e) return e;
      return p + beyond_estimate_increment(++st.beyond);
    case CorrectionPolicy::Gradual: {
      // The beyond-estimate increments from the first correction on, capped at
      // the estimate while below it, continuing past it afterwards.
      const Time inc = beyond_estimate_increment(++st.count);
      if (p < e) return std::min(p + inc, e);
      ++st.beyond;
      return p + inc;
    }
    case CorrectionPolicy::Exponential:
      ++st.count;
      if (p < e) {
        const Time grown = std::max(p + 60, (p * 6 + 4) / 5);  // ceil(1.2 p)
        return std::min(grown, e);
      }
      return p + beyond_estimate_increment(++st.beyond);
  }
  return p;
}

std::optional<CorrectionPolicy> parse_correction(std::string_view s) {
  if (s == "none") return CorrectionPolicy::None;
  if (s == "estimate") return CorrectionPolicy::Estimate;
  if (s == "gradual") return CorrectionPolicy::Gradual;
  if (s == "exponential") return CorrectionPolicy::Exponential;
  return std::nullopt;
}

const char* to_string(CorrectionPolicy p) {
  switch (p) {
    case CorrectionPolicy::None: return "none";
    case CorrectionPolicy::Estimate: return "estimate";
    case CorrectionPolicy::Gradual: return "gradual";
    case CorrectionPolicy::Exponential: return "exponential";
  }
  return "?";
}

}  // namespace easypp
