// easypp-gen: write the seeded synthetic workload (the project's default
// workload, see docs/synthetic-workload.md) as an SWF file; or fit a Markov
// workload model to a log (--fit), generate from one (--model), and print
// how a model's workloads compare with a log (--validate; see
// docs/markov-model.md).
#include <getopt.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <exception>
#include <iostream>
#include <new>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include <jansson.h>

#include "config.h"
#include "easypp/sim/generator.h"
#include "easypp/sim/markov_model.h"
#include "easypp/sim/model_validation.h"
#include "easypp/sim/session_model.h"
#include "easypp/sim/swf.h"

using namespace easypp;

namespace {

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "easypp-gen: " << msg << " (see --help)\n";
  std::exit(2);
}

void print_help() {
  const GeneratorConfig d;
  std::cout
      << "Usage: easypp-gen [options]\n"
         "       easypp-gen --fit LOG [--output MODEL] [--validate [--seeds N] [--json]]\n"
         "       easypp-gen --model MODEL [--seed N] [--jobs N] [--thin N] [--output FILE]\n"
         "       easypp-gen --model MODEL --validate --against LOG [--seeds N] [--json]\n"
         "\n"
         "Write a seeded synthetic workload in the Standard Workload Format (SWF):\n"
         "users who resubmit similar jobs in sessions, round runtime estimates with\n"
         "the partition maximum the most popular, power-of-two biased sizes, a daily\n"
         "and weekly arrival cycle, and a chosen offered load. The same options give\n"
         "byte-identical output on every platform. The model is described in\n"
         "docs/synthetic-workload.md and easypp-gen(1).\n"
         "\n"
         "Options:\n"
         "  -s, --seed N              random seed, 0.." << UINT64_MAX << " (default " << d.seed << ")\n"
         "  -n, --jobs N              number of jobs, 1..10000000 (default " << d.jobs << ")\n"
         "  -p, --procs N             machine size in processors, 1..100000000\n"
         "                            (default " << d.procs << ")\n"
         "  -u, --users N             number of users, 1..1000000 (default " << d.users << ")\n"
         "  -l, --load X              offered load sum(size*runtime) / (procs * (last\n"
         "                            submit - first submit)), 0 < X <= 10 (default "
      << d.load << ")\n"
         "  -m, --max-estimate SECONDS\n"
         "                            partition time limit: the largest and most\n"
         "                            popular estimate, 60..31536000 (default "
      << d.max_estimate << ")\n"
         "  -o, --output FILE|-       write to FILE; \"-\" is standard output (default -)\n"
         "  -h, --help                this help\n"
         "  -V, --version             version\n"
         "\n"
         "The same workload is available to easypp-sim as\n"
         "  --workload synthetic:seed=N,jobs=N,procs=N,users=N,load=X,max-estimate=S\n"
         "\n"
         "A Markov workload model fitted to a log (Krampe, Lepping and Sieben 2008:\n"
         "states are size classes 2^floor(log2 size), transitions between consecutive\n"
         "jobs, interarrival, runtime and estimate-runtime distributions per\n"
         "transition; plus users who repeat their jobs as on the log):\n"
         "      --fit LOG             fit a model to LOG (SWF, plain or gzip; - is\n"
         "                            standard input) and write it as JSON to --output\n"
         "      --model FILE          read a model (JSON) and write a workload drawn\n"
         "                            from it as SWF (--seed; --jobs, default: as many\n"
         "                            as the fitted log)\n"
         "      --thin N              keep every N-th state of the chain, 1..1000\n"
         "                            (default: the model's, 1; the paper used 10)\n"
         "      --validate            print how workloads drawn from the model compare\n"
         "                            with the log: distributions, correlations,\n"
         "                            underestimates, users, and EASY / EASY++ results\n"
         "                            (the model or workload is then written only with\n"
         "                            --output)\n"
         "      --against LOG         the log to validate against (default with --fit:\n"
         "                            the fitted one; required with --model)\n"
         "      --seeds N             workloads drawn for --validate, seeds --seed ..\n"
         "                            --seed+N-1, 1..1000 (default 5)\n"
         "      --scheduler LIST      schedulers replayed by --validate, as easypp-sim\n"
         "                            --scheduler (default easy,easy++)\n"
         "      --json                --validate prints JSON instead of the table\n"
         "      --sessions SPEC       write the user-session model's site instead\n"
         "                            (Shmueli and Feitelson; docs/closed-loop.md):\n"
         "                            SPEC is seed=N,users=N,days=N,procs=N,\n"
         "                            max-estimate=S,cont-max=X,cont-slope=X,\n"
         "                            day-share=X,weekday-share=X (any, in any order;\n"
         "                            \"\" for the defaults); the times are those of an\n"
         "                            empty machine, fields 17 and 18 link the batches\n"
         "                            (replay with easypp-sim --feedback; for users who\n"
         "                            react to the replay's response times use\n"
         "                            easypp-sim --workload sessions:SPEC --feedback)\n"
         "A model's workload is also available to easypp-sim as\n"
         "  --workload model:FILE[:seed=N,jobs=N,thin=N]\n"
         "\n"
         "Exit status: 0 success; 2 bad usage, an unreadable or invalid log or model\n"
         "(one line: file, line, field), or FILE cannot be created; 1 write error or\n"
         "other failure.\n";
}

