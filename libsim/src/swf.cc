// SWF reader and writer (see easypp/swf.h).
//
// The reader pulls 256 KiB blocks out of zlib (gzread reads plain files
// unchanged, so one code path serves both), finds line ends with memchr and
// parses each job line in a single pass with a hand-written number parser.
// Only the current line is ever held in memory; a line that does not fit in
// the block buffer grows it, up to kMaxLineBytes, beyond which the line is
// streamed past and reported instead of being held. A gzip-compressed regular
// file is inflated by a background thread a few blocks ahead of the parser
// (Inflater), as inflating costs about as much as parsing.
#include "easypp/sim/swf.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>

namespace easypp::swf {

namespace {

constexpr std::size_t kBlock = 256 * 1024;
/// A job line longer than this is not an SWF record (a real one is < 200
/// bytes); it is skipped without being held in memory.
constexpr std::size_t kMaxLineBytes = 16u * 1024 * 1024;
/// Submit times (field 2) beyond this (about 34,800 years) are absurd and
/// would overflow the simulator's clock arithmetic.
constexpr std::int64_t kMaxSubmit = std::int64_t{1} << 40;
/// The largest value of a fractional field (7 memory, 10 requested memory),
/// as for a number written with a fraction (parse_number): a double beyond it
/// (INT64_MAX becomes 2^63) would be written back as a number that overflows.
constexpr std::int64_t kMaxReal = 9200000000000000000;

const char* const kFieldNames[19] = {
    "line",             "job number",        "submit time",     "wait time",
    "run time",         "allocated processors", "average CPU time", "used memory",
    "requested processors", "requested time", "requested memory", "status",
    "user id",          "group id",          "executable number", "queue number",
    "partition number", "preceding job",     "think time"};

inline bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

inline bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

/// A token quoted for a message: printable ASCII kept, the rest escaped,
/// long tokens cut.
std::string quote(const char* b, const char* e) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  std::size_t n = 0;
  for (const char* p = b; p < e; ++p, ++n) {
    if (n == kMax) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  out += "'";
  return out;
}

std::string num_str(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

enum class NumKind { Int, Frac, NotNumber, NotFinite, Overflow };

struct Num {
  std::int64_t i = 0;  // Int: the value; Frac: unused
  double d = 0;        // always the value
};

const double kPow10[19] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                           1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

/// Parses the token starting at p (not whitespace) and advances p past it
/// (to the next whitespace or e). Integers take the fast path; decimals are
/// exact enough for SWF (two decimals at most in the archive); exponents and
/// the rest go through strtod.
NumKind parse_number(const char*& p, const char* e, Num& out) {
  const char* tok = p;
  bool neg = false;
  if (*p == '-' || *p == '+') {
    neg = *p == '-';
    ++p;
  }
  const char* digits = p;
  while (p < e && *p == '0') ++p;
  const char* sig = p;
  std::uint64_t v = 0;
  while (p < e && is_digit(*p)) {
    v = v * 10 + static_cast<unsigned>(*p - '0');
    ++p;
    if (p - sig > 19) {  // more than 19 significant digits: not an int64
      while (p < e && !is_ws(*p)) ++p;
      return NumKind::Overflow;
    }
  }
  bool int_digits = p > digits;
  if (p == e || is_ws(*p)) {
    if (!int_digits) return NumKind::NotNumber;  // "-" or "+"
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return NumKind::Overflow;
    out.i = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    out.d = static_cast<double>(out.i);
    return NumKind::Int;
  }
  if (!int_digits && !(*p == '.')) {
    // nan / inf / infinity, any case, or plain garbage.
    const char* t = p;
    while (p < e && !is_ws(*p)) ++p;
    std::string_view word(t, static_cast<std::size_t>(p - t));
    if (iequals(word, "nan") || iequals(word, "inf") || iequals(word, "infinity"))
      return NumKind::NotFinite;
    return NumKind::NotNumber;
  }
  if (*p == '.') {
    ++p;
    const char* f0 = p;
    std::uint64_t f = 0;
    int fd = 0;
    while (p < e && is_digit(*p)) {
      if (fd < 18) {
        f = f * 10 + static_cast<unsigned>(*p - '0');
        ++fd;
      }
      ++p;
    }
    bool frac_digits = p > f0;
    if (!int_digits && !frac_digits) {  // "." or "-."
      while (p < e && !is_ws(*p)) ++p;
      return NumKind::NotNumber;
    }
    if (p == e || is_ws(*p)) {
      double d = static_cast<double>(v) + static_cast<double>(f) / kPow10[fd];
      if (d > 9.2e18) return NumKind::Overflow;
      out.d = neg ? -d : d;
      if (f == 0) {  // "12.00": an integer after all
        out.i = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
        return NumKind::Int;
      }
      return NumKind::Frac;
    }
  }
  // An exponent ("1.5e3"), or garbage: the slow path.
  while (p < e && !is_ws(*p)) ++p;
  std::string s(tok, p);
  if (s.find_first_of("eE") == std::string::npos ||
      s.find_first_not_of("0123456789+-.eE") != std::string::npos)
    return NumKind::NotNumber;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return NumKind::NotNumber;
  if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return NumKind::Overflow;
  out.d = d;
  if (d == std::floor(d)) {
    out.i = static_cast<std::int64_t>(d);
    return NumKind::Int;
  }
  return NumKind::Frac;
}

/// "; Key: value" -> key, value. The key is one word (letters, digits, '_',
/// '-', '.'), the colon is followed by whitespace or the end of the line, so
/// "; http://..." and "; job<=14 (...)" are plain comments.
bool parse_header_line(const char* p, const char* e, std::string& key, std::string& value) {
  while (p < e && is_ws(*p)) ++p;
  const char* k0 = p;
  while (p < e && (std::isalnum(static_cast<unsigned char>(*p)) || *p == '_' || *p == '-' || *p == '.'))
    ++p;
  const char* k1 = p;
  if (k1 == k0) return false;
  while (p < e && is_ws(*p)) ++p;
  if (p == e || *p != ':') return false;
  ++p;
  if (p < e && !is_ws(*p)) return false;
  while (p < e && is_ws(*p)) ++p;
  while (e > p && is_ws(*(e - 1))) --e;
  key.assign(k0, k1);
  value.assign(p, e);
  return true;
}

/// The header keys easypp reads as integers (the Header accessors).
bool integer_key(std::string_view key) {
  for (const char* k : {"MaxProcs", "MaxNodes", "MaxRuntime", "MaxJobs", "UnixStartTime"})
    if (iequals(key, k)) return true;
  return false;
}

enum class HeaderInt { Int, NoValue, NotInt };

/// A header value read as an integer: an optional sign and digits, then the
/// end or whitespace and a comment ("1664 (72, 1368, 224)"). A value without
/// any digit ("N/A", "-", empty) is NoValue; anything else with a digit in it
/// ("1e3", "12.5", "128s", an overflow) is NotInt, never a leading part of it.
HeaderInt header_int(std::string_view v, std::int64_t* out) {
  const char* p = v.data();
  const char* e = p + v.size();
  while (p < e && is_ws(*p)) ++p;
  const char* num = p;
  if (p < e && *p == '+') ++p;  // from_chars takes '-' but not '+'
  std::int64_t x = 0;
  const auto r = std::from_chars(p, e, x);
  if (r.ec == std::errc() && (r.ptr == e || is_ws(*r.ptr)) && !(num < p && *p == '-')) {
    *out = x;
    return HeaderInt::Int;
  }
  return std::any_of(v.begin(), v.end(), is_digit) ? HeaderInt::NotInt : HeaderInt::NoValue;
}

}  // namespace

const char* field_name(int field) {
  if (field < 0 || field > 18) return "unknown field";
  return kFieldNames[field];
}

// ---------------------------------------------------------------- Header

std::optional<std::string> Header::get(std::string_view key) const {
  for (const auto& kv : entries)
    if (iequals(kv.first, key)) return kv.second;
  return std::nullopt;
}

std::optional<std::int64_t> Header::get_int(std::string_view key) const {
  auto v = get(key);
  std::int64_t out = 0;
  if (!v || header_int(*v, &out) != HeaderInt::Int) return std::nullopt;
  return out;
}

// ---------------------------------------------------------------- Diagnostic

std::string Diagnostic::format() const {
  std::string s;
  if (!file.empty()) {
    s += file;
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
  } else if (line > 0) {
    s += "line " + std::to_string(line) + ": ";
  }
  if (field > 0) {
    s += "field " + std::to_string(field) + " (" + field_name(field) + "): ";
  }
  s += message;
  return s;
}

Error::Error(Diagnostic d) : std::runtime_error(d.format()), d_(std::move(d)) {}

// ---------------------------------------------------------------- Reader

struct Reader::Impl {
  std::string path;
  std::string name;  // for messages: the path, or "<stdin>"
  ReaderOptions opt;
  gzFile gz = nullptr;
  std::vector<char> buf;
  std::size_t beg = 0, end = 0;  // unprocessed bytes
  bool eof = false;
  bool discarding = false;  // inside an over-long line, skipping to its end
  bool seen_record = false;
  std::uint64_t line_no = 0;
  Header header;
  ReaderStats stats;
  std::vector<Diagnostic> diags;
  bool rounded_noted[19] = {};
  bool unknown_noted[19] = {};
  std::int64_t lo[18], hi[18];  // valid values of each field
  class Inflater;
  std::unique_ptr<Inflater> inflater;  // background decompression, or null

