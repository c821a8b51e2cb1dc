// A GET to slurmrestd over libcurl, streamed into a callback, with the
// failure classified for one clear message: the URL, what went wrong, and
// whether trying again may help (connection refused or reset, timeout, HTTP
// 5xx, an answer cut short) or not (401/403: the token or user; 404: a path
// or OpenAPI version this slurmrestd does not serve; a malformed answer).
//
// Endpoints: "http://host:port" (JWT: X-SLURM-USER-NAME and
// X-SLURM-USER-TOKEN headers) or "unix:/path/to/socket" (slurmrestd's
// rest_auth/local: the socket's peer credentials identify the caller; a
// token, if given, is sent too).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace easypp::import {

struct RestEndpoint {
  std::string base;         ///< "http://127.0.0.1:6820" or "unix:/run/slurmrestd.sock"
  std::string user;         ///< X-SLURM-USER-NAME (with a token)
  std::string token;        ///< X-SLURM-USER-TOKEN; empty: none
  long connect_timeout = 10;  ///< seconds
  long timeout = 300;         ///< seconds for a whole answer
  long stall_timeout = 60;    ///< seconds without a byte before giving up

  bool is_unix() const { return base.compare(0, 5, "unix:") == 0; }
  /// The URL of `path` as shown in messages ("unix:/s.sock:/slurmdb/...").
  std::string display(const std::string& path) const;
};

struct RestResult {
  bool ok = false;
  long http_status = 0;  ///< 0: no HTTP answer
  bool retryable = false;
  std::string error;     ///< the cause, one line (without the URL)
};

/// Body bytes as they arrive (only for 2xx answers). Return false to abort:
/// the result is then not ok, with *why as its error, not retryable.
using BodySink = std::function<bool(const char* data, std::size_t n, std::string* why)>;

/// One GET. Never throws.
RestResult rest_get(const RestEndpoint& ep, const std::string& path, const BodySink& sink);

/// curl_global_init once (call from main before threads).
void rest_global_init();

/// The OpenAPI versions (the NN of v0.0.NN) whose job lists the tools read:
/// 22.05 serves v0.0.36-38, 23.02/23.11 v0.0.39-40, 24.05 v0.0.39-41, 24.11
/// v0.0.40-42.
bool known_api_version(int v);

/// `s` for a URL query (RFC 3986 unreserved characters kept, the rest %XX).
std::string url_encode(const std::string& s);

}  // namespace easypp::import