/// Set one generator parameter from an option value, through the same parser
/// (and limits) as easypp-sim's "--workload synthetic:key=value".
void set(GeneratorConfig& cfg, const char* key, const char* value) {
  const std::string v = value;
  std::string err;
  if (v.find_first_of(",=") == std::string::npos &&
      parse_generator_spec(std::string(key) + "=" + v, cfg, &err))
    return;
  // "bad value 'V' for KEY (expected ...)" -> "bad value 'V' for --KEY (expected ...)"
  const std::string prefix = "bad value '" + v + "' for " + key;
  if (err.compare(0, prefix.size(), prefix) == 0)
    usage_error("bad value '" + v + "' for --" + key + err.substr(prefix.size()));
  usage_error("bad value '" + v + "' for --" + key + (err.empty() ? "" : ": " + err));
}

enum {
  OPT_FIT = 1000, OPT_MODEL, OPT_THIN, OPT_VALIDATE, OPT_AGAINST, OPT_SEEDS, OPT_SCHEDULER, OPT_JSON,
  OPT_SESSIONS
};

std::uint64_t to_uint(const char* opt, const char* v, std::uint64_t lo, std::uint64_t hi) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (errno || end == v || *end != '\0' || *v == '-' || x < lo || x > hi)
    usage_error(std::string("bad value '") + v + "' for --" + opt + " (expected an integer " +
                std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return x;
}

// The validation table: one row per figure, the log's value, the drawn
// workloads' mean +- standard deviation, their range, and the difference.
void print_validation(std::ostream& os, const Validation& v) {
  os << "Markov model " << v.model_source << " against " << v.log_source << ": "
     << v.seeds.size() << " drawn workloads (seeds " << v.seeds.front() << ".." << v.seeds.back()
     << "), as many jobs as the log\n";
  os << "diff: (model mean - log) / |log|; KS: Kolmogorov-Smirnov distance to the log's distribution\n\n";
  auto fmt = [](double x) {
    std::ostringstream o;
    const double a = std::fabs(x);
    o << std::fixed << std::setprecision(a >= 1000 ? 0 : a >= 10 ? 1 : 3) << x;
    return o.str();
  };
  os << std::left << std::setw(16) << "group" << std::setw(42) << "figure" << std::right
     << std::setw(12) << "log" << std::setw(24) << "model (mean +- sd)" << std::setw(24)
     << "min .. max" << std::setw(9) << "diff" << "\n";
  std::string group;
  for (const ValidationRow& r : v.rows) {
    double mean = 0, sq = 0, lo = r.model.empty() ? 0 : r.model[0], hi = lo;
    for (double x : r.model) mean += x, lo = std::min(lo, x), hi = std::max(hi, x);
    mean /= double(std::max<std::size_t>(r.model.size(), 1));
    for (double x : r.model) sq += (x - mean) * (x - mean);
    const double sd = r.model.size() > 1 ? std::sqrt(sq / double(r.model.size() - 1)) : 0;
    std::string diff = "-";
    if (!r.distance && r.log != 0) {
      std::ostringstream o;
      o << std::showpos << std::fixed << std::setprecision(1) << 100.0 * (mean - r.log) / std::fabs(r.log) << "%";
      diff = o.str();
    }
    os << std::left << std::setw(16) << (r.group == group ? "" : r.group) << std::setw(42) << r.name
       << std::right << std::setw(12) << (r.distance ? "-" : fmt(r.log)) << std::setw(24)
       << (fmt(mean) + " +- " + fmt(sd)) << std::setw(24) << (fmt(lo) + " .. " + fmt(hi))
       << std::setw(9) << diff << "\n";
    group = r.group;
  }
}

