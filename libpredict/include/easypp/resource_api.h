// The one seam between the scheduling policy and a resource model: the
// questions schedule_pass() (policy.h) asks, and nothing else. Two adapters
// answer them:
//
//   - ProcAdapter (libsim, easypp/sim/proc_adapter.h): a machine of N
//     identical processors, for replaying SWF logs;
//   - NodeAdapter (plugin/node_planner.h): the plugin's decisions on nodes,
//     over SlurmCluster (slurmctld: select_g_job_test() and select_nodes())
//     in the plugin and over a fake cluster in the tests.
//
// The conformance suite (tests/unit/test_adapters.cc) runs the same
// scenarios against both. ResourceAdapter<A> below checks at compile time
// that a type answers every question with the right signature; the pass
// static_asserts it, so a missing or misspelt member is one clear error.
//
// The contract, for one scheduling pass at time `now` (a job's "end bound"
// is until when it holds its resources as far as this pass's reservations
// are concerned: PolicyConfig::end_bound()):
//
//   bool start_now(JobHandle h, Time end_bound);
//       Start h now if it fits the free resources. Called only before any
//       reservation of the pass exists (EASY step 1, in queue order).
//   Time reserve(JobHandle h, Time duration, bool is_head);
//       The earliest time h fits, given the running jobs' planned ends
//       (start + prediction) and the reservations already made in this pass;
//       record h's reservation (it holds its resources from then for
//       `duration`). Returns the shadow time (possibly in the past: expired
//       predictions still count; kNever if h can never fit). For the head,
//       also remembers the "extra" resources (free at the shadow time beyond
//       the head's need).
//   bool backfill(JobHandle h, Time end_bound);
//       Start h now if it fits the free resources and holding them until
//       end_bound delays no reservation of this pass: for one reservation,
//       either end_bound <= shadow (case a), or h uses only "extra"
//       resources (case b), which then shrink.
//   bool can_start_more() const;
//       False when nothing at all can start now (lets the pass stop early).
//   std::int64_t free_width() const;
//       Upper bound of the width (WaitQueue::push) that could start now;
//       wider candidates are skipped without a backfill() call.
//   std::int64_t extra_width() const;
//       Upper bound of the width that could still start now by case (b):
//       the head's "extra" resources left (a job wider than it can start
//       only by case (a)); 0 when none is left. With free_width() and the
//       shadow time it lets the pass skip, without a backfill() call, every
//       job that cannot start (the candidate indexes of queue.h).
//   bool may_continue();
//       Budget and lock-yield point, called before each backfill candidate;
//       false ends the pass (the plugin's max-jobs-tested and time budget).
//
// One optional question, asked only by passes with deeper reservations
// (conservative) over a queue-order index:
//
//   StartLimits start_limits() const;
//       A superset of the jobs that could still start now, in the state of
//       the pass: width <= extra, or width <= free and end bound <= now +
//       limit, or width <= steps[i].width and end bound <= now +
//       steps[i].limit for a step i. Since a pass only ever takes resources away, a job outside
//       it can start at no later point of the pass either: the pass gives
//       such jobs their reservation without a backfill() call, and ends
//       once no waiting job is inside it (the reservations left would
//       change no decision of the pass). Without it, every job is asked.
//
// Two more, asked only by schedule_pass() with a PassCarry (policy.h:
// passes that continue the last one; the simulator's):
//
//   void begin_pass(Time now);
//       Forget the last pass's reservations (the caller otherwise does).
//   bool continue_pass(Time now);
//       Keep them for a pass at `now` that continues the last one: true only
//       if that state is the one begin_pass() and the same calls would
//       rebuild (nothing but time changed since, and time changed nothing).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "easypp/types.h"

