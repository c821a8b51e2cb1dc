#include "shadow/source.h"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_set>

#include "import/acct_job.h"
#include "import/json_stream.h"
#include "shadow/report.h"
#include "shadow/views.h"

namespace easypp::shadow {

namespace {



std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}


void backoff(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1000L << std::min(attempt, 6)));
}

// Jobs of one document, parsed as they stream in.
class Reader {
 public:
  Reader(bool ctld, const UidOf* uid_of)
      : ctld_(ctld), uid_of_(uid_of),
        stream_([this](json_t* job, std::size_t, std::string*) {
          on_job(job);
          return true;
        }) {}
  import::JobStream& stream() { return stream_; }
  std::vector<JobView>& views() { return views_; }
  std::uint64_t records = 0, refused = 0;
  std::string refused_example;

 private:
  void on_job(json_t* job) {
    ++records;
    std::string why;
    JobView v;
    if (ctld_) {
      if (ctld_view(job, &v, &why)) {
        views_.push_back(std::move(v));
        return;
      }
    } else {
      import::AcctJob j;
      if (import::parse_job(job, &j, &why)) {
        if (acct_view(j, *uid_of_, &v)) views_.push_back(std::move(v));
        return;
      }
    }
    ++refused;
    if (refused_example.empty()) {
      json_t* id = json_object_get(job, "job_id");
      refused_example = (json_is_integer(id) ? "job " + std::to_string(json_integer_value(id)) + ": "
                                             : std::string()) + why;
    }
  }
  bool ctld_;
  const UidOf* uid_of_;
  std::vector<JobView> views_;
  import::JobStream stream_;
};

}  // namespace

Source::Source(SourceOptions o, std::function<void(const std::string&)> log)
    : o_(std::move(o)), log_(std::move(log)) {
  if (!o_.url.empty()) {
    ep_.base = o_.url;
    ep_.timeout = o_.timeout;
    ep_.connect_timeout = std::min<long>(10, o_.timeout);
    ep_.stall_timeout = std::min<long>(60, o_.timeout);
    ep_.user = o_.user;
    if (ep_.user.empty()) {
      if (struct passwd* pw = getpwuid(geteuid())) ep_.user = pw->pw_name;
    }
    if (o_.api != "auto") slurm_api_ = slurmdb_api_ = o_.api;
  }
}

std::string Source::describe() const {
  if (o_.url.empty()) return o_.squeue + " --json + " + o_.sacct + " --json";
  const std::string a = slurm_api_.empty() ? "v0.0.NN" : slurm_api_;
  const std::string b = slurmdb_api_.empty() ? "v0.0.NN" : slurmdb_api_;
  return "slurmrestd " + o_.url + " /slurm/" + a + "/jobs + /slurmdb/" + b + "/jobs";
}

bool Source::fetch(Time acct_since, Fetched* out, SourceError* err) {
  *out = Fetched{};
  acct_.clear();
  return o_.url.empty() ? fetch_commands(acct_since, out, err) : fetch_rest(acct_since, out, err);
}

// Accounting names users; slurmctld's list numbers them: its pairs first,
// then the passwd database.
static UidOf make_uid_of(const std::vector<JobView>& ctld) {
  auto known = std::make_shared<std::map<std::string, UserId>>();
  for (const JobView& v : ctld)
    if (!v.user.empty() && v.uid != kNoUser) known->emplace(v.user, v.uid);
  return [known](const std::string& name) -> UserId {
    auto it = known->find(name);
    if (it != known->end()) return it->second;
    UserId uid = kNoUser;
    if (struct passwd* pw = getpwnam(name.c_str())) uid = UserId(pw->pw_uid);
    known->emplace(name, uid);
    return uid;
  };
}

// slurmctld's views (already in out->views) first; accounting's for the
// jobs it does not list.
static void merge(std::vector<JobView>& acct, Fetched* out) {
  std::unordered_set<std::uint32_t> listed;
  for (const JobView& v : out->views) listed.insert(v.id);
  for (JobView& v : acct)
    if (listed.insert(v.id).second) out->views.push_back(std::move(v));
  acct.clear();
}

bool Source::token(SourceError* err) {
  std::string tok;
  if (!o_.token_file.empty()) {
    std::ifstream f(o_.token_file);
    if (!f) {
      err->what = "cannot read the token file " + o_.token_file + ": " + std::strerror(errno);
      err->config = true;
      return false;
    }
    std::getline(f, tok);
  } else if (const char* e = std::getenv("SLURM_JWT")) {
    tok = e;
  }
  if (tok.rfind("SLURM_JWT=", 0) == 0) tok = tok.substr(10);
  while (!tok.empty() && (tok.back() == '\n' || tok.back() == '\r' || tok.back() == ' '))
    tok.pop_back();
  ep_.token = tok;
  if (!ep_.is_unix() && tok.empty()) {
    err->what = o_.url + ": no token for slurmrestd's JWT authentication: set SLURM_JWT "
                "(scontrol token) or --token-file, or use a unix socket";
    err->config = true;
    return false;
  }
  return true;
}