json_t* validation_json(const Validation& v) {
  json_t* root = json_object();
  json_object_set_new(root, "model", json_string(v.model_source.c_str()));
  json_object_set_new(root, "log", json_string(v.log_source.c_str()));
  json_t* seeds = json_array();
  for (auto s : v.seeds) json_array_append_new(seeds, json_integer(json_int_t(s)));
  json_object_set_new(root, "seeds", seeds);
  json_t* rows = json_array();
  for (const ValidationRow& r : v.rows) {
    json_t* o = json_object();
    json_object_set_new(o, "group", json_string(r.group.c_str()));
    json_object_set_new(o, "figure", json_string(r.name.c_str()));
    json_object_set_new(o, "distance", json_boolean(r.distance));
    if (!r.distance) json_object_set_new(o, "log", json_real(r.log));
    json_t* m = json_array();
    for (double x : r.model) json_array_append_new(m, json_real(x));
    json_object_set_new(o, "model", m);
    json_array_append_new(rows, o);
  }
  json_object_set_new(root, "rows", rows);
  return root;
}

/// Write records as SWF to `output` ("-": standard output). Returns the exit status.
int write_swf(const std::string& output, const swf::Header& header, const std::vector<swf::Record>& records) {
  FILE* out = stdout;
  const bool to_file = output != "-";
  if (to_file) {
    out = std::fopen(output.c_str(), "w");
    if (!out) {
      std::cerr << "easypp-gen: cannot write " << output << ": " << std::strerror(errno) << "\n";
      return 2;
    }
  }
  std::string buf = swf::format_header(header);
  bool ok = true;
  for (const swf::Record& r : records) {
    buf += swf::format_record(r);
    buf += '\n';
    if (buf.size() >= (1 << 16)) {
      ok = ok && std::fwrite(buf.data(), 1, buf.size(), out) == buf.size();
      buf.clear();
    }
  }
  ok = ok && std::fwrite(buf.data(), 1, buf.size(), out) == buf.size();
  ok = (std::fflush(out) == 0) && ok && !std::ferror(out);
  const int saved = errno;
  if (to_file && std::fclose(out) != 0) ok = false;
  if (!ok) {
    std::cerr << "easypp-gen: cannot write " << (to_file ? output : std::string("standard output"))
              << ": " << std::strerror(saved ? saved : EIO) << "\n";
    if (to_file) std::remove(output.c_str());
    return 1;
  }
  return 0;
}

