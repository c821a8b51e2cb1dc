// The simulator's resource adapter (the resource interface of
// easypp/resource_api.h over ProcResources): a machine of N identical
// processors. It answers the pass's questions from processor counts and
// tells its owner what happened through `Jobs`:
//
//   std::int64_t size(JobHandle) const;   processors the job needs
//   Time prediction(JobHandle) const;     its planning value
//   void started(JobHandle, Time end_bound, bool backfilled);
//   void reserved(JobHandle, Time shadow, bool is_head);
//
// The simulator is one owner (simulator.cc); the adapters' conformance
// tests are another (tests/unit/test_adapters.cc).
#pragma once

#include <cstdint>

#include "easypp/resource_api.h"
#include "easypp/sim/proc_resources.h"
#include "easypp/types.h"

namespace easypp {

template <class Jobs>
class ProcAdapter {
 public:
  ProcAdapter(ProcResources& res, Jobs& jobs) : res_(res), jobs_(jobs) {}

  /// Called before each pass.
  void begin_pass(Time now) {
    now_ = now;
    res_.begin_pass(now);
  }
  /// Called instead, before a pass that continues the last one (policy.h,
  /// PassCarry); false: it cannot (then begin_pass()).
  bool continue_pass(Time now) {
    if (!res_.continue_pass(now)) return false;
    now_ = now;
    return true;
  }

  bool start_now(JobHandle h, Time end_bound) {
    const std::int64_t size = jobs_.size(h);
    if (!res_.fits_now(size)) return false;
    start(h, size, end_bound, false);
    return true;
  }
  Time reserve(JobHandle h, Time duration, bool is_head) {
    const Time shadow = res_.reserve(jobs_.size(h), duration);
    jobs_.reserved(h, shadow, is_head);
    return shadow;
  }
  bool backfill(JobHandle h, Time end_bound) {
    const std::int64_t size = jobs_.size(h);
    if (!res_.may_backfill(size, end_bound)) return false;
    start(h, size, end_bound, true);
    return true;
  }
  bool can_start_more() const { return res_.start_width() > 0; }
  std::int64_t free_width() const { return res_.start_width(); }
  std::int64_t extra_width() const { return res_.extra(); }
  StartLimits start_limits() const { return res_.start_limits(); }
  bool may_continue() { return true; }

 private:
  // The processors are held until end_bound for this pass's planning and
  // until start + prediction (the planned end) for the passes after it.
  void start(JobHandle h, std::int64_t size, Time end_bound, bool backfilled) {
    res_.start(h, size, end_bound, now_ + jobs_.prediction(h));
    jobs_.started(h, end_bound, backfilled);
  }

  ProcResources& res_;
  Jobs& jobs_;
  Time now_ = 0;
};

}  // namespace easypp