  ~Impl();

  void open();
  void set_limits();
  std::string range_message(int field, double value) const;
  void fill();
  bool process(const char* b, const char* e, Record& rec);
  void check_header(const std::string& key, const std::string& value);
  void made_unknown(int field, const std::string& what);
  void note(std::uint64_t line, int field, std::string msg);
  void malformed(std::uint64_t& counter, std::uint64_t line, int field, std::string msg);
  [[noreturn]] void fail(std::uint64_t line, std::string msg) {
    throw Error(Diagnostic{name, line, 0, std::move(msg)});
  }
};

void Reader::Impl::open() {
  int fd;
  if (path == "-") {
    fd = ::dup(0);
    if (fd < 0) fail(0, std::string("cannot read standard input: ") + std::strerror(errno));
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      fail(0, "cannot read: is a directory");
    }
  }
  gz = gzdopen(fd, "rb");
  if (!gz) {
    ::close(fd);
    fail(0, "cannot open: out of memory (zlib)");
  }
  gzbuffer(gz, kBlock);
  buf.resize(2 * kBlock);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && gzdirect(gz) == 0) {
    try {
      inflater = std::make_unique<Inflater>(gz);
    } catch (const std::system_error&) {
      // No thread available: inflate in the reading thread instead.
    }
  }
}

