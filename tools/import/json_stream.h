// Incremental reader of a Slurm accounting JSON document, one job at a time.
//
// slurmrestd's /slurmdb/v0.0.NN/jobs and `sacct --json` answer with one
// object {"meta": ..., "errors": [...], "warnings": [...], "jobs": [...]}
// whose "jobs" array can hold months of history. JobStream takes the bytes as
// they arrive (a libcurl write callback, fread of a file or pipe), cuts each
// element of the top-level "jobs" array out of the stream and hands it to a
// callback as its own jansson value, then forgets it: memory is one job plus
// the small top-level members (kept, for "errors" and "meta").
//
// It validates the structure it walks (one top-level object, member syntax,
// the jobs array) and leaves each piece's own syntax to jansson. Bytes that
// are not UTF-8 (a job name is any bytes a user typed; Slurm 22.05 emits
// them raw) are replaced by U+FFFD before jansson sees a piece, which would
// otherwise refuse it: one user's job name never blinds the reader. Malformed
// input and a document that ends early (a truncated answer) are reported with
// the byte offset and the number of jobs read so far; it never throws.
#pragma once

#include <jansson.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace easypp::import {

class JobStream {
 public:
  /// Called with each job (a JSON object, borrowed: decref'd after the call)
  /// and its 0-based index. Return false to stop with *why as the error.
  using OnJob = std::function<bool(json_t* job, std::size_t index, std::string* why)>;

  explicit JobStream(OnJob on_job);
  ~JobStream();
  JobStream(const JobStream&) = delete;
  JobStream& operator=(const JobStream&) = delete;

  /// Feed the next bytes. False once the input is malformed (error() says
  /// why); later calls then do nothing and return false.
  bool feed(const char* data, std::size_t n);
  /// The input ended: false if the document is incomplete or was malformed.
  bool finish();

  const std::string& error() const { return error_; }
  std::size_t jobs() const { return jobs_; }
  /// Jobs (and top-level members) in which bytes that are not UTF-8 were
  /// replaced by U+FFFD.
  std::size_t repaired() const { return repaired_; }
  bool has_jobs_member() const { return saw_jobs_; }
  std::uint64_t bytes() const { return offset_; }
  /// The top-level members other than "jobs" (an object, owned here).
  json_t* others() const { return others_; }

  /// A single top-level member (other than jobs), or all of them together
  /// (they are kept), larger than this is refused.
  static constexpr std::size_t kMaxMemberBytes = std::size_t(64) << 20;
  /// A single job larger than this is refused.
  static constexpr std::size_t kMaxJobBytes = std::size_t(64) << 20;

 private:
  enum class St {
    Start, ExpectKey, Key, KeyEscape, ExpectColon, ValueStart, Capture, AfterValue,
    JobsExpectElem, JobsFirstElem, JobElem, JobsAfterElem, Done, Failed
  };
  bool fail(const std::string& why);
  bool step(char c);
  bool track(char c);  // depth/string tracking inside Capture/JobElem; true when complete
  bool finish_capture();
  bool finish_job();

  OnJob on_job_;
  St st_ = St::Start;
  std::string key_;
  std::string buf_;  // the captured value or job
  int depth_ = 0;
  bool in_str_ = false;
  bool esc_ = false;
  bool scalar_ = false;
  std::size_t jobs_ = 0;
  std::size_t repaired_ = 0;
  std::size_t others_bytes_ = 0;  // the kept members' text, for the bound
  bool saw_jobs_ = false;
  std::uint64_t offset_ = 0;
  json_t* others_;
  std::string error_;
};

}  // namespace easypp::import