namespace easypp {

/// The answer to start_limits() (see above).
struct StartLimits {
  std::int64_t free = 0;   ///< widest job that may start now (at most free_width())
  Time limit = 0;          ///< longest (end bound - now) a job of width <= free may have
  std::int64_t extra = 0;  ///< widest job that may start now whatever its end bound (<= free)
  /// Narrower jobs may be longer: widths descending below free, limits
  /// ascending above limit, all widths above extra.
  struct Step {
    std::int64_t width = 0;
    Time limit = 0;
  };
  static constexpr unsigned kMaxSteps = 7;
  Step steps[kMaxSteps];
  unsigned n_steps = 0;
};

namespace resource_api_detail {

template <class A, class = void>
struct has_start_now : std::false_type {};
template <class A>
struct has_start_now<A, std::enable_if_t<std::is_same_v<
                            decltype(std::declval<A&>().start_now(JobHandle{}, Time{})), bool>>>
    : std::true_type {};

template <class A, class = void>
struct has_reserve : std::false_type {};
template <class A>
struct has_reserve<A, std::enable_if_t<std::is_same_v<
                          decltype(std::declval<A&>().reserve(JobHandle{}, Time{}, bool{})), Time>>>
    : std::true_type {};

template <class A, class = void>
struct has_backfill : std::false_type {};
template <class A>
struct has_backfill<A, std::enable_if_t<std::is_same_v<
                           decltype(std::declval<A&>().backfill(JobHandle{}, Time{})), bool>>>
    : std::true_type {};

template <class A, class = void>
struct has_can_start_more : std::false_type {};
template <class A>
struct has_can_start_more<
    A, std::enable_if_t<std::is_same_v<decltype(std::declval<const A&>().can_start_more()), bool>>>
    : std::true_type {};

template <class A, class = void>
struct has_free_width : std::false_type {};
template <class A>
struct has_free_width<A, std::enable_if_t<std::is_same_v<
                             decltype(std::declval<const A&>().free_width()), std::int64_t>>>
    : std::true_type {};

template <class A, class = void>
struct has_extra_width : std::false_type {};
template <class A>
struct has_extra_width<A, std::enable_if_t<std::is_same_v<
                              decltype(std::declval<const A&>().extra_width()), std::int64_t>>>
    : std::true_type {};

template <class A, class = void>
struct has_may_continue : std::false_type {};
template <class A>
struct has_may_continue<
    A, std::enable_if_t<std::is_same_v<decltype(std::declval<A&>().may_continue()), bool>>>
    : std::true_type {};

template <class A, class = void>
struct has_start_limits : std::false_type {};
template <class A>
struct has_start_limits<A, std::enable_if_t<std::is_same_v<
                               decltype(std::declval<const A&>().start_limits()), StartLimits>>>
    : std::true_type {};

}  // namespace resource_api_detail

/// True when A answers every question of the contract above.
template <class A>
inline constexpr bool ResourceAdapter =
    resource_api_detail::has_start_now<A>::value && resource_api_detail::has_reserve<A>::value &&
    resource_api_detail::has_backfill<A>::value &&
    resource_api_detail::has_can_start_more<A>::value &&
    resource_api_detail::has_free_width<A>::value &&
    resource_api_detail::has_extra_width<A>::value &&
    resource_api_detail::has_may_continue<A>::value;

/// One static_assert per question, so the compiler names the missing one.
template <class A>
constexpr bool check_resource_adapter() {
  using namespace resource_api_detail;
  static_assert(has_start_now<A>::value,
                "resource adapter: needs bool start_now(JobHandle, Time end_bound)");
  static_assert(has_reserve<A>::value,
                "resource adapter: needs Time reserve(JobHandle, Time duration, bool is_head)");
  static_assert(has_backfill<A>::value,
                "resource adapter: needs bool backfill(JobHandle, Time end_bound)");
  static_assert(has_can_start_more<A>::value,
                "resource adapter: needs bool can_start_more() const");
  static_assert(has_free_width<A>::value,
                "resource adapter: needs std::int64_t free_width() const");
  static_assert(has_extra_width<A>::value,
                "resource adapter: needs std::int64_t extra_width() const");
  static_assert(has_may_continue<A>::value, "resource adapter: needs bool may_continue()");
  return true;
}

}  // namespace easypp