/// What one read from zlib gave: bytes, or the end, or an error.
struct ReadResult {
  int n = 0;
  int err = Z_OK;
  int sys_errno = 0;
  std::string msg;
};

static ReadResult gz_read_block(gzFile gz, char* dst, unsigned len) {
  ReadResult r;
  r.n = gzread(gz, dst, len);
  int sys = errno;
  const char* m = gzerror(gz, &r.err);
  if (r.n < 0 || (r.err != Z_OK && r.err != Z_STREAM_END)) {
    if (r.err == Z_OK) r.err = Z_DATA_ERROR;
    r.sys_errno = sys;
    r.msg = m ? m : "unknown zlib error";
    r.n = -1;
  }
  return r;
}

/// Decompresses a gzip file in a background thread, a few blocks ahead of
/// the parser, so inflating and parsing overlap (they cost about the same).
/// Used for regular files only: a read from a pipe could block forever and
/// the destructor has to join the thread.
class Reader::Impl::Inflater {
 public:
  explicit Inflater(gzFile gz) : gz_(gz) {
    for (auto& s : slot_) s.resize(kBlock);
    th_ = std::thread([this] { run(); });
  }
  ~Inflater() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    th_.join();
  }
  /// Appends the next block to dst (which must have kBlock bytes of room).
  ReadResult take(char* dst) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [this] { return count_ > 0 || done_; });
    if (count_ == 0) return final_;
    int idx = head_;
    ReadResult r;
    r.n = len_[idx];
    lk.unlock();
    std::memcpy(dst, slot_[idx].data(), static_cast<std::size_t>(r.n));
    lk.lock();
    head_ = (head_ + 1) % kSlots;
    --count_;
    lk.unlock();
    cv_.notify_all();
    return r;
  }

 private:
  static constexpr int kSlots = 4;
  void run() {
    for (;;) {
      int idx;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [this] { return count_ < kSlots || stop_; });
        if (stop_) return;
        idx = (head_ + count_) % kSlots;
      }
      ReadResult r = gz_read_block(gz_, slot_[idx].data(), kBlock);
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (r.n <= 0) {
          final_ = r;
          done_ = true;
        } else {
          len_[idx] = r.n;
          ++count_;
        }
      }
      cv_.notify_all();
      if (r.n <= 0) return;
    }
  }

  gzFile gz_;
  std::vector<char> slot_[kSlots];
  int len_[kSlots] = {};
  int head_ = 0, count_ = 0;
  bool done_ = false, stop_ = false;
  ReadResult final_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread th_;
};

