// easypp-sim --report DIR: the picture page.
//
// easypp-sim writes the data (the --json document plus each run's figure
// series) and runs easypp-report, a Python script drawing the charts with
// matplotlib, which writes one self-contained index.html (inline SVG, no
// script, nothing fetched). Everything is written into a fresh temporary
// directory beside DIR, mode 0700 (the page has per-user figures), and only
// moved into place once complete: a failure leaves nothing behind.
#pragma once

#include <jansson.h>

#include <stdexcept>
#include <string>

namespace easypp::report {

/// A report directory being written. The constructor checks that DIR can be
/// written (before any replay, so a typo costs nothing) and creates the
/// temporary directory; the destructor removes it unless commit() moved it.
class ReportDir {
 public:
  /// Throws BadReportDir with a one-line message if DIR cannot be written.
  explicit ReportDir(std::string dir);
  ~ReportDir();
  ReportDir(const ReportDir&) = delete;
  ReportDir& operator=(const ReportDir&) = delete;

  /// Writes report.json (`doc`) and runs easypp-report to make index.html,
  /// then moves both into DIR. Throws std::runtime_error on failure.
  void write(json_t* doc);

  const std::string& dir() const { return dir_; }

 private:
  void commit();
  std::string dir_;
  std::string tmp_;
  bool existed_ = false;  ///< DIR was there already
  bool committed_ = false;
};

struct BadReportDir : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The easypp-report script: $EASYPP_REPORT, else next to this executable,
/// else the installed one. Empty if none is found.
std::string find_report_script();

}  // namespace easypp::report
