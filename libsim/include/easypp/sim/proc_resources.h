// The processor-count resource model used by the SWF simulator: a machine of
// N identical processors, running jobs ordered by predicted end.
//
// It answers the policy's questions (through ProcAdapter, proc_adapter.h):
// does a job fit the free processors, when would the head fit given the
// running jobs' predicted ends (shadow time, extra processors), and may a
// candidate backfill. With one reservation it is the shadow/extra
// computation of the EASY paper, found in O(log running) (the running jobs
// by predicted end in a tree that keeps each subtree's processors); with
// more (conservative) it plans on an availability profile.
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <cstdint>
#include <functional>
#include <vector>

#include "easypp/types.h"

namespace easypp {

class ProcResources {
 public:
  explicit ProcResources(std::int64_t procs = 0) : total_(procs), free_(procs) {}

  std::int64_t total() const { return total_; }
  std::int64_t free() const { return free_; }
  std::size_t running() const { return running_.size(); }

  // --- the running set (maintained by the owner) ---------------------------
  void remove_running(JobHandle h, std::int64_t size, Time predicted_end);
  void move_predicted_end(JobHandle h, std::int64_t size, Time old_end, Time new_end);

  // --- planning within one scheduling pass ---------------------------------
  /// Forget the previous pass's reservations.
  void begin_pass(Time now);
  bool fits_now(std::int64_t size) const { return size <= free_; }
  /// Earliest start for `size` processors held `duration` seconds; records
  /// the reservation. See resource_api.h (reserve).
  Time reserve(std::int64_t size, Time duration);
  /// May a job of `size` start now and hold its processors until `end_bound`
  /// without delaying any reservation of this pass? Does not allocate.
  bool may_backfill(std::int64_t size, Time end_bound) const;
  /// Account for a job started now (after fits_now or may_backfill), held
  /// until end_bound for planning; also adds it to the running set.
  void start(JobHandle h, std::int64_t size, Time end_bound, Time predicted_end);

  std::int64_t extra() const { return extra_; }

 private:
  struct Run {
    Time end;
    JobHandle h;
    std::int64_t size;
    bool operator<(const Run& o) const { return end != o.end ? end < o.end : h < o.h; }
  };
  // The processors of the runs of each subtree (libstdc++'s policy-based
  // tree with a node update, as its order statistics).
  template <class NodeCItr, class NodeItr, class Cmp, class Alloc>
  struct SizeSum {
    using metadata_type = std::int64_t;
    void operator()(NodeItr it, NodeCItr end) const {
      std::int64_t s = (**it).size;
      if (it.get_l_child() != end) s += it.get_l_child().get_metadata();
      if (it.get_r_child() != end) s += it.get_r_child().get_metadata();
      const_cast<metadata_type&>(it.get_metadata()) = s;
    }
    virtual NodeCItr node_begin() const = 0;
    virtual NodeCItr node_end() const = 0;
    virtual ~SizeSum() = default;
  };
  using RunSet = __gnu_pbds::tree<Run, __gnu_pbds::null_type, std::less<Run>,
                                  __gnu_pbds::rb_tree_tag, SizeSum>;
  // The first run (by predicted end) by whose end the runs up to it hold
  // at least `need` processors; *held: what they hold. End if none.
  RunSet::const_iterator first_holding(std::int64_t need, std::int64_t* held) const;
  struct Seg {
    Time t;             // segment start
    std::int64_t free;  // processors available on [t, next.t)
  };
  void build_profile();
  std::size_t split_at(Time t);

  std::int64_t total_;
  std::int64_t free_;
  RunSet running_;

  Time now_ = 0;
  std::size_t nres_ = 0;
  Time shadow_ = kNever;
  std::int64_t extra_ = 0;
  // The running set changes less often than passes run (an arrival alone
  // changes nothing): the head's shadow/extra is reused while the running
  // set, the free count and the head's size are unchanged.
  std::uint64_t version_ = 0;
  std::uint64_t cached_version_ = ~std::uint64_t(0);
  std::int64_t cached_size_ = -1;
  Time cached_shadow_ = kNever;
  std::int64_t cached_extra_ = 0;
  // The head's reservation (the first one), for the profile.
  Time head_shadow_ = kNever;
  std::int64_t head_size_ = 0;
  Time head_duration_ = 0;
  // Availability profile, built when a second reservation is made.
  bool profile_ = false;
  std::vector<Seg> segs_;
};

}  // namespace easypp