Reader::Impl::~Impl() {
  inflater.reset();  // joins the thread before the file is closed
  if (gz) gzclose(gz);
}

/// Reads more bytes after [beg, end), moving them to the front (and growing
/// the buffer when one line fills it).
void Reader::Impl::fill() {
  if (beg > 0) {
    std::memmove(buf.data(), buf.data() + beg, end - beg);
    end -= beg;
    beg = 0;
  }
  if (buf.size() - end < kBlock) buf.resize(std::max(buf.size() * 2, end + kBlock));
  ReadResult r = inflater ? inflater->take(buf.data() + end)
                          : gz_read_block(gz, buf.data() + end, static_cast<unsigned>(kBlock));
  if (r.n < 0) {
    std::string what = r.err == Z_ERRNO ? std::string("read error: ") + std::strerror(r.sys_errno)
                                        : "corrupt or truncated gzip data: " + r.msg;
    fail(0, what + " (after line " + std::to_string(line_no) + ")");
  }
  if (r.n == 0) {
    eof = true;
    return;
  }
  end += static_cast<std::size_t>(r.n);
}

void Reader::Impl::note(std::uint64_t line, int field, std::string msg) {
  if (diags.size() < opt.max_messages) diags.push_back(Diagnostic{name, line, field, std::move(msg)});
}

void Reader::Impl::malformed(std::uint64_t& counter, std::uint64_t line, int field,
                             std::string msg) {
  ++counter;
  note(line, field, msg + "; line skipped");
  if (opt.max_malformed > 0 && stats.skipped() > opt.max_malformed) {
    fail(line, "more than " + std::to_string(opt.max_malformed) +
                   " malformed lines; giving up (is this an SWF file?)");
  }
}

/// The limits a value of each field must respect (status is a free code:
/// Sandia-Ross stores exit codes such as -4 and 271 in it).
void Reader::Impl::set_limits() {
  for (int f = 1; f <= 18; ++f) {
    lo[f - 1] = -1;
    hi[f - 1] = std::numeric_limits<std::int64_t>::max();
  }
  lo[10] = std::numeric_limits<std::int64_t>::min();
  hi[1] = kMaxSubmit;
  for (int f : {7, 10}) hi[f - 1] = kMaxReal;
  for (int f : {3, 4, 6, 9, 18}) hi[f - 1] = opt.max_seconds;
  for (int f : {5, 8}) hi[f - 1] = opt.max_procs;
}

/// The message for a value outside its field's limits (d: the value as written).
std::string Reader::Impl::range_message(int f, double d) const {
  if (d < 0) return "negative value " + num_str(d) + " (only -1, meaning unknown, may be negative)";
  if (f == 5 || f == 8)
    return num_str(d) + " processors is more than the limit of " + std::to_string(opt.max_procs) +
           " (ReaderOptions::max_procs)";
  if (f == 2) return num_str(d) + " s is an absurd submit time (more than 2^40 s)";
  if (f == 7 || f == 10) return num_str(d) + " is more than the largest value kept (9.2e18)";
  return num_str(d) + " s is longer than the limit of " + std::to_string(opt.max_seconds) +
         " s (ReaderOptions::max_seconds)";
}

/// An unusable value in an optional field became -1: counted, and described
/// at its first occurrence in that field.
void Reader::Impl::made_unknown(int field, const std::string& what) {
  ++stats.made_unknown;
  if (unknown_noted[field]) return;
  unknown_noted[field] = true;
  note(line_no, field,
       what + "; taken as unknown (-1), the job is kept (later such values in this field are only "
              "counted)");
}

