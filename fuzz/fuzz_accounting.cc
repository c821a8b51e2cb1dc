// Fuzz target: the structured accounting input (tools/import/): JobStream
// cutting a `sacct --json` or slurmrestd document into jobs as its bytes
// arrive, and parse_job() normalizing each job (Slurm 22.05 and 23.02+
// shapes), as easypp-import reads them.
//
// The input is the document. Checked:
//  - the outcome does not depend on how the bytes arrive: fed at once, and
//    fed in pieces of 1 to 64 bytes cut where the input's hash says (as a
//    pipe or libcurl delivers them), the same jobs in the same order with the
//    same parse results or refusal reasons, the same success or error;
//  - a malformed document, a refused job and an early end each give a
//    message; the callback sees the jobs in order, and jobs() counts them;
//  - an accepted job keeps parse_job's promises: a job id, a known submit
//    time, every time within [0, 2^40] s, end not before start, elapsed -1
//    or more, a limit that is either unlimited or 0..2^31 minutes.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "import/acct_job.h"
#include "import/json_stream.h"

using easypp::import::AcctJob;
using easypp::import::JobStream;
using easypp::import::kMaxTime;

namespace {

struct Outcome {
  bool fed = true;       // every feed() returned true
  bool finished = false;
  std::string error;
  std::size_t jobs = 0;
  std::vector<std::string> results;  // per job: its fields, or why it was refused
};

std::string describe(const AcctJob& j) {
  char b[512];
  std::snprintf(b, sizeof b,
                "%u %u %lld %u %lld st=%s t=%lld,%lld,%lld,%lld el=%lld sus=%lld lim=%lld%s cpu=%lld/%lld mem=%lld",
                j.job_id, j.array_job_id, (long long)j.array_task_id, j.het_job_id,
                (long long)j.het_offset, j.state.c_str(), (long long)j.submit,
                (long long)j.eligible, (long long)j.start, (long long)j.end, (long long)j.elapsed,
                (long long)j.suspended, (long long)j.limit_min, j.unlimited ? "u" : "",
                (long long)j.alloc_cpus, (long long)j.req_cpus, (long long)j.req_mem_mb);
  return std::string(b) + " " + j.cluster + "|" + j.user + "|" + j.group + "|" + j.partition +
         "|" + j.name;
}

void check_job(const AcctJob& j) {
  FUZZ_CHECK(j.job_id > 0);
  FUZZ_CHECK(j.submit > 0 && j.submit <= kMaxTime);
  for (std::int64_t t : {j.eligible, j.start, j.end}) FUZZ_CHECK(t >= 0 && t <= kMaxTime);
  if (j.start > 0 && j.end > 0) FUZZ_CHECK(j.end >= j.start);
  FUZZ_CHECK(j.elapsed >= -1 && j.suspended >= 0);
  if (j.unlimited) FUZZ_CHECK(j.limit_min == -1);
  else FUZZ_CHECK(j.limit_min == -1 || (j.limit_min >= 0 && j.limit_min <= (std::int64_t(1) << 31)));
  FUZZ_CHECK(j.alloc_cpus >= 0 && (j.req_cpus == -1 || j.req_cpus > 0));
  FUZZ_CHECK(j.req_mem_mb == -1 || j.req_mem_mb > 0);
  FUZZ_CHECK(j.array_task() || j.array_task_id == -1);
  FUZZ_CHECK(j.het_job_id != 0 || j.het_offset == -1);
}

// Feeds `data` in pieces: sizes from `seed` (1..64 bytes), or all at once
// if seed is 0.
Outcome run(const std::uint8_t* data, std::size_t size, std::uint32_t seed) {
  Outcome o;
  JobStream js([&o](json_t* job, std::size_t index, std::string*) {
    FUZZ_CHECK(index == o.results.size());
    AcctJob a;
    std::string why;
    if (parse_job(job, &a, &why)) {
      check_job(a);
      o.results.push_back(describe(a));
    } else {
      FUZZ_CHECK(!why.empty());
      o.results.push_back("refused: " + why);
    }
    return true;
  });
  const char* p = reinterpret_cast<const char*>(data);
  std::size_t off = 0;
  std::uint32_t x = seed;
  while (off < size && o.fed) {
    std::size_t n = size - off;
    if (seed != 0) {
      x = x * 1103515245u + 12345u;
      n = std::min<std::size_t>(n, 1 + (x >> 16) % 64);
    }
    o.fed = js.feed(p + off, n);
    off += n;
  }
  o.finished = js.finish();
  o.error = js.error();
  o.jobs = js.jobs();
  FUZZ_CHECK(o.jobs == o.results.size());
  FUZZ_CHECK(o.finished == o.error.empty());
  if (!o.fed) FUZZ_CHECK(!o.finished);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Outcome whole = run(data, size, 0);
  const Outcome pieces = run(data, size, easypp::fuzz::hash(data, size) | 1u);
  FUZZ_CHECK(whole.finished == pieces.finished);
  FUZZ_CHECK(whole.error == pieces.error);
  FUZZ_CHECK(whole.results == pieces.results);
  return 0;
}
