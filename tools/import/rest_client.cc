#include "import/rest_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

#include <cstring>

namespace easypp::import {

std::string RestEndpoint::display(const std::string& path) const {
  if (is_unix()) return base + ":" + path;
  std::string b = base;
  while (!b.empty() && b.back() == '/') b.pop_back();
  return b + path;
}

void rest_global_init() { curl_global_init(CURL_GLOBAL_DEFAULT); }

namespace {

struct Transfer {
  const BodySink* sink = nullptr;
  CURL* curl = nullptr;
  bool checked = false;
  long status = 0;
  std::string error_body;  // the first bytes of a non-2xx answer
  bool aborted = false;
  std::string abort_why;
};

std::size_t on_body(char* data, std::size_t size, std::size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * nmemb;
  if (!t->checked) {
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->status);
    t->checked = true;
  }
  if (t->status < 200 || t->status >= 300) {
    if (t->error_body.size() < 4096)
      t->error_body.append(data, std::min(n, 4096 - t->error_body.size()));
    return n;
  }
  if (!(*t->sink)(data, n, &t->abort_why)) {
    t->aborted = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return n;
}

// The gist of slurmrestd's error answer: its "errors" descriptions, or the
// first line of a plain-text body.
std::string body_gist(const std::string& body) {
  std::string out;
  std::size_t pos = 0;
  while ((pos = body.find("\"description\"", pos)) != std::string::npos) {
    const auto q1 = body.find('"', body.find(':', pos) + 1);
    const auto q2 = q1 == std::string::npos ? q1 : body.find('"', q1 + 1);
    if (q2 == std::string::npos) break;
    if (q2 > q1 + 1) out += (out.empty() ? "" : "; ") + body.substr(q1 + 1, q2 - q1 - 1);
    pos = q2;
  }
  if (out.empty()) {
    out = body.substr(0, body.find('\n'));
    if (out.size() > 200) out = out.substr(0, 200) + "...";
  }
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return out;
}

std::string status_text(long s) {
  switch (s) {
    case 400: return "400 Bad Request";
    case 401: return "401 Unauthorized";
    case 403: return "403 Forbidden";
    case 404: return "404 Not Found";
    case 500: return "500 Internal Server Error";
    case 502: return "502 Bad Gateway";
    case 503: return "503 Service Unavailable";
    case 504: return "504 Gateway Timeout";
    default: return std::to_string(s);
  }
}

}  // namespace

RestResult rest_get(const RestEndpoint& ep, const std::string& path, const BodySink& sink) {
  RestResult r;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    r.error = "cannot initialize libcurl";
    return r;
  }
  Transfer t;
  t.sink = &sink;
  t.curl = curl;
  std::string url;
  std::string socket_path;
  if (ep.is_unix()) {
    socket_path = ep.base.substr(5);
    url = "http://localhost" + path;
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_path.c_str());
  } else {
    url = ep.display(path);
  }
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  std::string h_user, h_token;
  if (!ep.token.empty()) {
    h_user = "X-SLURM-USER-NAME: " + ep.user;
    h_token = "X-SLURM-USER-TOKEN: " + ep.token;
    headers = curl_slist_append(headers, h_user.c_str());
    headers = curl_slist_append(headers, h_token.c_str());
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, ep.connect_timeout);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, ep.timeout);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, ep.stall_timeout);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "easypp-import");
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  r.http_status = status;

  if (t.aborted) {
    r.error = t.abort_why;
    return r;
  }
  if (status != 0 && (status < 200 || status >= 300) &&
      (rc == CURLE_OK || rc == CURLE_PARTIAL_FILE)) {
    const std::string gist = body_gist(t.error_body);
    r.error = "HTTP " + status_text(status) + (gist.empty() ? "" : ": " + gist);
    if (status == 401)
      r.error += " (the token is missing, expired or not valid for this user: set SLURM_JWT "
                 "or --token-file, and --user)";
    else if (status == 403)
      r.error += " (this user may not read the accounting of these jobs)";
    else if (status == 404)
      r.error += " (this slurmrestd does not serve this path: an OpenAPI version it does not "
                 "load, or no slurmdbd plugin)";
    r.retryable = status >= 500 || status == 429 || status == 408;
    // Slurm 24.11's slurmrestd answers a token slurmdbd refuses with 502
    // "Failed to open slurmdbd connection, authentication error" (22.05:
    // 401): trying again cannot help.
    if (status == 502 && gist.find("authentication") != std::string::npos) {
      r.retryable = false;
      r.error += " (the token is not valid for this user: set SLURM_JWT or --token-file, "
                 "and --user)";
    }
    return r;
  }
  if (rc != CURLE_OK) {
    const char* what = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
        r.error = std::string("cannot connect (") + what + "): is slurmrestd running there?";
        r.retryable = true;
        break;
      case CURLE_OPERATION_TIMEDOUT:
        r.error = std::string("timed out (") + what + ")";
        r.retryable = true;
        break;
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_GOT_NOTHING:
      case CURLE_SEND_ERROR:
        r.error = std::string("the answer was cut short (") + what + ")";
        r.retryable = true;
        break;
      case CURLE_COULDNT_RESOLVE_HOST:
        r.error = std::string("cannot resolve the host (") + what + ")";
        break;
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        r.error = std::string("not a usable URL (") + what +
                  "): give http://HOST:PORT or unix:/path/to/socket";
        break;
      default:
        r.error = what;
        r.retryable = true;
    }
    return r;
  }
  if (status < 200 || status >= 300) {
    r.error = "no HTTP status in the answer";
    return r;
  }
  r.ok = true;
  return r;
}

bool known_api_version(int v) {
  static const int kKnown[] = {36, 37, 38, 39, 40, 41, 42};
  return std::find(std::begin(kKnown), std::end(kKnown), v) != std::end(kKnown);
}

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      out += b;
    }
  }
  return out;
}

}  // namespace easypp::import