/// A header line before the first record: a value read as an integer must be
/// one (a refusal, not a guess: "1e3" is not 1); one without any digit is
/// "not given" and said so.
void Reader::Impl::check_header(const std::string& key, const std::string& value) {
  if (!integer_key(key)) return;
  std::int64_t v = 0;
  const char* b = value.data();
  const char* e = b + value.size();
  switch (header_int(value, &v)) {
    case HeaderInt::Int:
      return;
    case HeaderInt::NoValue:
      note(line_no, 0, "header " + key + ": " + quote(b, e) + " has no number: taken as not given");
      return;
    case HeaderInt::NotInt:
      fail(line_no, "header " + key + ": " + quote(b, e) +
                        " is not an integer (an integer, optionally followed by a space and a "
                        "comment, is expected); correct or remove this line");
  }
}

/// One line [b, e) without its '\n' (which must be at *e). Returns true if
/// it is a valid record.
bool Reader::Impl::process(const char* b, const char* e, Record& rec) {
  ++stats.lines;
  ++line_no;
  const char* p = b;
  while (p < e && is_ws(*p)) ++p;
  if (p == e) return false;  // blank
  if (*p == ';') {
    ++stats.comments;
    if (!seen_record) {
      std::string key, value;
      if (parse_header_line(p + 1, e, key, value)) {
        check_header(key, value);
        header.entries.emplace_back(std::move(key), std::move(value));
      }
    }
    return false;
  }

  // The fields the simulation does not need to place a job (3 wait, 6 CPU
  // time, 7 memory, 9 requested time, 10 requested memory, 18 think time):
  // an unusable number there becomes -1 instead of losing the job.
  constexpr std::uint32_t kOptionalFields =
      (1u << 2) | (1u << 5) | (1u << 6) | (1u << 8) | (1u << 9) | (1u << 17);

  // One pass over the fields. iv holds integers (rounded for fractions),
  // dv the value of each fractional field (bit i of frac set).
  std::int64_t iv[18];
  double dv[18];
  std::uint32_t frac = 0;
  int n = 0;
  int bad_field = 0;  // first field that is not a finite, in-range number
  NumKind bad_kind = NumKind::Int;
  const char* bad_b = nullptr;
  const char* bad_e = nullptr;
  // Optional fields holding a number that overflows or is not finite (only
  // set on the slow path).
  std::uint32_t unusable = 0;
  const char* unusable_b[18];
  const char* unusable_e[18];
  NumKind unusable_kind[18];
  // *e is '\n' (the caller guarantees it), which is neither whitespace nor
  // a digit, so the two hot loops need no bounds check.
  for (;;) {
    while (is_ws(*p)) ++p;
    if (p == e) break;
    if (n >= 18) {  // too many fields: count them only
      while (p < e && !is_ws(*p)) ++p;
      ++n;
      continue;
    }
    // Fast path: an integer of at most 18 digits.
    const char* t = p;
    bool neg = *p == '-';
    if (neg) ++p;
    const char* d0 = p;
    std::uint64_t v = 0;
    while (is_digit(*p)) v = v * 10 + static_cast<unsigned>(*p++ - '0');
    if (p > d0 && p - d0 <= 18 && (p == e || is_ws(*p))) {
      iv[n++] = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
      continue;
    }
    // Anything else: the general parser.
    p = t;
    Num num;
    NumKind k = parse_number(p, e, num);
    if (k == NumKind::Int) {
      iv[n] = num.i;
    } else if (k == NumKind::Frac) {
      iv[n] = static_cast<std::int64_t>(std::llround(num.d));
      dv[n] = num.d;
      frac |= 1u << n;
    } else if (k != NumKind::NotNumber && (kOptionalFields & (1u << n))) {
      // A number, but unusable, in a field the job does not need: -1
      // (counted below if the line is kept).
      iv[n] = -1;
      unusable |= 1u << n;
      unusable_b[n] = t;
      unusable_e[n] = p;
      unusable_kind[n] = k;
    } else if (bad_field == 0) {
      bad_field = n + 1;
      bad_kind = k;
      bad_b = t;
      bad_e = p;
    }
    ++n;
  }

  if (n != 18) {
    malformed(stats.wrong_field_count, line_no, 0,
              std::to_string(n) + " field" + (n == 1 ? "" : "s") + ", expected 18");
    return false;
  }
  if (bad_field) {
    switch (bad_kind) {
      case NumKind::NotFinite:
        malformed(stats.absurd, line_no, bad_field, quote(bad_b, bad_e) + " is not a finite number");
        break;
      case NumKind::Overflow:
        malformed(stats.absurd, line_no, bad_field,
                  quote(bad_b, bad_e) + " is out of range (overflow)");
        break;
      default:
        malformed(stats.non_numeric, line_no, bad_field, quote(bad_b, bad_e) + " is not a number");
        break;
    }
    return false;
  }

  // Unusable numbers in optional fields (a kept line): counted, described
  // once per field.
  for (int i = 0; unusable && i < 18; ++i) {
    if (!(unusable & (1u << i))) continue;
    made_unknown(i + 1, quote(unusable_b[i], unusable_e[i]) +
                            (unusable_kind[i] == NumKind::Overflow ? " is out of range (overflow)"
                                                                   : " is not a finite number"));
  }

  // Range checks, on the values as written. In fields the simulation does
  // not need to place the job, an absurd value becomes -1 (unknown) rather
  // than losing the job: real logs write "unlimited" as 2147483647 s.
  for (int i = 0; i < 18; ++i) {
    if (unusable & (1u << i)) continue;
    const bool is_frac = frac & (1u << i);
    const double d = is_frac ? dv[i] : static_cast<double>(iv[i]);
    const bool bad = is_frac ? ((d < 0 && i != 10) || d > static_cast<double>(hi[i]))
                             : (iv[i] < lo[i] || iv[i] > hi[i]);
    if (!bad) continue;
    if (kOptionalFields & (1u << i)) {
      made_unknown(i + 1, range_message(i + 1, d));
      iv[i] = -1;
      dv[i] = -1;
      continue;
    }
    malformed(stats.absurd, line_no, i + 1, range_message(i + 1, d));
    return false;
  }

  // Fractions in integer fields were rounded (half away from zero): say so.
  constexpr std::uint32_t kFracFields = (1u << 5) | (1u << 6) | (1u << 9);
  if (std::uint32_t r = frac & ~kFracFields) {
    for (int i = 0; i < 18; ++i) {
      if (!(r & (1u << i))) continue;
      ++stats.fractional_rounded;
      if (!rounded_noted[i + 1]) {
        rounded_noted[i + 1] = true;
        note(line_no, i + 1,
             "fractional value " + num_str(dv[i]) + " rounded to " + std::to_string(iv[i]) +
                 " (an integer field; later roundings in this field are only counted)");
      }
    }
  }

  rec.job = iv[0];
  rec.submit = iv[1];
  rec.wait = iv[2];
  rec.run = iv[3];
  rec.alloc_procs = iv[4];
  rec.avg_cpu = (frac & (1u << 5)) ? dv[5] : static_cast<double>(iv[5]);
  rec.used_mem = (frac & (1u << 6)) ? dv[6] : static_cast<double>(iv[6]);
  rec.req_procs = iv[7];
  rec.req_time = iv[8];
  rec.req_mem = (frac & (1u << 9)) ? dv[9] : static_cast<double>(iv[9]);
  rec.status = iv[10];
  rec.user = iv[11];
  rec.group = iv[12];
  rec.app = iv[13];
  rec.queue = iv[14];
  rec.partition = iv[15];
  rec.preceding = iv[16];
  rec.think = iv[17];
  rec.line = line_no;
  ++stats.records;
  seen_record = true;
  return true;
}

