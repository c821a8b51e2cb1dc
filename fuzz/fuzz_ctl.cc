// Fuzz target: easypp-ctl reading its files (plugin/easypp_ctl.cc, included
// here without its main()) and printing them.
//
// The input is a command selector byte, then the status file, then
// optionally a line "#state" and the state file:
//
//   <selector><easypp_status.json bytes>\n#state\n<easypp_state.json bytes>
//
// ("\n#" cannot occur inside a JSON document, outside its strings, where a
// raw newline is not allowed either.) The selector's low 3 bits pick a
// command (status, jobs, jobs --user, jobs --partition, users, users UID,
// users UID --estimate, state), bit 3 adds --json, bit 4 leaves the status
// file out, bit 5 the state file. Checked, with stdout and stderr captured:
//  - exit status 0, 1 (missing or corrupt file) or 2 (usage), never an
//    escaping exception; errors are "easypp-ctl: " lines;
//  - no control character but newlines reaches the terminal (no C0, DEL or
//    C1: names from the files are escaped), and --json output is JSON that
//    parses back.
#define EASYPP_CTL_NO_MAIN
#include "easypp_ctl.cc"

#include <jansson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_util.h"

namespace {

using easypp::fuzz::TempDir;

// main() is left out: its scontrol lookup is not used here (--dir is given).
[[maybe_unused]] const auto kNotUsed = &state_save_location;

// stdout and stderr (the FILE*s easypp-ctl prints to) redirected into
// memory for one command. Sanitizer reports still go to file descriptor 2.
class Capture {
 public:
  Capture() : out_(stdout), err_(stderr) {
    stdout = open_memstream(&obuf_, &olen_);
    stderr = open_memstream(&ebuf_, &elen_);
    FUZZ_CHECK(stdout && stderr);
  }
  // Restores the streams; the captured text is in out() and err().
  void finish() {
    std::fclose(stdout);
    std::fclose(stderr);
    stdout = out_;
    stderr = err_;
    out_text_.assign(obuf_, olen_);
    err_text_.assign(ebuf_, elen_);
    std::free(obuf_);
    std::free(ebuf_);
  }
  const std::string& out() const { return out_text_; }
  const std::string& err() const { return err_text_; }

 private:
  FILE* out_;
  FILE* err_;
  char* obuf_ = nullptr;
  char* ebuf_ = nullptr;
  std::size_t olen_ = 0, elen_ = 0;
  std::string out_text_, err_text_;
};

// No C0 control but newline, no C1 (as UTF-8), and no DEL unless allowed.
bool terminal_safe(const std::string& s, bool allow_del) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\n') || (c == 0x7f && !allow_del)) return false;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
  }
  return true;
}

// Every stderr line starts with "easypp-ctl: ".
bool stderr_lines_ok(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (s.compare(i, 12, "easypp-ctl: ") != 0) return false;
    const std::size_t nl = s.find('\n', i);
    if (nl == std::string::npos) return false;
    i = nl + 1;
  }
  return true;
}

int run(const std::vector<std::string>& args, Capture* cap) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  try {
    const Options o = parse_args(int(args.size()), argv.data());
    if (o.command == "status") return cmd_status(o, o.dir);
    if (o.command == "jobs") return cmd_jobs(o, o.dir);
    if (o.command == "users") return cmd_users(o, o.dir);
    return cmd_state(o, o.dir);
  } catch (const Exit& e) {
    return e.status;
  } catch (const std::exception& e) {
    cap->finish();
    std::fprintf(stderr, "easypp-ctl threw: %s\n", e.what());
    FUZZ_CHECK(!"an exception escaped a command");
  }
  return -1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static TempDir dir("ctl");
  if (size == 0) return 0;
  const unsigned sel = data[0];
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t sep = rest.find("\n#state\n");
  const std::string status = rest.substr(0, sep);
  const std::string state = sep == std::string::npos ? std::string() : rest.substr(sep + 8);
  auto put = [&](const char* name, const std::string& text, bool present) {
    if (present) dir.write(name, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    else dir.remove(name);
  };
  put(ps::kStatusFileName, status, !(sel & 16));
  put(ps::kStateFileName, state, !(sel & 32) && sep != std::string::npos);

  // Names and uids for the filtering commands, from the status if it reads.
  ps::Status st;
  std::string err;
  std::string user = "alice", partition = "batch", uid = "5001";
  if (ps::read_status(dir.file(ps::kStatusFileName), &st, &err)) {
    if (!st.jobs.empty()) {
      user = st.jobs[0].user_name.empty() ? std::to_string(st.jobs[0].user) : st.jobs[0].user_name;
      partition = st.jobs[0].partition;
    }
    if (!st.history.empty()) uid = std::to_string(st.history[0].user);
  }
  if (user.empty() || user == "-1") user = "alice";
  if (partition.empty()) partition = "batch";

  std::vector<std::string> args = {"easypp-ctl", "--dir", dir.path()};
  switch (sel & 7) {
    case 0: args.push_back("status"); break;
    case 1: args.push_back("jobs"); break;
    case 2: args.insert(args.end(), {"jobs", "--user", user}); break;
    case 3: args.insert(args.end(), {"jobs", "--partition", partition}); break;
    case 4: args.push_back("users"); break;
    case 5: args.insert(args.end(), {"users", uid}); break;
    case 6: args.insert(args.end(), {"users", uid, "--estimate", "1:30:00"}); break;
    case 7: args.push_back("state"); break;
  }
  const bool json = sel & 8;
  if (json) args.push_back("--json");

  Capture cap;
  const int status_code = run(args, &cap);
  cap.finish();

  FUZZ_CHECK(status_code == 0 || status_code == 1 || status_code == 2);
  FUZZ_CHECK(stderr_lines_ok(cap.err()));
  FUZZ_CHECK(terminal_safe(cap.err(), false));
  if (status_code != 0) FUZZ_CHECK(!cap.err().empty());
  if (json && status_code == 0) {
    FUZZ_CHECK(terminal_safe(cap.out(), false));
    json_error_t e;
    json_t* j = json_loads(cap.out().c_str(), JSON_DECODE_ANY, &e);
    FUZZ_CHECK(j != nullptr);
    json_decref(j);
  } else {
    FUZZ_CHECK(terminal_safe(cap.out(), false));
  }
  return 0;
}
