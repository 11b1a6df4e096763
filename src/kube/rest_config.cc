#include "kube/rest_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "util/strings.h"

namespace gpuplane::kube {
namespace {

std::string Str(const YAML::Node& map, const char* key);

// A kubeconfig being read: its path (for messages and relative paths) and root.
struct Reader {
  std::string path;
  YAML::Node root;

  absl::Status Error(const YAML::Node& at, std::string_view field, std::string_view what) const {
    return ErrorAt(at.IsDefined() ? at.Mark().line : -1, field, what);
  }

  // An error at the line of `key` in `map` (yaml-cpp marks a block map where its content
  // starts, so the key's own line is what a reader looks for).
  absl::Status ErrorAtKey(const YAML::Node& map, const std::string& key, std::string_view field,
                          std::string_view what) const {
    int line = map.IsDefined() ? map.Mark().line : -1;
    if (map.IsDefined() && map.IsMap()) {
      for (const auto& kv : map) {
        if (kv.first.IsScalar() && kv.first.Scalar() == key) line = kv.first.Mark().line;
      }
    }
    return ErrorAt(line, field, what);
  }

  absl::Status ErrorAt(int line, std::string_view field, std::string_view what) const {
    std::string where = path;
    if (line >= 0) util::Append(where, ":", line + 1);
    return absl::InvalidArgumentError(util::Cat(where, ": ", field, ": ", what));
  }

  // The entry named `name` in the list `list` (clusters, users, contexts), its `key` map.
  absl::StatusOr<YAML::Node> Named(std::string_view list, std::string_view key,
                                   const std::string& name) const {
    YAML::Node items = root[std::string(list)];
    if (items.IsDefined() && !items.IsNull() && !items.IsSequence()) {
      return Error(items, list, "must be a list");
    }
    if (items.IsSequence()) {
      for (const YAML::Node& item : items) {
        if (!item.IsMap() || Str(item, "name") != name) continue;
        YAML::Node body = item[std::string(key)];
        if (!body.IsDefined() || !body.IsMap()) {
          return Error(item, util::Cat(list, "[", name, "].", key), "must be a map");
        }
        return body;
      }
    }
    return ErrorAtKey(root, std::string(list), list,
                      util::Cat("no entry named \"", name, "\"; add it or pick another context"));
  }

  std::string Path(const std::string& p) const {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (std::filesystem::path(path).parent_path() / p).string();
  }
};

std::string Str(const YAML::Node& map, const char* key) {
  YAML::Node v = map[key];  // absent: an invalid node, which only IsDefined() may ask
  return v.IsDefined() && v.IsScalar() ? v.Scalar() : std::string();
}

absl::Status Decode(const Reader& r, const YAML::Node& map, const char* key, std::string_view field,
                    std::string& out) {
  std::string b64 = Str(map, key);
  if (b64.empty()) return absl::OkStatus();
  if (!absl::Base64Unescape(b64, &out)) {
    return r.ErrorAtKey(map, key, util::Cat(field, ".", key), "is not base64");
  }
  return absl::OkStatus();
}

absl::Status ReadCluster(const Reader& r, const YAML::Node& c, const std::string& name,
                         RestConfig& out) {
  std::string field = util::Cat("clusters[", name, "].cluster");
  out.server = Str(c, "server");
  while (out.server.ends_with('/')) out.server.pop_back();
  if (out.server.empty()) return r.Error(c, field + ".server", "is required");
  if (!out.server.starts_with("https://") && !out.server.starts_with("http://")) {
    return r.ErrorAtKey(c, "server", field + ".server",
                        util::Cat("\"", out.server, "\" is not an http(s) URL"));
  }
  out.ca_file = r.Path(Str(c, "certificate-authority"));
  out.insecure_skip_tls_verify = Str(c, "insecure-skip-tls-verify") == "true";
  return Decode(r, c, "certificate-authority-data", field, out.ca_pem);
}

absl::Status ReadUser(const Reader& r, const YAML::Node& u, const std::string& name,
                      RestConfig& out) {
  std::string field = util::Cat("users[", name, "].user");
  for (const char* unsupported : {"exec", "auth-provider", "username"}) {
    if (u[unsupported].IsDefined()) {
      return r.ErrorAtKey(u, unsupported, util::Cat(field, ".", unsupported),
                          "is not supported; use a token, a token file or a client certificate");
    }
  }
  out.token = Str(u, "token");
  out.token_file = r.Path(Str(u, "tokenFile"));
  out.client_cert_file = r.Path(Str(u, "client-certificate"));
  out.client_key_file = r.Path(Str(u, "client-key"));
  absl::Status s = Decode(r, u, "client-certificate-data", field, out.client_cert_pem);
  if (!s.ok()) return s;
  s = Decode(r, u, "client-key-data", field, out.client_key_pem);
  if (!s.ok()) return s;
  bool cert = !out.client_cert_file.empty() || !out.client_cert_pem.empty();
  bool key = !out.client_key_file.empty() || !out.client_key_pem.empty();
  if (cert != key) {
    return r.Error(u, field, "a client certificate needs its key and a key its certificate");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  absl::StatusOr<std::string> text = util::ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(util::Cat(path, ": cannot read the kubeconfig"));
  return ParseKubeconfig(*text, path, context);
}

namespace {

absl::StatusOr<RestConfig> Read(const Reader& r, const std::string& path,
                                const std::string& context) {
  if (!r.root.IsMap()) return r.Error(r.root, "(document)", "a kubeconfig is a map");
  std::string ctx_name = context.empty() ? Str(r.root, "current-context") : context;
  if (ctx_name.empty()) {
    return r.Error(r.root, "current-context", "is empty; set it or name a context");
  }
  absl::StatusOr<YAML::Node> ctx = r.Named("contexts", "context", ctx_name);
  if (!ctx.ok()) return ctx.status();
  RestConfig out;
  out.source = util::Cat("kubeconfig ", path, " context ", ctx_name);
  std::string cluster = Str(*ctx, "cluster"), user = Str(*ctx, "user");
  if (cluster.empty()) {
    return r.Error(*ctx, util::Cat("contexts[", ctx_name, "].context.cluster"), "is required");
  }
  absl::StatusOr<YAML::Node> c = r.Named("clusters", "cluster", cluster);
  if (!c.ok()) return c.status();
  absl::Status s = ReadCluster(r, *c, cluster, out);
  if (!s.ok()) return s;
  if (!user.empty()) {
    absl::StatusOr<YAML::Node> u = r.Named("users", "user", user);
    if (!u.ok()) return u.status();
    s = ReadUser(r, *u, user, out);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace

absl::StatusOr<RestConfig> ParseKubeconfig(const std::string& text, const std::string& path,
                                           const std::string& context) {
  Reader r{path, {}};
  try {
    r.root = YAML::Load(text);
    return Read(r, path, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(util::Cat(path, ":", e.mark.line + 1, ": not YAML: ", e.msg));
  }
}

absl::StatusOr<RestConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return absl::FailedPreconditionError(
        "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are unset; give --kubeconfig FILE");
  }
  RestConfig out;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = util::Cat("[", h, "]");  // IPv6
  out.server = util::Cat("https://", h, ":", port);
  out.token_file = sa_dir + "/token";
  out.ca_file = sa_dir + "/ca.crt";
  out.source = util::Cat("in-cluster service account ", sa_dir);
  if (!std::filesystem::exists(out.token_file)) {
    return absl::FailedPreconditionError(
        util::Cat("no service account token at ", out.token_file,
                  "; mount one (automountServiceAccountToken) or give --kubeconfig FILE"));
  }
  return out;
}

}  // namespace gpuplane::kube