Reader::Reader(const std::string& path, ReaderOptions opt) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->name = path == "-" ? "<stdin>" : path;
  impl_->opt = opt;
  impl_->set_limits();
  impl_->open();
}

Reader::~Reader() = default;

bool Reader::next(Record& rec) {
  Impl& m = *impl_;
  for (;;) {
    if (m.discarding) {
      // Inside a line too long to hold: drop bytes up to its end.
      const char* b = m.buf.data() + m.beg;
      const char* nl = static_cast<const char*>(std::memchr(b, '\n', m.end - m.beg));
      if (nl) {
        m.beg = static_cast<std::size_t>(nl - m.buf.data()) + 1;
        m.discarding = false;
        continue;
      }
      m.beg = m.end = 0;
      if (m.eof) {
        m.discarding = false;
        return false;
      }
      m.fill();
      continue;
    }
    if (m.beg < m.end) {
      const char* b = m.buf.data() + m.beg;
      const char* nl = static_cast<const char*>(std::memchr(b, '\n', m.end - m.beg));
      if (nl) {
        m.beg = static_cast<std::size_t>(nl - m.buf.data()) + 1;
        if (m.process(b, nl, rec)) return true;
        continue;
      }
      if (m.eof) {  // last line without '\n': add one (process() needs it)
        if (m.end == m.buf.size()) {
          m.buf.resize(m.buf.size() + 1);
          b = m.buf.data() + m.beg;
        }
        m.buf[m.end] = '\n';
        const char* e = m.buf.data() + m.end;
        m.beg = m.end;
        if (m.process(b, e, rec)) return true;
        continue;
      }
      if (m.end - m.beg >= kMaxLineBytes) {
        // Hold no more of it: a comment is ignored, anything else reported.
        const char* p = b;
        const char* e = m.buf.data() + m.end;
        while (p < e && is_ws(*p)) ++p;
        ++m.stats.lines;
        ++m.line_no;
        if (p < e && *p == ';') {
          ++m.stats.comments;
        } else {
          m.malformed(m.stats.wrong_field_count, m.line_no, 0,
                      "line longer than " + std::to_string(kMaxLineBytes >> 20) +
                          " MiB, not an SWF record");
        }
        m.discarding = true;
        m.beg = m.end = 0;
        continue;
      }
    } else if (m.eof) {
      return false;
    }
    m.fill();
  }
}

