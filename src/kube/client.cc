#include "kube/client.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// TLS sessions and DNS answers are shared by every handle of the process (curl locks the
// share through these callbacks). Connections are not (curl does not support sharing them
// across threads): finished handles wait in a pool instead, each with its kept-alive
// connections, and a request takes one (reset, its connections kept), so requests reuse
// connections rather than making a TLS handshake each.
std::mutex g_share_mu[CURL_LOCK_DATA_LAST];
void ShareLock(CURL* /*h*/, curl_lock_data data, curl_lock_access /*access*/, void* /*user*/) {
  g_share_mu[data].lock();
}
void ShareUnlock(CURL* /*h*/, curl_lock_data data, void* /*user*/) { g_share_mu[data].unlock(); }

CURLSH* Share() {
  static CURLSH* share = [] {
    CURLSH* s = curl_share_init();
    curl_share_setopt(s, CURLSHOPT_LOCKFUNC, &ShareLock);
    curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, &ShareUnlock);
    curl_share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return s;
  }();
  return share;
}

constexpr size_t kPooledHandles = 64;
std::mutex g_pool_mu;
std::vector<CURL*>& Pool() {
  static auto* pool = new std::vector<CURL*>();  // never destroyed: handles outlive statics
  return *pool;
}

CURL* TakeHandle() {
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!Pool().empty()) {
      CURL* h = Pool().back();
      Pool().pop_back();
      curl_easy_reset(h);  // options back to defaults; its connections stay
      return h;
    }
  }
  return curl_easy_init();
}

struct CurlDeleter {
  void operator()(CURL* c) const {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (Pool().size() < kPooledHandles) {
      Pool().push_back(c);
      return;
    }
    curl_easy_cleanup(c);
  }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Curl = std::unique_ptr<CURL, CurlDeleter>;
using Headers = std::unique_ptr<curl_slist, ListDeleter>;

// What a transfer writes into: the whole body, or lines for a stream while the status is 200.
struct Sink {
  CURL* curl = nullptr;
  std::string body;
  std::string pending;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  bool stopped = false;  // on_line or cancel asked to stop
};

// curl calls this about once a second (and on progress); non-zero aborts the transfer.
int Progress(void* user, curl_off_t /*dltotal*/, curl_off_t /*dlnow*/, curl_off_t /*ultotal*/,
             curl_off_t /*ulnow*/) {
  auto* sink = static_cast<Sink*>(user);
  if (sink->cancel != nullptr && sink->cancel->load()) {
    sink->stopped = true;
    return 1;
  }
  return 0;
}

size_t Write(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t len = size * n;
  long code = 0;  // NOLINT(google-runtime-int): curl's type
  curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &code);
  if (sink->on_line == nullptr || code != 200) {
    sink->body.append(data, len);
    return len;
  }
  // Only the new bytes can hold a newline: what was pending before had none.
  size_t searched = sink->pending.size();
  sink->pending.append(data, len);
  size_t start = 0;
  for (size_t nl = sink->pending.find('\n', searched); nl != std::string::npos;
       nl = sink->pending.find('\n', start)) {
    std::string_view line(sink->pending.data() + start, nl - start);
    start = nl + 1;
    if (!line.empty() && !(*sink->on_line)(line)) {
      sink->stopped = true;
      return 0;  // makes curl stop the transfer
    }
  }
  sink->pending.erase(0, start);
  return len;
}

void SetBlob(CURL* c, CURLoption opt, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(c, opt, &blob);
}

// A handle set up for one request to `url` with the config's trust and credentials.
absl::StatusOr<std::pair<Curl, Headers>> Prepare(const RestConfig& cfg, const std::string& url,
                                                 double timeout_seconds) {
  GlobalInit();
  Curl c(TakeHandle());
  if (!c) return absl::InternalError("curl_easy_init failed");
  CURL* h = c.get();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_SHARE, Share());
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_seconds * 1000));  // NOLINT
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
  if (cfg.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!cfg.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, cfg.ca_file.c_str());
  if (!cfg.ca_pem.empty()) SetBlob(h, CURLOPT_CAINFO_BLOB, cfg.ca_pem);
  if (!cfg.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, cfg.client_cert_file.c_str());
    curl_easy_setopt(h, CURLOPT_SSLKEY, cfg.client_key_file.c_str());
  }
  if (!cfg.client_cert_pem.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    SetBlob(h, CURLOPT_SSLCERT_BLOB, cfg.client_cert_pem);
    SetBlob(h, CURLOPT_SSLKEY_BLOB, cfg.client_key_pem);
  }
  std::string token = cfg.token;
  if (!cfg.token_file.empty()) {
    absl::StatusOr<std::string> t = util::ReadFile(cfg.token_file);
    if (!t.ok()) {
      return absl::FailedPreconditionError(
          util::Cat("cannot read the token file ", cfg.token_file, " (", cfg.source, ")"));
    }
    token = *t;
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
      token.pop_back();
    }
  }
  curl_slist* list = curl_slist_append(nullptr, "Accept: application/json");
  if (!token.empty())
    list = curl_slist_append(list, util::Cat("Authorization: Bearer ", token).c_str());
  return std::make_pair(std::move(c), Headers(list));
}

absl::StatusOr<Response> Perform(CURL* h, curl_slist* headers, Sink& sink, const std::string& url,
                                 bool stream) {
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  sink.curl = h;
  CURLcode rc = curl_easy_perform(h);
  Response r;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  bool ended =
      stream && (sink.stopped ||
                 (r.status == 200 && (rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_PARTIAL_FILE)));
  if (rc != CURLE_OK && !ended) {
    return absl::UnavailableError(util::Cat(url, ": ", curl_easy_strerror(rc)));
  }
  r.body = std::move(sink.body);
  return r;
}

}  // namespace

Client::Client(RestConfig config, double timeout_seconds)
    : config_(std::move(config)), timeout_seconds_(timeout_seconds) {}

absl::StatusOr<Response> Client::Do(std::string_view method, const std::string& path,
                                    const std::string& body, std::string_view content_type) const {
  std::string url = config_.server + path;
  auto prepared = Prepare(config_, url, timeout_seconds_);
  if (!prepared.ok()) return prepared.status();
  CURL* h = prepared->first.get();
  curl_slist* headers = prepared->second.release();
  if (!body.empty() || method != "GET") {
    headers = curl_slist_append(headers, util::Cat("Content-Type: ", content_type).c_str());
  }
  Headers owned(headers);
  std::string m(method);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m.c_str());
  if (!body.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  Sink sink;
  return Perform(h, owned.get(), sink, url, false);
}

absl::StatusOr<Response> Client::Stream(const std::string& path,
                                        const std::function<bool(std::string_view)>& on_line,
                                        double timeout_seconds,
                                        const std::atomic<bool>* cancel) const {
  std::string url = config_.server + path;
  auto prepared = Prepare(config_, url, timeout_seconds);
  if (!prepared.ok()) return prepared.status();
  Sink sink;
  sink.on_line = &on_line;
  sink.cancel = cancel;
  if (cancel != nullptr) {
    CURL* h = prepared->first.get();
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &Progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &sink);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  }
  return Perform(prepared->first.get(), prepared->second.get(), sink, url, true);
}

std::string StatusMessage(const Response& r) {
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  if (!r.body.empty()) return r.body.substr(0, 200);
  return util::Cat("HTTP ", r.status);
}

}  // namespace gpuplane::kube