Workload read_log(const std::string& path) {
  try {
    return load_workload(path, WorkloadOptions{});
  } catch (const swf::Error& e) {
    std::cerr << "easypp-gen: " << e.what() << "\n";
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  GeneratorConfig cfg;
  std::string output = "-";
  bool output_given = false;
  std::string fit_log, model_file, against;
  bool validate = false, json = false;
  std::uint32_t seeds = 5, thin = 0;
  std::uint64_t model_jobs = 0;
  std::vector<std::string> schedulers;
  std::vector<std::string> synthetic_only;  // options given that only the built-in generator takes
  bool seeds_given = false;
  std::string sessions_spec;
  bool sessions = false;
  const option longopts[] = {
      {"seed", required_argument, nullptr, 's'},
      {"jobs", required_argument, nullptr, 'n'},
      {"procs", required_argument, nullptr, 'p'},
      {"users", required_argument, nullptr, 'u'},
      {"load", required_argument, nullptr, 'l'},
      {"max-estimate", required_argument, nullptr, 'm'},
      {"output", required_argument, nullptr, 'o'},
      {"fit", required_argument, nullptr, OPT_FIT},
      {"model", required_argument, nullptr, OPT_MODEL},
      {"thin", required_argument, nullptr, OPT_THIN},
      {"validate", no_argument, nullptr, OPT_VALIDATE},
      {"against", required_argument, nullptr, OPT_AGAINST},
      {"seeds", required_argument, nullptr, OPT_SEEDS},
      {"scheduler", required_argument, nullptr, OPT_SCHEDULER},
      {"json", no_argument, nullptr, OPT_JSON},
      {"sessions", required_argument, nullptr, OPT_SESSIONS},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, 'V'},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":s:n:p:u:l:m:o:hV", longopts, nullptr)) != -1) {
    switch (c) {
      case 's': set(cfg, "seed", optarg); break;
      case 'n':
        set(cfg, "jobs", optarg);
        model_jobs = cfg.jobs;
        break;
      case 'p': set(cfg, "procs", optarg); synthetic_only.push_back("--procs"); break;
      case 'u': set(cfg, "users", optarg); synthetic_only.push_back("--users"); break;
      case 'l': set(cfg, "load", optarg); synthetic_only.push_back("--load"); break;
      case 'm': set(cfg, "max-estimate", optarg); synthetic_only.push_back("--max-estimate"); break;
      case 'o':
        if (*optarg == '\0') usage_error("--output needs a file name (or - for standard output)");
        output = optarg;
        output_given = true;
        break;
      case OPT_SESSIONS:
        sessions_spec = optarg;
        sessions = true;
        break;
      case OPT_FIT:
        if (*optarg == '\0') usage_error("--fit needs a log file name (or - for standard input)");
        fit_log = optarg;
        break;
      case OPT_MODEL:
        if (*optarg == '\0') usage_error("--model needs a model file name");
        model_file = optarg;
        break;
      case OPT_THIN: thin = std::uint32_t(to_uint("thin", optarg, 1, 1000)); break;
      case OPT_VALIDATE: validate = true; break;
      case OPT_AGAINST:
        if (*optarg == '\0') usage_error("--against needs a log file name");
        against = optarg;
        break;
      case OPT_SEEDS:
        seeds = std::uint32_t(to_uint("seeds", optarg, 1, 1000));
        seeds_given = true;
        break;
      case OPT_SCHEDULER: {
        schedulers.clear();
        std::string list = optarg, item;
        std::istringstream in(list);
        while (std::getline(in, item, ','))
          if (!item.empty()) schedulers.push_back(item);
        if (schedulers.empty()) usage_error("--scheduler needs at least one name");
        for (const std::string& spec : schedulers) {
          std::string err;
          if (!parse_scheduler_spec(spec, {}, &err)) usage_error("--scheduler: " + err);
        }
        break;
      }
      case OPT_JSON: json = true; break;
      case 'h': print_help(); return 0;
      case 'V': std::cout << "easypp-gen (" PACKAGE_NAME ") " PACKAGE_VERSION "\n"; return 0;
      case ':':
        usage_error(std::string("option ") + argv[optind - 1] + " needs a value");
      default:
        if (optopt)
          usage_error(std::string("unknown option -") + char(optopt));
        usage_error(std::string("unknown option ") + argv[optind - 1]);
    }
  }
  if (optind < argc) usage_error(std::string("unexpected argument '") + argv[optind] + "'");

  const bool markov = !fit_log.empty() || !model_file.empty();
  if (sessions) {
    if (markov) usage_error("--sessions excludes --fit and --model");
    if (!synthetic_only.empty() || model_jobs || cfg.seed != GeneratorConfig().seed)
      usage_error("--sessions takes its settings in its SPEC (seed=N,users=N,...), not as options");
    SessionModelConfig sc;
    std::string err;
    if (!parse_session_spec(sessions_spec, sc, &err)) usage_error("--sessions: " + err);
    WorkloadOptions wo;
    wo.keep_records = true;
    const Workload w = generate_session_workload(sc, wo);
    return write_swf(output, w.header, w.records);
  }
  if (!fit_log.empty() && !model_file.empty()) usage_error("--fit and --model exclude each other");
  if (markov && !synthetic_only.empty())
    usage_error(synthetic_only.front() + " is an option of the built-in generator, not of --fit or --model");
  // Options of the model's modes, in the order the help lists them.
  const std::pair<const char*, bool> model_options[] = {
      {"--thin", thin != 0},          {"--validate", validate},
      {"--against", !against.empty()}, {"--seeds", seeds_given},
      {"--scheduler", !schedulers.empty()}, {"--json", json},
  };
  for (const auto& [name, given] : model_options) {
    if (given && !markov) usage_error(std::string(name) + " needs --fit LOG or --model FILE");
    const bool validation_only = std::string(name) != "--thin" && std::string(name) != "--validate";
    if (given && markov && validation_only && !validate) usage_error(std::string(name) + " needs --validate");
  }
  if (!fit_log.empty() && model_jobs) usage_error("--jobs applies to --model (a fitted model draws as many jobs as its log)");
  if (!model_file.empty() && validate && against.empty())
    usage_error("--validate with --model needs --against LOG (the log to compare with)");

  if (markov) {
    try {
      MarkovModel model;
      std::string model_name;
      Workload fitted;
      if (!fit_log.empty()) {
        fitted = read_log(fit_log);
        if (fitted.jobs.size() < 2) {
          std::cerr << "easypp-gen: " << fit_log << ": a model needs at least two jobs\n";
          return 2;
        }
        MarkovModel fresh = fit_markov_model(fitted);
        fresh.fitted_by = "easypp-gen " PACKAGE_VERSION;
        // What is used is what the file says: the model goes through its text.
        model_name = output == "-" ? "(fitted to " + fit_log + ")" : output;
        model = parse_markov_model(markov_model_json(fresh), model_name);
        if (!validate || output_given) write_markov_model(output, model);
        std::cerr << "easypp-gen: fitted to " << fit_log << ": " << model.states.size() << " states, "
                  << model.transitions.size() << " transitions, " << model.users.users << " users"
                  << (validate && !output_given ? "" : ", written to " + (output == "-" ? std::string("standard output") : output))
                  << "\n";
      } else {
        model = read_markov_model(model_file);
        model_name = model_file;
        if (!validate || output_given) {
          ModelGenConfig g;
          g.seed = cfg.seed;
          g.jobs = model_jobs;
          g.thin = thin;
          swf::Header header;
          const std::vector<swf::Record> records = generate_from_model(model, g, &header);
          const int st = write_swf(output, header, records);
          if (st != 0) return st;
        }
      }
      if (validate) {
        const Workload log = !against.empty() ? read_log(against) : std::move(fitted);
        if (thin) model.thin = thin;
        ValidationOptions vo;
        vo.first_seed = cfg.seed;
        vo.seeds = seeds;
        if (!schedulers.empty()) vo.schedulers = schedulers;
        const Validation v = validate_model(model, model_name, log, vo);
        if (json) {
          json_t* doc = validation_json(v);
          char* text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
          json_decref(doc);
          if (!text) throw std::runtime_error("cannot format the validation as JSON");
          std::cout << text << "\n";
          std::free(text);
        } else {
          print_validation(std::cout, v);
        }
        std::cout.flush();
        if (!std::cout) {
          std::cerr << "easypp-gen: cannot write standard output\n";
          return 1;
        }
      }
      return 0;
    } catch (const ModelError& e) {
      std::cerr << "easypp-gen: " << e.what() << "\n";
      return 2;
    } catch (const ModelWriteError& e) {
      std::cerr << "easypp-gen: " << e.what() << "\n";
      return e.created ? 1 : 2;
    } catch (const std::bad_alloc&) {
      std::cerr << "easypp-gen: out of memory\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "easypp-gen: " << e.what() << "\n";
      return 1;
    }
  }

  try {
    swf::Header header;
    const std::vector<swf::Record> records = generate_records(cfg, &header);
    return write_swf(output, header, records);
  } catch (const std::bad_alloc&) {
    std::cerr << "easypp-gen: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "easypp-gen: " << e.what() << "\n";
    return 1;
  }
}
