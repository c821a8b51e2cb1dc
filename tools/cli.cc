#include "cli.h"

#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "config.h"

namespace easypp::cli {

namespace {

const char* kHelp = R"(Usage: easypp-sim --workload FILE|-|synthetic[:SPEC] [options]

Replay a workload (SWF, plain or gzip) through the EASY++ scheduling core
and compare schedulers. Several schedulers replay the same workload and are
printed in one table, with the % change against the first.

Workload:
  -w, --workload FILE     SWF log to replay; "-" reads standard input;
                          "synthetic" (or "synthetic:seed=N,jobs=N,procs=N,
                          users=N,load=X,max-estimate=S") uses the built-in
                          generator (see easypp-gen(1)); "model:MODEL" (or
                          "model:MODEL:seed=N,jobs=N,thin=N") draws from a
                          Markov model fitted by easypp-gen --fit;
                          "sessions[:seed=N,users=N,days=N,procs=N,...]" a
                          site of users who react to response times (the
                          session model of Shmueli and Feitelson; replay it
                          with --feedback, docs/closed-loop.md)
      --feedback          closed loop: a job with a preceding job (SWF fields
                          17, 18) is submitted its think time after that job
                          ends in this replay (session workloads: when the
                          user model decides); others at their logged time.
                          Adds throughput, session length and per-runtime-
                          class figures (default: open, logged submit times)
  -p, --procs N           machine size (default: MaxProcs header, else MaxNodes)
      --load X            scale interarrival times so the offered load is X
                          (default: the log as it is)
      --size-from allocated|requested
                          job size from field 5, else 8 (allocated, default)
                          or from field 8, else 5 (requested)
      --default-estimate SECONDS
                          estimate for jobs without one (default: the larger of
                          the MaxRuntime header and the longest runtime)
      --clip-runtime      clip runtimes to the estimate (default: keep them)
      --pass-per-event    a scheduling pass after each event, as the authors'
                          simulator (default: one pass after all the events
                          of a timestamp)
      --no-correction-pass
                          no pass when only corrections happened at a time:
                          corrected predictions take effect at the next
                          arrival or termination, as the authors' simulator
                          (default: a pass after every correction)
      --unsorted fail|sort
                          submit times out of order: stop with status 2
                          (fail, default) or sort the jobs by submit time
      --max-jobs N        replay only the first N simulatable jobs (default: all)
      --max-malformed N   give up (status 2) after N malformed lines (default 0:
                          skip and count them all)
      --flurries N[/SECONDS]
                          mark flurries (a user submitting >= N jobs within
                          SECONDS, default 3600) and report metrics with and
                          without them (default: off)

Schedulers:
  -s, --scheduler LIST    comma-separated NAME[:knob=value...] (default:
                          easy,easy++). Presets: fcfs, easy, easy-pred,
                          easy-pcor, easy+, easy-sjbf, easy++, perfect,
                          perfect++, x2, sjf, conservative, site (the
                          plugin's defaults: easy++ with a guard and a
                          guarded history), and selective reservations:
                          sel, sel-d (EASY's planning), sel++, sel-d++
                          (easy++'s), thresholds derived from a conservative
                          run (docs/selective-reservations.md)
      --scheduler-file FILE
                          more schedulers, one spec a line (blank lines and
                          lines starting with # are skipped; - reads
                          standard input), after those of --scheduler (the
                          default list only when neither is given)
  Knobs (override every preset; a knob inside a scheduler spec wins):
      --plan estimate|prediction|runtime    planning values
      --estimate-factor F                   multiply estimates (x2: 2)
      --correction none|estimate|gradual|exponential
      --backfill none|fcfs|sjbf             backfill order
      --sjbf yes|no                         backfill=sjbf or backfill=fcfs
      --queue-order fcfs|sjf|creasy         queue order (sjf: by estimate;
                                            creasy: criticality + seniority)
      --creasy-alpha X                      queue-order=creasy: weight of the
                                            criticality, 0..1e9 (6000)
      --reservations N|all                  reservation depth (easy: 1)
      --safe yes|no                         safe backfill (default no)
  Selective reservations (Srinivasan et al.; docs/selective-reservations.md):
      --selective off|X|SN/SW/LN/LW|derive|derive-d|adaptive|adaptive-d
                                            a blocked job is reserved only once
                                            (wait + planning value) / planning
                                            value >= its threshold: one for all
                                            (X >= 1), one per category, derived
                                            from a conservative run of the log
                                            (average bsld of jobs whose runtime
                                            is within 2x their estimate), or
                                            sel-scale x the running average
                                            bsld of finished jobs (off)
      --sel-scale F                         adaptive: the scale, 0.01..1000 (1)
      --sel-derive conservative|own         derive: from conservative planned
                                            with estimates (the paper's), or
                                            as this scheduler plans
                                            (conservative)
      --sel-short SECONDS                   Sel-D: short if the planning value is
                                            at most this (3600)
      --sel-narrow N                        Sel-D: narrow if at most N wide (8)
  Guards (off in the paper's presets; docs/guard.md):
      --safe-after SECONDS|off              safe backfill around a head that has
                                            waited this long (off)
      --safe-after-delay SECONDS|off        ... whose reservation moved this far
                                            past its first one (off)
      --safe-after-xfactor X|off            ... whose (wait + prediction) /
                                            prediction reached X (off)
      --max-delay SECONDS|off               backfill around the head only jobs
                                            whose estimate ends by its first
                                            reservation + SECONDS (off; site:
                                            86400)
  Predictor:
      --predictor history|ewma|regression   how the history becomes a prediction:
                                            the paper's (history), a moving
                                            average, or runtime ~ estimate
                                            least squares (history)
      --window N                            predictor history, 1..30 (2)
      --metric avg|median|min|max           predictor=history (avg)
      --ewma-alpha X                        predictor=ewma: weight of the
                                            latest runtime, 0 < X <= 1 (0.5)
      --history-type all|immediate|extended (all)
      --fullness full|partial               (full)
      --fallback estimate|relative          (estimate)
      --rounding up|down                    an average's whole seconds (up)
      --propagation yes|no                  re-predict a user's waiting jobs when
                                            the user's history changes (yes)
      --prediction-floor SECONDS|off        no prediction below this (off)
      --learn all|completed                 learn every finished job, or only
                                            those that completed normally (SWF
                                            status 1) (all; site: completed)
      --learn-min-runtime SECONDS           learn only runtimes of at least this
                                            (0; site: 60)
      --history-ttl SECONDS|off             forget a user idle this long (off)

Verdicts:
      --shake N[:X%]      also replay N perturbed copies of the workload per
                          scheduler (N >= 2): offered load scaled evenly over
                          +-X% (default 1%) around the replayed load; report
                          every metric's mean, sd, min, max, 95% confidence
                          interval, and in how many copies each scheduler
                          beats the first on wait and bsld (copies are the
                          same for every scheduler: paired); with
                          --feedback each copy is replayed closed-loop and
                          throughput and jobs per session get a spread too
      --shake-jitter SECONDS
                          with --shake: also move each submit time by a
                          random whole number of seconds in +-SECONDS (0)
      --shake-seed S      with --shake-jitter: the random seed (1)
      --threads N         replays run at once by --shake and --csv (default:
                          the cores this process may use)
      --top-users N       users in the per-user table, most jobs first (10;
                          0: none; --json has them all)
      --report DIR        also write DIR/index.html, one self-contained page
                          of charts (needs python3-matplotlib), and the data
                          behind it, DIR/report.json

Metrics:
      --warmup FRACTION   first fraction of terminations not measured (0.01)
      --short-threshold SECONDS   short/long boundary (3600)
      --narrow-threshold N        narrow/wide boundary (8)
      --fairness, --no-fairness   compute, or not, fairness by fair start
                          time (Srinivasan et al.: who started after the
                          start FCFS would have given it at its arrival).
                          Default: when a scheduler compared uses selective
                          reservations. Its cost grows with the queue: a FCFS
                          replay of the queue ahead of each arrival (RICC:
                          about 10 s of CPU, 20 times the replay). Not with
                          --csv (no fairness columns)

Output:
      --parse-only        read and check the workload, replay nothing: the
                          input summary (and, with --json, the process's CPU
                          time): the floor a replay's cost is compared with
      --json              one JSON document instead of the table
      --csv               one CSV row of figures per scheduler instead of the
                          table, in the order given, each printed once it is
                          replayed; replays run --threads at a time and keep
                          only these figures (for sweeps of many settings:
                          settings that must replay alike replay once);
                          with --feedback five more columns: jobs_submitted,
                          jobs_not_submitted, throughput_per_hour, sessions,
                          avg_session_jobs
      --output-swf FILE   write the simulated schedule as SWF (wait times
                          filled in); with several schedulers FILE must
                          contain %s, replaced by the scheduler name
  -q, --quiet             no input diagnostics on standard error
  -h, --help              this help
  -V, --version           version

Exit status: 0 success, 2 bad usage or unusable input, 1 internal error.
)";

enum {
  OPT_LOAD = 1000, OPT_SIZE_FROM, OPT_DEFAULT_EST, OPT_CLIP, OPT_UNSORTED, OPT_MAX_JOBS,
  OPT_MAX_MALFORMED, OPT_FLURRIES, OPT_WARMUP, OPT_SHORT, OPT_NARROW, OPT_JSON, OPT_OUTPUT_SWF,
  OPT_SHAKE, OPT_SHAKE_JITTER, OPT_SHAKE_SEED, OPT_THREADS, OPT_TOP_USERS, OPT_REPORT,
  OPT_PASS_PER_EVENT, OPT_NO_CORRECTION_PASS, OPT_PARSE_ONLY, OPT_CSV, OPT_SCHEDULER_FILE,
  OPT_FEEDBACK, OPT_FAIRNESS, OPT_NO_FAIRNESS, OPT_KNOB_FIRST
};

// Every knob is also a long option (--window 3 is --scheduler easy++:window=3
// for all schedulers); the names come from the policy, so a new knob needs no
// edit here. Static: getopt keeps pointers to the names.
const std::vector<std::string>& knobs() {
  static const std::vector<std::string> names = knob_names();
  return names;
}

long long to_int(const char* opt, const char* v, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (errno || end == v || *end != '\0' || x < lo || x > hi)
    usage_error(std::string("bad value '") + v + "' for --" + opt + " (expected an integer from " +
                std::to_string(lo) + " to " + std::to_string(hi) + ")");
  return x;
}

double to_double(const char* opt, const char* v, double lo, double hi) {
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (errno || end == v || *end != '\0' || !std::isfinite(x) || x < lo || x > hi)
    usage_error(std::string("bad value '") + v + "' for --" + opt + " (expected a number from " +
                std::to_string(lo).substr(0, 6) + " to " + std::to_string(hi).substr(0, 8) + ")");
  return x;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (true) {
    const auto e = s.find(sep, b);
    out.push_back(s.substr(b, e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

// --shake N[:X%]: N copies, X the half-width of the load band in percent.
void parse_shake(const char* v, ShakeOptions& sh) {
  const std::string text(v);
  const auto colon = text.find(':');
  const std::string n = text.substr(0, colon);
  errno = 0;
  char* end = nullptr;
  const long long copies = std::strtoll(n.c_str(), &end, 10);
  if (errno || n.empty() || *end != '\0' || copies < 2 || copies > 100000)
    usage_error("bad value '" + text + "' for --shake (expected N[:X%], N copies from 2 to 100000)");
  sh.copies = unsigned(copies);
  if (colon == std::string::npos) return;
  std::string band = text.substr(colon + 1);
  if (!band.empty() && band.back() == '%') band.pop_back();
  errno = 0;
  const double x = std::strtod(band.c_str(), &end);
  if (errno || band.empty() || *end != '\0' || !std::isfinite(x) || x < 0 || x > 50)
    usage_error("bad band '" + text.substr(colon + 1) + "' for --shake (expected a percentage X, 0 <= X <= 50)");
  sh.band = x / 100.0;
}

}  // namespace

void usage_error(const std::string& msg) {
  std::cerr << "easypp-sim: " << msg << " (see --help)\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  std::vector<option> longopts = {
      {"workload", required_argument, nullptr, 'w'},
      {"procs", required_argument, nullptr, 'p'},
      {"scheduler", required_argument, nullptr, 's'},
      {"schedulers", required_argument, nullptr, 's'},
      {"load", required_argument, nullptr, OPT_LOAD},
      {"size-from", required_argument, nullptr, OPT_SIZE_FROM},
      {"default-estimate", required_argument, nullptr, OPT_DEFAULT_EST},
      {"clip-runtime", no_argument, nullptr, OPT_CLIP},
      {"pass-per-event", no_argument, nullptr, OPT_PASS_PER_EVENT},
      {"no-correction-pass", no_argument, nullptr, OPT_NO_CORRECTION_PASS},
      {"feedback", no_argument, nullptr, OPT_FEEDBACK},
      {"unsorted", required_argument, nullptr, OPT_UNSORTED},
      {"max-jobs", required_argument, nullptr, OPT_MAX_JOBS},
      {"max-malformed", required_argument, nullptr, OPT_MAX_MALFORMED},
      {"flurries", required_argument, nullptr, OPT_FLURRIES},
      {"warmup", required_argument, nullptr, OPT_WARMUP},
      {"short-threshold", required_argument, nullptr, OPT_SHORT},
      {"narrow-threshold", required_argument, nullptr, OPT_NARROW},
      {"fairness", no_argument, nullptr, OPT_FAIRNESS},
      {"no-fairness", no_argument, nullptr, OPT_NO_FAIRNESS},
      {"json", no_argument, nullptr, OPT_JSON},
      {"output-swf", required_argument, nullptr, OPT_OUTPUT_SWF},
      {"shake", required_argument, nullptr, OPT_SHAKE},
      {"shake-jitter", required_argument, nullptr, OPT_SHAKE_JITTER},
      {"shake-seed", required_argument, nullptr, OPT_SHAKE_SEED},
      {"threads", required_argument, nullptr, OPT_THREADS},
      {"top-users", required_argument, nullptr, OPT_TOP_USERS},
      {"report", required_argument, nullptr, OPT_REPORT},
      {"parse-only", no_argument, nullptr, OPT_PARSE_ONLY},
      {"csv", no_argument, nullptr, OPT_CSV},
      {"scheduler-file", required_argument, nullptr, OPT_SCHEDULER_FILE},
      {"quiet", no_argument, nullptr, 'q'},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, 'V'},
  };
  const int num_knobs = int(knobs().size());
  for (int k = 0; k < num_knobs; ++k)
    longopts.push_back({knobs()[k].c_str(), required_argument, nullptr, OPT_KNOB_FIRST + k});
  longopts.push_back({nullptr, 0, nullptr, 0});

  opterr = 0;
  bool jitter_given = false, seed_given = false;
  int c;
  while ((c = getopt_long(argc, argv, ":w:p:s:qhV", longopts.data(), nullptr)) != -1) {
    switch (c) {
      case 'w': o.workload = optarg; break;
      case 'p': o.wl.machine_procs = to_int("procs", optarg, 1, 1000000000); break;
      case 's': {
        o.schedulers.clear();
        o.schedulers_given = true;
        for (auto& s : split(optarg, ','))
          if (!s.empty()) o.schedulers.push_back(s);
        if (o.schedulers.empty()) usage_error("--scheduler needs at least one name");
        break;
      }
      case OPT_LOAD: o.wl.target_load = to_double("load", optarg, 0.01, 100); break;
      case OPT_SIZE_FROM:
        if (std::string(optarg) == "allocated") o.wl.size_from = SizeFrom::Allocated;
        else if (std::string(optarg) == "requested") o.wl.size_from = SizeFrom::Requested;
        else usage_error(std::string("bad value '") + optarg + "' for --size-from (expected allocated or requested)");
        break;
      case OPT_DEFAULT_EST:
        o.wl.default_estimate = to_int("default-estimate", optarg, 1, 10LL * 365 * 86400);
        break;
      case OPT_CLIP: o.wl.clip_runtime = true; break;
      case OPT_PASS_PER_EVENT: o.sim.pass_per_event = true; break;
      case OPT_NO_CORRECTION_PASS: o.sim.pass_after_correction = false; break;
      case OPT_FEEDBACK: o.sim.feedback = true; break;
      case OPT_UNSORTED:
        if (std::string(optarg) == "fail") o.wl.unsorted = UnsortedPolicy::Fail;
        else if (std::string(optarg) == "sort") o.wl.unsorted = UnsortedPolicy::Sort;
        else usage_error(std::string("bad value '") + optarg + "' for --unsorted (expected fail or sort)");
        break;
      case OPT_MAX_JOBS: o.wl.max_jobs = std::size_t(to_int("max-jobs", optarg, 1, 1LL << 40)); break;
      case OPT_MAX_MALFORMED:
        o.wl.reader.max_malformed = std::uint64_t(to_int("max-malformed", optarg, 0, 1LL << 40));
        break;
      case OPT_FLURRIES: {
        const auto parts = split(optarg, '/');
        if (parts.size() > 2) usage_error(std::string("bad value '") + optarg + "' for --flurries (expected N or N/SECONDS)");
        o.wl.flurry_jobs = std::uint32_t(to_int("flurries", parts[0].c_str(), 2, 100000000));
        if (parts.size() == 2) o.wl.flurry_window = to_int("flurries", parts[1].c_str(), 1, 365LL * 86400);
        o.flurries = true;
        break;
      }
      case OPT_WARMUP: o.metrics.warmup_fraction = to_double("warmup", optarg, 0, 0.99); break;
      case OPT_SHORT: o.metrics.short_threshold = to_int("short-threshold", optarg, 1, 10LL * 365 * 86400); break;
      case OPT_NARROW: o.metrics.narrow_threshold = to_int("narrow-threshold", optarg, 1, 1000000000); break;
      case OPT_JSON: o.json = true; break;
      case OPT_OUTPUT_SWF: o.output_swf = optarg; break;
      case OPT_SHAKE: parse_shake(optarg, o.shake); break;
      case OPT_SHAKE_JITTER:
        o.shake.jitter = to_int("shake-jitter", optarg, 0, 365LL * 86400);
        jitter_given = true;
        break;
      case OPT_SHAKE_SEED:
        o.shake.seed = std::uint64_t(to_int("shake-seed", optarg, 0, (1LL << 62)));
        seed_given = true;
        break;
      case OPT_THREADS:
        o.threads = o.shake.threads = unsigned(to_int("threads", optarg, 1, 4096));
        break;
      case OPT_TOP_USERS: o.top_users = std::size_t(to_int("top-users", optarg, 0, 1000000)); break;
      case OPT_REPORT:
        o.report_dir = optarg;
        if (o.report_dir.empty()) usage_error("--report needs a directory name");
        break;
      case OPT_PARSE_ONLY: o.parse_only = true; break;
      case OPT_FAIRNESS: o.fairness = 1; break;
      case OPT_NO_FAIRNESS: o.fairness = 0; break;
      case OPT_CSV: o.csv = true; break;
      case OPT_SCHEDULER_FILE:
        o.scheduler_file = optarg;
        if (o.scheduler_file.empty()) usage_error("--scheduler-file needs a file name");
        break;
      case 'q': o.quiet = true; break;
      case 'h': std::cout << kHelp; std::exit(0);
      case 'V': std::cout << "easypp-sim " PACKAGE_VERSION "\n"; std::exit(0);
      case ':': usage_error(std::string("option ") + argv[optind - 1] + " needs a value");
      case '?':
        // optopt: a short option's letter, or a long option's code when it
        // was given a value it takes none of (--feedback=yes): name it as typed.
        if (optopt >= OPT_LOAD)
          usage_error(std::string("option '") + argv[optind - 1] + "' takes no value");
        usage_error(std::string("unknown option '") + (optopt ? std::string("-") + char(optopt) : std::string(argv[optind - 1])) + "'");
      default:
        if (c >= OPT_KNOB_FIRST && c < OPT_KNOB_FIRST + num_knobs) {
          const char* key = knobs()[c - OPT_KNOB_FIRST].c_str();
          SchedulerConfig probe;  // validate now, so errors name the option
          std::string err = apply_knob(probe, key, optarg);
          if (!err.empty()) {
            // "bad value 'X' for window (...)" names the option: "for --window".
            const std::string knob = std::string(" for ") + key + " ";
            const auto at = err.find(knob);
            if (at != std::string::npos) err.insert(at + 5, "--");
            usage_error(err);
          }
          o.knobs.emplace_back(key, optarg);
          break;
        }
        usage_error("unexpected option");
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument '") + argv[optind] + "'");
  if (o.workload.empty())
    usage_error("--workload is required (an SWF file, - for standard input, synthetic, or model:FILE)");
  if (!o.output_swf.empty() && o.schedulers.size() > 1 && o.output_swf.find("%s") == std::string::npos)
    usage_error("--output-swf with several schedulers needs %s in the file name");
  if (!o.output_swf.empty()) o.wl.keep_records = true;
  if (o.parse_only && (!o.output_swf.empty() || o.shake.copies > 0 || !o.report_dir.empty()))
    usage_error("--parse-only replays nothing: no --output-swf, --shake or --report");
  if (o.csv && (o.json || !o.output_swf.empty() || o.shake.copies > 0 || !o.report_dir.empty() ||
                o.parse_only))
    usage_error("--csv prints figures only: no --json, --output-swf, --shake, --report or --parse-only");
  if (o.csv && o.fairness == 1)
    usage_error("--csv has no fairness columns: ask for --fairness with the table or --json");
  // A session site's draws belong to its jobs in submit order, which a
  // jitter would reorder (the load band keeps the order).
  if (o.sim.feedback && o.shake.jitter > 0 &&
      (o.workload == "sessions" || o.workload.rfind("sessions:", 0) == 0))
    usage_error("--shake-jitter does not apply to a sessions workload under --feedback (its users' "
                "draws follow the jobs' order; use the load band, or several seeds)");
  if ((jitter_given || seed_given) && o.shake.copies == 0)
    usage_error(std::string(jitter_given ? "--shake-jitter" : "--shake-seed") + " needs --shake N");
  if (o.shake.copies > 0 && o.shake.band == 0 && o.shake.jitter == 0)
    usage_error("--shake with a 0% band needs --shake-jitter SECONDS (otherwise every copy is the same)");
  return o;
}

std::vector<SchedulerConfig> schedulers(const Options& o) {
  std::vector<SchedulerConfig> out;
  if (!o.scheduler_file.empty() && !o.schedulers_given) {
    // Only the file's.
  } else {
    for (const std::string& spec : o.schedulers) {
      std::string err;
      auto c = parse_scheduler_spec(spec, o.knobs, &err);
      if (!c) usage_error(err);
      out.push_back(*c);
    }
  }
  if (o.scheduler_file.empty()) return out;
  std::ifstream file;
  std::istream* in = &std::cin;
  if (o.scheduler_file != "-") {
    file.open(o.scheduler_file);
    if (!file) usage_error("--scheduler-file " + o.scheduler_file + ": " + std::strerror(errno));
    in = &file;
  }
  std::string line;
  for (std::size_t n = 1; std::getline(*in, line); ++n) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    const auto e = line.find_last_not_of(" \t\r");
    std::string err;
    auto c = parse_scheduler_spec(line.substr(b, e - b + 1), o.knobs, &err);
    if (!c) usage_error(o.scheduler_file + ":" + std::to_string(n) + ": " + err);
    out.push_back(*c);
  }
  if (in->bad()) usage_error("--scheduler-file " + o.scheduler_file + ": read error");
  if (out.empty()) usage_error("--scheduler-file " + o.scheduler_file + ": no scheduler in it");
  return out;
}

bool fairness_wanted(const Options& o, const std::vector<SchedulerConfig>& cfgs) {
  if (o.fairness >= 0) return o.fairness == 1;
  for (const SchedulerConfig& c : cfgs)
    if (c.policy.selective.on()) return true;
  return false;
}

}  // namespace easypp::cli
