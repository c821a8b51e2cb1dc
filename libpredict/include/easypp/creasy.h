// CREASY (Shmueli and Feitelson): EASY backfilling over a queue ordered by
// criticality plus seniority instead of arrival (queue-order=creasy).
//
// A job's criticality is how much a little more delay would lower the
// chance that its user goes on with the session: the absolute derivative of
// the session model's continuation probability 0.8 / (0.05 t + 1) at the
// job's expected response t (minutes: its wait so far plus its planning
// value), 0.04 / (0.05 t + 1)^2. Short jobs that have not yet waited long
// are critical; long or already-late ones hardly. The seniority (the wait so
// far, in minutes) is added so that every job eventually becomes the head
// (the criticality is at most 0.04 alpha, the seniority grows without
// bound): priority = alpha * criticality + seniority. alpha = 0 is EASY's
// arrival order; the paper measured 1500..6000 and found little change
// beyond 6000, its default here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "easypp/queue.h"
#include "easypp/types.h"

namespace easypp {

struct CreasyConfig {
  double alpha = 6000;     ///< weight of the criticality (creasy-alpha)
  double cont_max = 0.8;   ///< the session model's equation 1 ...
  double cont_slope = 0.05;  ///< ... per minute of response
};

/// The criticality of a job expected to respond in `expected_response` s.
inline double creasy_criticality(Time expected_response, const CreasyConfig& c) {
  const double t = double(std::max<Time>(0, expected_response)) / 60.0;
  const double d = c.cont_slope * t + 1.0;
  return c.cont_max * c.cont_slope / (d * d);
}

/// The priority at `now` of a job waiting since `since` whose planning value
/// (prediction, or estimate) is `planning`: higher first.
inline double creasy_priority(Time now, Time since, Time planning, const CreasyConfig& c) {
  const Time wait = since < kNever ? std::max<Time>(0, now - since) : 0;
  return c.alpha * creasy_criticality(wait + planning, c) + double(wait) / 60.0;
}

/// Re-sort the waiting jobs of `q` by creasy_priority() at `now` (ties: the
/// current order). The jobs are pushed again in the new order with keys
/// {next_key(handle), 0} (next_key must increase from call to call, as it
/// must for the jobs the caller pushes between passes) and moved(handle,
/// new slot) is called for each. Nothing changes if the order holds.
template <class NextKey, class Moved>
void creasy_reorder(WaitQueue& q, Time now, const CreasyConfig& c, NextKey next_key, Moved moved) {
  struct Job {
    double priority;
    WaitQueue::Entry e;
    WaitQueue::Slot slot;
  };
  std::vector<Job> jobs;
  jobs.reserve(q.size());
  for (const WaitQueue::Item item : q.queue_order()) {
    const WaitQueue::Entry& e = q.entry(item.slot);
    jobs.push_back({creasy_priority(now, e.since, e.prediction, c), e, item.slot});
  }
  bool sorted = true;
  for (std::size_t i = 1; i < jobs.size() && sorted; ++i)
    sorted = !(jobs[i].priority > jobs[i - 1].priority);
  if (sorted) return;
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const Job& a, const Job& b) { return a.priority > b.priority; });
  for (const Job& j : jobs) q.erase(j.slot);
  for (const Job& j : jobs) {
    const WaitQueue::Entry& e = j.e;
    const WaitQueue::Slot s =
        q.push(e.handle, QueueKey{std::int64_t(next_key(e.handle)), 0}, e.prediction, e.estimate,
               e.width, e.since, e.first_reservation);
    moved(e.handle, s);
  }
}

}  // namespace easypp
