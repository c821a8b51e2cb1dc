// Standard Workload Format (SWF) reading and writing.
//
// The reader streams (it never holds the file's text), reads plain and
// gzip-compressed files and standard input ("-"), parses the header comments,
// and reports every malformed line with file, line and field. A malformed job
// line is skipped and counted (a defined skip); problems that make skipping
// unsafe (unreadable or corrupt file) throw swf::Error, which the harness turns
// into exit status 2.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace easypp::swf {

/// The 18 SWF fields. -1 means "unknown". Fields 6 and 7 (average CPU time,
/// used memory) and 10 (requested memory) may be fractional in real logs.
struct Record {
  std::int64_t job = -1;          // 1  job number
  std::int64_t submit = -1;       // 2  submit time (s since UnixStartTime)
  std::int64_t wait = -1;         // 3  wait time
  std::int64_t run = -1;          // 4  run time
  std::int64_t alloc_procs = -1;  // 5  allocated processors
  double avg_cpu = -1;            // 6  average CPU time used
  double used_mem = -1;           // 7  used memory (KB per processor)
  std::int64_t req_procs = -1;    // 8  requested processors
  std::int64_t req_time = -1;     // 9  requested time (the estimate)
  double req_mem = -1;            // 10 requested memory
  std::int64_t status = -1;       // 11 status (1 completed, 0 failed, 5 cancelled, ...)
  std::int64_t user = -1;         // 12 user id
  std::int64_t group = -1;        // 13 group id
  std::int64_t app = -1;          // 14 executable (application) number
  std::int64_t queue = -1;        // 15 queue number
  std::int64_t partition = -1;    // 16 partition number
  std::int64_t preceding = -1;    // 17 preceding job number
  std::int64_t think = -1;        // 18 think time from preceding job
  std::uint64_t line = 0;         // line number in the source (1-based)
};

/// Names of the 18 fields, 1-based (field_name(9) == "requested time").
const char* field_name(int field);

/// Header comments ("; Key: value").
struct Header {
  std::vector<std::pair<std::string, std::string>> entries;  ///< in file order
  /// The first value of `key` (case-insensitive), if present.
  std::optional<std::string> get(std::string_view key) const;
  /// The first value of `key` as an integer: digits with an optional sign,
  /// then the end or whitespace and a comment ("1664 (72, 1368, 224)").
  /// Anything else ("1e3", "12.5", "N/A", an overflow) gives nullopt; the
  /// Reader refuses such values of the keys below (see Reader).
  std::optional<std::int64_t> get_int(std::string_view key) const;
  std::optional<std::int64_t> max_procs() const { return get_int("MaxProcs"); }
  std::optional<std::int64_t> max_nodes() const { return get_int("MaxNodes"); }
  std::optional<std::int64_t> max_runtime() const { return get_int("MaxRuntime"); }
  std::optional<std::int64_t> max_jobs() const { return get_int("MaxJobs"); }
  std::optional<std::int64_t> unix_start_time() const { return get_int("UnixStartTime"); }
};

/// One message about the input: where, what, and what was done about it.
struct Diagnostic {
  std::string file;
  std::uint64_t line = 0;  ///< 0: not about one line
  int field = 0;           ///< 1..18, 0: the whole line
  std::string message;
  /// "file:line: field N (name): message" (parts omitted when unknown).
  std::string format() const;
};

/// A fatal input problem; what() is a formatted Diagnostic.
class Error : public std::runtime_error {
 public:
  explicit Error(Diagnostic d);
  const Diagnostic& diagnostic() const { return d_; }

 private:
  Diagnostic d_;
};

struct ReaderOptions {
  /// Records with values no real system produces (negative other than -1,
  /// runtimes over max_seconds, sizes over max_procs, numbers that overflow
  /// 64 bits, infinities, NaN) are skipped and reported; in fields not needed
  /// to simulate the job (see ReaderStats::made_unknown) such values become
  /// -1 instead.
  std::int64_t max_seconds = 10LL * 365 * 86400;
  std::int64_t max_procs = 100000000;
  /// Malformed lines tolerated before giving up (0: never give up). A file
  /// that is mostly garbage is not a workload.
  std::uint64_t max_malformed = 0;
  /// Messages kept in full; beyond this only counts (0: keep none).
  std::size_t max_messages = 20;
};

/// Per-reason counts of skipped lines.
struct ReaderStats {
  std::uint64_t lines = 0;
  std::uint64_t comments = 0;
  std::uint64_t records = 0;
  std::uint64_t wrong_field_count = 0;
  std::uint64_t non_numeric = 0;
  std::uint64_t absurd = 0;
  std::uint64_t fractional_rounded = 0;  ///< fractional value in an integer field, rounded
  /// Absurd values (out of range, overflowing, not finite) in fields the
  /// simulation does not need to place the job (3 wait, 6 CPU time, 7
  /// memory, 9 requested time, 10 requested memory, 18 think time) become -1
  /// (unknown) instead of dropping the job; e.g. requested time 2147483647
  /// is an "unlimited" marker in real logs. Text that is not a number skips
  /// the line whatever the field.
  std::uint64_t made_unknown = 0;
  std::uint64_t skipped() const { return wrong_field_count + non_numeric + absurd; }
};

class Reader {
 public:
  /// Opens `path` ("-" for standard input); plain or gzip, detected by content.
  /// Throws Error if it cannot be opened.
  explicit Reader(const std::string& path, ReaderOptions opt = {});
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// Next valid record; false at the end. Malformed lines are skipped,
  /// counted and reported (diagnostics()). Throws Error on read/decompress
  /// failure, when max_malformed is exceeded, or on a header line (before the
  /// first record) of MaxProcs, MaxNodes, MaxRuntime, MaxJobs or
  /// UnixStartTime whose value has a digit but is not an integer (see
  /// Header::get_int); a value without any digit ("N/A") is reported and
  /// taken as not given.
  bool next(Record& rec);

  /// Header comments seen so far (all of them once the first record is read,
  /// as SWF puts the header first).
  const Header& header() const;
  const ReaderStats& stats() const;
  const std::vector<Diagnostic>& diagnostics() const;
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Format one record as an SWF line (no newline); integers stay integers.
std::string format_record(const Record& r);

/// Write a header block ("; Key: value" lines).
std::string format_header(const Header& h);

}  // namespace easypp::swf
