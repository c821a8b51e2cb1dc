// A synthetic site driven by users who react to the scheduler: the user
// model of Shmueli and Feitelson's site-level simulation (session dynamics,
// job submission in batches, daily and weekly activity cycles), for the
// closed-loop replay (--feedback; docs/closed-loop.md).
//
// The model decides, when a job ends, whether its user goes on with the
// session (probability 0.8 / (0.05 * response in minutes + 1), the paper's
// equation 1) after a short think time, or takes a break, and moves the
// next submission into the user's activity window. The jobs themselves and
// every random draw (the Bernoulli trial's uniform number, both think times)
// are drawn up front, per job, so that two schedulers replay the same users
// making the same draws (common random numbers): only their response times
// differ, hence their decisions, hence when (and whether, before the
// horizon) each job is submitted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "easypp/sim/workload.h"
#include "easypp/types.h"

namespace easypp {

struct SessionModelConfig {
  std::uint64_t seed = 1;
  std::uint32_t users = 100;
  std::uint32_t days = 28;   ///< the horizon: no job is submitted after it
  std::int64_t procs = 128;
  Time max_estimate = 36 * 3600;
  // The paper's constants (equation 1 and the activity cycles model).
  double cont_max = 0.8;     ///< p_cont at zero response
  double cont_slope = 0.05;  ///< per minute of response
  double day_share = 0.7;    ///< users active in the daytime (7:30-17:30)
  double weekday_share = 0.8;  ///< users active Monday to Friday

  std::string validate() const;
  /// "sessions:seed=1,users=100,..." (parseable by parse_session_spec).
  std::string describe() const;
};

/// Parse "key=value,..." (keys: seed, users, days, procs, max-estimate,
/// cont-max, cont-slope, day-share, weekday-share). On error returns false
/// and sets *error ("bad value 'x' for users (expected ...)").
bool parse_session_spec(std::string_view spec, SessionModelConfig& cfg, std::string* error);

/// What the simulator consults under --feedback (Workload::sessions).
struct SessionModel {
  Time horizon = 0;
  double cont_max = 0.8, cont_slope = 0.05;
  struct User {
    Time shift = 0;     ///< personal offset of the window, seconds (-3600..3600)
    bool day = true;    ///< 7:30-17:30, else 17:30-7:30
    bool weekday = true;  ///< Monday-Friday, else Saturday-Sunday
  };
  std::vector<User> users;  ///< by user id - 1
  struct Draws {
    double u = 0;           ///< the Bernoulli trial: continue iff u < p_cont
    Time short_think = 0;   ///< if the session continues (< 20 min)
    Time long_think = 0;    ///< if it breaks (20 min - 8 h)
    std::uint32_t lead = 0; ///< the batch's first job (itself for a lead)
    Time offset = 0;        ///< after the lead's submission (batch members)
  };
  std::vector<Draws> draws;  ///< parallel to Workload::jobs

  /// Probability that a user goes on after a job that responded in `resp` s.
  double p_continue(Time resp) const {
    return cont_max / (cont_slope * double(resp) / 60.0 + 1.0);
  }
  /// The earliest time >= t inside the user's activity window (time 0 is a
  /// Monday, 00:00).
  Time next_active(UserId user, Time t) const;
  /// When job `lead` is submitted after its preceding job, which was
  /// submitted at `pred_submit` and ended at `pred_end`: the decision and the
  /// activity window applied.
  Time submit_after(std::uint32_t lead, UserId user, Time pred_submit, Time pred_end) const;
};

/// Generate the site: every job any scheduler could submit before the
/// horizon (the submit times are those of an empty machine, where every
/// response is the runtime; fields 17 and 18 link each batch to the previous
/// one, and the think time written is the empty machine's), as a workload
/// carrying its SessionModel.
Workload generate_session_workload(const SessionModelConfig& cfg, const WorkloadOptions& opt);

}  // namespace easypp
