#include "import/json_stream.h"

#include "utf8.h"

namespace easypp::import {

namespace {
bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string shown(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char b[8];
  snprintf(b, sizeof b, "0x%02x", unsigned(static_cast<unsigned char>(c)));
  return b;
}
}  // namespace

JobStream::JobStream(OnJob on_job) : on_job_(std::move(on_job)), others_(json_object()) {}

JobStream::~JobStream() { json_decref(others_); }

bool JobStream::fail(const std::string& why) {
  if (st_ != St::Failed) {
    error_ = why + " (at byte " + std::to_string(offset_) + ", after " + std::to_string(jobs_) +
             " job" + (jobs_ == 1 ? "" : "s") + ")";
    st_ = St::Failed;
  }
  buf_.clear();
  buf_.shrink_to_fit();
  return false;
}

bool JobStream::feed(const char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (st_ == St::Failed) return false;
    if (!step(data[i])) return false;
    ++offset_;
  }
  return st_ != St::Failed;
}

// Inside a captured value: strings, escapes, nesting. True when the value
// (a container) has just closed.
bool JobStream::track(char c) {
  if (in_str_) {
    if (esc_) esc_ = false;
    else if (c == '\\') esc_ = true;
    else if (c == '"') in_str_ = false;
    return false;
  }
  if (c == '"') in_str_ = true;
  else if (c == '{' || c == '[') ++depth_;
  else if (c == '}' || c == ']') return --depth_ == 0;
  return false;
}

bool JobStream::finish_capture() {
  others_bytes_ += buf_.size();
  if (plugin::repair_utf8(&buf_)) ++repaired_;
  json_error_t e;
  json_t* v = json_loadb(buf_.data(), buf_.size(), JSON_DECODE_ANY, &e);
  if (v == nullptr)
    return fail("malformed JSON in the top-level member \"" + key_ + "\": " + e.text);
  json_object_set_new(others_, key_.c_str(), v);
  buf_.clear();
  return true;
}

bool JobStream::finish_job() {
  if (plugin::repair_utf8(&buf_)) ++repaired_;
  json_error_t e;
  json_t* v = json_loadb(buf_.data(), buf_.size(), 0, &e);
  buf_.clear();
  if (v == nullptr)
    return fail("malformed JSON in job " + std::to_string(jobs_ + 1) + ": " + e.text);
  std::string why;
  const bool ok = on_job_(v, jobs_, &why);
  json_decref(v);
  ++jobs_;
  if (!ok) return fail(why);
  return true;
}

bool JobStream::step(char c) {
  switch (st_) {
    case St::Start:
      if (is_ws(c)) return true;
      // A UTF-8 byte order mark is not JSON; neither is anything else here.
      if (c != '{') return fail("not a JSON object: the document starts with " + shown(c));
      st_ = St::ExpectKey;
      return true;
    case St::ExpectKey:
      if (is_ws(c)) return true;
      if (c == '}') {
        st_ = St::Done;
        return true;
      }
      if (c != '"') return fail("expected a member name, found " + shown(c));
      key_.clear();
      st_ = St::Key;
      return true;
    case St::Key:
      if (c == '\\') {
        key_ += c;
        st_ = St::KeyEscape;
      } else if (c == '"') {
        st_ = St::ExpectColon;
      } else if (key_.size() > 256) {
        return fail("a member name longer than 256 bytes");
      } else {
        key_ += c;
      }
      return true;
    case St::KeyEscape:
      key_ += c;
      st_ = St::Key;
      return true;
    case St::ExpectColon:
      if (is_ws(c)) return true;
      if (c != ':') return fail("expected ':' after \"" + key_ + "\", found " + shown(c));
      st_ = St::ValueStart;
      return true;
    case St::ValueStart:
      if (is_ws(c)) return true;
      if (key_ == "jobs") {
        if (c != '[') return fail("\"jobs\" is not an array");
        if (saw_jobs_) return fail("a second \"jobs\" member");
        saw_jobs_ = true;
        st_ = St::JobsFirstElem;
        return true;
      }
      buf_.assign(1, c);
      depth_ = 0;
      in_str_ = esc_ = false;
      scalar_ = !(c == '{' || c == '[');
      if (scalar_) {
        in_str_ = c == '"';
      } else {
        depth_ = 1;
      }
      st_ = St::Capture;
      return true;
    case St::Capture:
      if (scalar_ && !in_str_ && (c == ',' || c == '}' || is_ws(c))) {
        if (!finish_capture()) return false;
        st_ = St::AfterValue;
        return step(c);
      }
      buf_ += c;
      if (buf_.size() > kMaxMemberBytes)
        return fail("the top-level member \"" + key_ + "\" is larger than 64 MiB");
      if (buf_.size() + others_bytes_ > kMaxMemberBytes)
        return fail("the top-level members other than \"jobs\" are larger than 64 MiB "
                    "together (at \"" + key_ + "\")");
      if (scalar_) {
        if (in_str_) {
          if (esc_) esc_ = false;
          else if (c == '\\') esc_ = true;
          else if (c == '"') in_str_ = false;
        }
        return true;
      }
      if (track(c)) {
        if (!finish_capture()) return false;
        st_ = St::AfterValue;
      }
      return true;
    case St::AfterValue:
      if (is_ws(c)) return true;
      if (c == ',') {
        st_ = St::ExpectKey;
        return true;
      }
      if (c == '}') {
        st_ = St::Done;
        return true;
      }
      return fail("expected ',' or '}' after the member \"" + key_ + "\", found " + shown(c));
    case St::JobsFirstElem:
    case St::JobsExpectElem:
      if (is_ws(c)) return true;
      if (c == ']' && st_ == St::JobsFirstElem) {
        st_ = St::AfterValue;
        return true;
      }
      if (c != '{')
        return fail("job " + std::to_string(jobs_ + 1) + " is not a JSON object (starts with " +
                    shown(c) + ")");
      buf_.assign(1, c);
      depth_ = 1;
      in_str_ = esc_ = false;
      st_ = St::JobElem;
      return true;
    case St::JobElem:
      buf_ += c;
      if (buf_.size() > kMaxJobBytes)
        return fail("job " + std::to_string(jobs_ + 1) + " is larger than 64 MiB");
      if (track(c)) {
        if (!finish_job()) return false;
        st_ = St::JobsAfterElem;
      }
      return true;
    case St::JobsAfterElem:
      if (is_ws(c)) return true;
      if (c == ',') {
        st_ = St::JobsExpectElem;
        return true;
      }
      if (c == ']') {
        st_ = St::AfterValue;
        key_ = "jobs";
        return true;
      }
      return fail("expected ',' or ']' after job " + std::to_string(jobs_) + ", found " +
                  shown(c));
    case St::Done:
      if (is_ws(c) || c == '\0') return true;
      return fail("data after the end of the JSON document (" + shown(c) + ")");
    case St::Failed:
      return false;
  }
  return false;
}

bool JobStream::finish() {
  if (st_ == St::Failed) return false;
  if (st_ == St::Done) return true;
  if (st_ == St::Start) return fail("empty answer: no JSON document");
  std::string where;
  switch (st_) {
    case St::JobElem: where = "inside job " + std::to_string(jobs_ + 1); break;
    case St::JobsFirstElem:
    case St::JobsExpectElem:
    case St::JobsAfterElem: where = "inside the \"jobs\" array"; break;
    default: where = key_.empty() ? "inside the top-level object" : "after \"" + key_ + "\"";
  }
  return fail("the JSON document is truncated: it ends " + where);
}

}  // namespace easypp::import
