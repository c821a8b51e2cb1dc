// easypp-gen: write the seeded synthetic workload (the project's default
// workload, see docs/synthetic-workload.md) as an SWF file.
#include <getopt.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "config.h"
#include "easypp/sim/generator.h"
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
         "Exit status: 0 success; 2 bad usage, or FILE cannot be created; 1 write error\n"
         "or other failure.\n";
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

}  // namespace

int main(int argc, char** argv) {
  GeneratorConfig cfg;
  std::string output = "-";
  const option longopts[] = {
      {"seed", required_argument, nullptr, 's'},
      {"jobs", required_argument, nullptr, 'n'},
      {"procs", required_argument, nullptr, 'p'},
      {"users", required_argument, nullptr, 'u'},
      {"load", required_argument, nullptr, 'l'},
      {"max-estimate", required_argument, nullptr, 'm'},
      {"output", required_argument, nullptr, 'o'},
      {"help", no_argument, nullptr, 'h'},
      {"version", no_argument, nullptr, 'V'},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":s:n:p:u:l:m:o:hV", longopts, nullptr)) != -1) {
    switch (c) {
      case 's': set(cfg, "seed", optarg); break;
      case 'n': set(cfg, "jobs", optarg); break;
      case 'p': set(cfg, "procs", optarg); break;
      case 'u': set(cfg, "users", optarg); break;
      case 'l': set(cfg, "load", optarg); break;
      case 'm': set(cfg, "max-estimate", optarg); break;
      case 'o':
        if (*optarg == '\0') usage_error("--output needs a file name (or - for standard output)");
        output = optarg;
        break;
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

  try {
    swf::Header header;
    const std::vector<swf::Record> records = generate_records(cfg, &header);

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
  } catch (const std::bad_alloc&) {
    std::cerr << "easypp-gen: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "easypp-gen: " << e.what() << "\n";
    return 1;
  }
}