bool Source::detect(SourceError* err, Fetched* out) {
  const std::string path = "/openapi/v3";
  const std::string url = ep_.display(path);
  std::string last;
  for (int attempt = 0; attempt <= o_.retries; ++attempt) {
    if (attempt > 0) {
      ++out->retries;
      log_(url + ": " + last + "; trying again (" + std::to_string(attempt) + " of " +
           std::to_string(o_.retries) + ")");
      backoff(attempt - 1);
    }
    std::string body;
    ++out->requests;
    import::RestResult r = import::rest_get(ep_, path, [&](const char* d, std::size_t n,
                                                          std::string* why) {
      if (body.size() + n > (std::size_t(256) << 20)) {
        *why = "the OpenAPI description is larger than 256 MiB";
        return false;
      }
      body.append(d, n);
      return true;
    });
    if (r.ok) {
      json_error_t e;
      json_t* spec = json_loadb(body.data(), body.size(), 0, &e);
      if (spec == nullptr) {
        err->what = url + ": the OpenAPI description is not JSON (" + e.text + ", line " +
                    std::to_string(e.line) + ")";
        return false;
      }
      json_t* paths = json_object_get(spec, "paths");
      int best[2] = {-1, -1};
      std::set<std::string> served;
      const char* k;
      json_t* v;
      json_object_foreach(paths, k, v) {
        for (int i = 0; i < 2; ++i) {
          const char* fmt = i == 0 ? "/slurm/v0.0.%d/jobs%15s" : "/slurmdb/v0.0.%d/jobs%15s";
          int n = -1;
          char rest[16] = "";
          if (std::sscanf(k, fmt, &n, rest) >= 1 && (rest[0] == '\0' || std::string(rest) == "/")) {
            served.insert(std::string(i == 0 ? "slurm" : "slurmdb") + "/v0.0." + std::to_string(n));
            if (import::known_api_version(n)) best[i] = std::max(best[i], n);
          }
        }
      }
      json_decref(spec);
      if (best[0] < 0 || best[1] < 0) {
        std::string list;
        for (const auto& s : served) list += (list.empty() ? "" : ", ") + s;
        err->what = url + ": this slurmrestd serves no " +
                    (best[0] < 0 ? "slurm" : "slurmdb") +
                    " jobs endpoint this tool knows (it serves: " +
                    (list.empty() ? "none; are the openapi/v0.0.NN and openapi/dbv0.0.NN "
                                    "plugins loaded?"
                                  : list) +
                    "; known: v0.0.36 .. v0.0.42)";
        err->config = true;
        return false;
      }
      slurm_api_ = "v0.0." + std::to_string(best[0]);
      slurmdb_api_ = "v0.0." + std::to_string(best[1]);
      return true;
    }
    last = r.error;
    if (!r.retryable) {
      err->config = r.http_status == 401 || r.http_status == 403 || r.http_status == 404 ||
                    r.http_status == 0;
      break;
    }
  }
  err->what = url + ": " + last;
  return false;
}

bool Source::get(const std::string& path, bool ctld, Fetched* out, SourceError* err) {
  const std::string url = ep_.display(path);
  const UidOf uid_of = make_uid_of(out->views);
  std::string last;
  bool config = false;
  for (int attempt = 0; attempt <= o_.retries; ++attempt) {
    if (attempt > 0) {
      ++out->retries;
      log_(url + ": " + last + "; trying again (" + std::to_string(attempt) + " of " +
           std::to_string(o_.retries) + ")");
      backoff(attempt - 1);
    }
    Reader reader(ctld, &uid_of);
    ++out->requests;
    import::RestResult r = import::rest_get(ep_, path, [&](const char* d, std::size_t n,
                                                          std::string* why) {
      if (!reader.stream().feed(d, n)) {
        *why = "malformed JSON in the answer: " + reader.stream().error();
        return false;
      }
      return true;
    });
    if (r.ok && !reader.stream().finish()) {
      r.ok = false;
      r.error = reader.stream().error();
      r.retryable = r.error.find("truncated") != std::string::npos;
    }
    if (r.ok) {
      const std::string errs = import::document_errors(reader.stream().others());
      if (!errs.empty() || !reader.stream().has_jobs_member()) {
        r.ok = false;
        r.error = errs.empty() ? "the answer has no \"jobs\" array (not a jobs answer)"
                               : "slurmrestd answered with errors: " + errs;
        if (errs.find("uthentication") != std::string::npos) {
          r.error += " (the token is not valid for this user, or expired: set SLURM_JWT or "
                     "--token-file, and --user)";
          r.http_status = 401;
        }
      }
    }
    if (r.ok) {
      out->bytes += reader.stream().bytes();
      (ctld ? out->ctld_jobs : out->acct_jobs) += reader.records;
      out->refused += reader.refused;
      if (out->refused_example.empty()) out->refused_example = reader.refused_example;
      if (ctld) out->views = std::move(reader.views());
      else acct_ = std::move(reader.views());
      return true;
    }
    last = r.error;
    if (!r.retryable) {
      config = r.http_status == 401 || r.http_status == 403 || r.http_status == 404 ||
               (r.http_status == 0 && r.error.find("malformed") == std::string::npos &&
                r.error.find("truncated") == std::string::npos);
      break;
    }
  }
  err->what = url + ": " + last;
  err->config = config;
  return false;
}

