// The jobs an accounting limit holds back, cycle by cycle, without Slurm
// headers (acct_limits.cc asks Slurm; this remembers and decides what to log).
//
// sched/backfill skips a job that a QOS or association limit refuses,
// before node selection (acct_policy_job_runnable_pre_select(), and
// acct_policy_job_runnable_post_select() with its TRES) or after it
// (ESLURM_ACCOUNTING_POLICY from select_nodes()): such a job never gets a
// reservation, so it holds no node. sched/easypp does the same:
//
//   - a job refused before the pass (kPreSelect, kPostSelect) is not queued;
//   - a job refused by select_nodes() during the pass (kSelectNodes: a
//     limit on what the selected nodes bring, e.g. whole nodes' CPUs) is
//     never tested again in that cycle (no reservation: it holds no node),
//     and in the next cycles it is tried "start now only" before the pass
//     (never the head) for kCarrySeconds after its last refusal: a cycle
//     in which it does not fit now does not ask select_nodes() again, so
//     the refusal is carried (each new refusal renews it; after that the
//     job is an ordinary candidate again, so one whose limit has freed
//     while the nodes were busy is not kept from a reservation for long);
//   - a job whose QOS has NoReserve, or whose priority is below its QOS's
//     MinPrioThreshold, gets no reservation (kNoReserve: tried as a backfill
//     candidate only, never the head).
//
// A job is logged once when it becomes skipped (not again while it stays
// skipped cycle after cycle); skipped() and the counts are per cycle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace easypp::plugin {

class LimitSkips {
 public:
  enum class Why { kPreSelect, kPostSelect, kSelectNodes, kNoReserve };
  /// How long a select_nodes() refusal keeps a job "start now only".
  static constexpr std::int64_t kCarrySeconds = 300;

  static const char* name(Why w) {
    switch (w) {
      case Why::kPreSelect: return "before node selection";
      case Why::kPostSelect: return "its TRES";
      case Why::kSelectNodes: return "select_nodes()";
      case Why::kNoReserve: return "no reservation";
    }
    return "?";
  }

  /// A new cycle at time `now` (seconds): this cycle's skips become the
  /// last cycle's; select_nodes() refusals older than kCarrySeconds expire.
  void begin_cycle(std::int64_t now = 0) {
    last_.swap(now_);
    now_.clear();
    time_ = now;
    for (auto it = refused_.begin(); it != refused_.end();)
      it = now - it->second >= kCarrySeconds ? refused_.erase(it) : std::next(it);
  }

  /// Record job `id` as skipped in this cycle. True when it should be
  /// logged: it was not skipped for the same reason in the last cycle (nor
  /// already in this one).
  bool skip(std::uint32_t id, Why why) {
    if (why == Why::kSelectNodes) {  // logged when a refusal episode begins
      const bool fresh = refused_.count(id) == 0;
      refused_[id] = time_;
      now_[id] = why;
      return fresh;
    }
    auto [it, inserted] = now_.emplace(id, why);
    if (!inserted) {
      if (it->second == why) return false;
      it->second = why;
    }
    auto before = last_.find(id);
    return before == last_.end() || before->second != why;
  }

  /// Skipped in this cycle: never tested again in it (kNoReserve jobs are:
  /// they are only never reserved for).
  bool skipped(std::uint32_t id) const {
    auto it = now_.find(id);
    return it != now_.end() && it->second != Why::kNoReserve;
  }

  /// Refused by select_nodes() less than kCarrySeconds ago: this cycle
  /// tries it "start now only" (never the head).
  bool start_now_only(std::uint32_t id) const { return refused_.count(id) != 0; }

  /// Jobs skipped in this cycle (every reason, kNoReserve included).
  std::size_t count() const { return now_.size(); }
  std::size_t count(Why why) const {
    std::size_t n = 0;
    for (const auto& kv : now_) n += kv.second == why;
    return n;
  }

 private:
  std::map<std::uint32_t, Why> now_, last_;
  std::map<std::uint32_t, std::int64_t> refused_;  ///< last select_nodes() refusal
  std::int64_t time_ = 0;                          ///< this cycle's time
};

}  // namespace easypp::plugin