const Header& Reader::header() const { return impl_->header; }
const ReaderStats& Reader::stats() const { return impl_->stats; }
const std::vector<Diagnostic>& Reader::diagnostics() const { return impl_->diags; }
const std::string& Reader::path() const { return impl_->path; }

// ---------------------------------------------------------------- writing

namespace {

void put_int(std::string& s, std::int64_t v, int width) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  int len = static_cast<int>(r.ptr - buf);
  if (!s.empty()) s += ' ';
  if (len < width) s.append(static_cast<std::size_t>(width - len), ' ');
  s.append(buf, r.ptr);
}

void put_real(std::string& s, double v, int width) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    put_int(s, static_cast<std::int64_t>(v), width);
    return;
  }
  char buf[64];
  int len = std::snprintf(buf, sizeof buf, "%.2f", v);
  if (len < 0) len = 0;
  if (len >= static_cast<int>(sizeof buf)) len = sizeof buf - 1;
  if (std::memchr(buf, '.', static_cast<std::size_t>(len))) {
    while (len > 0 && buf[len - 1] == '0') --len;
    if (len > 0 && buf[len - 1] == '.') --len;
  }
  std::string_view t(buf, static_cast<std::size_t>(len));
  if (t == "-0") t = "0";
  if (!s.empty()) s += ' ';
  if (static_cast<int>(t.size()) < width) s.append(static_cast<std::size_t>(width) - t.size(), ' ');
  s.append(t);
}

}  // namespace

std::string format_record(const Record& r) {
  // Column widths in the style of the archive's files (values wider than
  // their column simply push the rest right; one space always separates).
  std::string s;
  s.reserve(128);
  put_int(s, r.job, 6);
  put_int(s, r.submit, 9);
  put_int(s, r.wait, 7);
  put_int(s, r.run, 7);
  put_int(s, r.alloc_procs, 5);
  put_real(s, r.avg_cpu, 7);
  put_real(s, r.used_mem, 6);
  put_int(s, r.req_procs, 5);
  put_int(s, r.req_time, 7);
  put_real(s, r.req_mem, 6);
  put_int(s, r.status, 2);
  put_int(s, r.user, 4);
  put_int(s, r.group, 4);
  put_int(s, r.app, 4);
  put_int(s, r.queue, 3);
  put_int(s, r.partition, 3);
  put_int(s, r.preceding, 3);
  put_int(s, r.think, 3);
  return s;
}

std::string format_header(const Header& h) {
  std::string s;
  for (const auto& kv : h.entries) {
    s += "; ";
    s += kv.first;
    s += ':';
    if (!kv.second.empty()) {
      s += ' ';
      // A value cannot span lines in SWF; keep the output one line per entry.
      for (char c : kv.second) s += (c == '\n' || c == '\r') ? ' ' : c;
    }
    s += '\n';
  }
  return s;
}

}  // namespace easypp::swf