bool Source::fetch_rest(Time acct_since, Fetched* out, SourceError* err) {
  if (!token(err)) return false;
  if (slurm_api_.empty() && !detect(err, out)) return false;
  // Everything stamped before this second is in the answers asked for
  // now; events of this very second may be half there: the next poll's.
  out->now = Time(std::time(nullptr)) - 1;
  if (!get("/slurm/" + slurm_api_ + "/jobs", true, out, err)) return false;
  // Jobs that ran after acct_since; asked a little wider (slurmrestd reads
  // the times in its own local time zone).
  const std::string path = "/slurmdb/" + slurmdb_api_ + "/jobs?start_time=" +
                           import::url_encode(local_time(acct_since)) + "&end_time=" +
                           import::url_encode(local_time(out->now + 60)) + "&skip_steps=true";
  if (!get(path, false, out, err)) return false;
  merge(acct_, out);
  return true;
}

bool Source::run(const std::string& cmd, bool ctld, Fetched* out, SourceError* err) {
  const UidOf uid_of = make_uid_of(out->views);
  std::string last;
  bool config = false;
  for (int attempt = 0; attempt <= o_.retries; ++attempt) {
    if (attempt > 0) {
      ++out->retries;
      log_(cmd + ": " + last + "; trying again (" + std::to_string(attempt) + " of " +
           std::to_string(o_.retries) + ")");
      backoff(attempt - 1);
    }
    char errpath[] = "/tmp/easypp-shadow-err.XXXXXX";
    const int efd = mkstemp(errpath);
    if (efd < 0) {
      err->what = std::string("cannot create a temporary file: ") + std::strerror(errno);
      return false;
    }
    close(efd);
    ++out->requests;
    Reader reader(ctld, &uid_of);
    FILE* p = popen((cmd + " 2>" + errpath).c_str(), "r");
    if (p == nullptr) {
      unlink(errpath);
      err->what = cmd + ": cannot run: " + std::strerror(errno);
      return false;
    }
    std::string why;
    std::vector<char> buf(1 << 16);
    std::size_t n;
    bool ok = true;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
      if (ok && !reader.stream().feed(buf.data(), n)) {
        ok = false;
        why = "malformed JSON: " + reader.stream().error();
      }
    }
    const int rc = pclose(p);
    std::string stderr_text;
    {
      std::ifstream f(errpath);
      std::string line;
      while (std::getline(f, line) && stderr_text.size() < 400)
        stderr_text += (stderr_text.empty() ? "" : " ") + line;
      unlink(errpath);
    }
    const int status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (status != 0) {
      last = "failed (exit status " + std::to_string(status) + ")" +
             (stderr_text.empty() ? "" : ": " + stderr_text);
      if (status == 127) {  // the shell did not find it
        last += " (is Slurm's client installed, and on PATH?)";
        config = true;
        break;
      }
      continue;  // slurmctld or slurmdbd not answering: try again
    }
    if (ok && !reader.stream().finish()) {
      ok = false;
      why = reader.stream().error();
    }
    if (ok && !reader.stream().has_jobs_member()) {
      const std::string errs = import::document_errors(reader.stream().others());
      ok = false;
      why = "no \"jobs\" array in its output" + (errs.empty() ? "" : " (errors: " + errs + ")");
    }
    if (ok) {
      const std::string errs = import::document_errors(reader.stream().others());
      if (!errs.empty()) {
        ok = false;
        why = "its output reports errors: " + errs;
      }
    }
    if (ok) {
      out->bytes += reader.stream().bytes();
      (ctld ? out->ctld_jobs : out->acct_jobs) += reader.records;
      out->refused += reader.refused;
      if (out->refused_example.empty()) out->refused_example = reader.refused_example;
      if (ctld) out->views = std::move(reader.views());
      else acct_ = std::move(reader.views());
      return true;
    }
    last = why;
    break;  // malformed output: a retry at once will not help; the next poll may
  }
  err->what = cmd + ": " + last;
  err->config = config;
  return false;
}

bool Source::fetch_commands(Time acct_since, Fetched* out, SourceError* err) {
  // Everything stamped before this second is in the answers asked for
  // now; events of this very second may be half there: the next poll's.
  out->now = Time(std::time(nullptr)) - 1;
  if (!run(o_.squeue + " --json", true, out, err)) return false;
  const std::string cmd = o_.sacct + " --json --allusers --starttime " +
                          shell_quote(local_time(acct_since)) + " --endtime " +
                          shell_quote(local_time(out->now + 60));
  if (!run(cmd, false, out, err)) return false;
  merge(acct_, out);
  return true;
}

}  // namespace easypp::shadow
