// Prediction correction (spec section 2): what a running job's prediction
// becomes when the job is still running at its predicted end.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "easypp/types.h"

namespace easypp {

enum class CorrectionPolicy {
  None,         ///< never correct: expired predictions stay in the past
  Estimate,     ///< p := e; past the estimate, the beyond-estimate rule
  Gradual,      ///< +1 min, +15 min, +30 min, ... capped at e, then past it
  Exponential,  ///< p := max(p + 60, ceil(1.2 p)) capped at e, then beyond rule
};

/// Per-job correction bookkeeping. `count` is every correction applied;
/// `beyond` the ones applied while the prediction already was >= estimate.
struct CorrectionState {
  std::uint32_t count = 0;
  std::uint32_t beyond = 0;
};

/// The i-th increment of the beyond-estimate rule (i >= 1): 60 s for i = 1,
/// 15 min * 2^(i-2) for i >= 2 (saturates instead of overflowing).
Time beyond_estimate_increment(std::uint32_t i);

/// Apply one correction to prediction `p` of a job with estimate `e` whose
/// prediction just expired. Returns the new prediction (> p except for None,
/// which returns p unchanged and leaves `st` alone).
Time correct_prediction(CorrectionPolicy policy, Time p, Time e, CorrectionState& st);

std::optional<CorrectionPolicy> parse_correction(std::string_view s);
const char* to_string(CorrectionPolicy p);

}  // namespace easypp
