#include "kube/rest_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpuplane::kube {
namespace {

TEST(RestConfigTest, ReadsTheCurrentContextWithATokenAndARelativeCaFile) {
  absl::StatusOr<RestConfig> c = LoadKubeconfig("testdata/kube/token.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");  // trailing slash dropped
  EXPECT_EQ(c->ca_file, "testdata/kube/pki/ca.crt");
  EXPECT_EQ(c->token, "abc123");
  EXPECT_TRUE(c->client_cert_pem.empty());
  EXPECT_EQ(c->source, "kubeconfig testdata/kube/token.yaml context dev");
}

TEST(RestConfigTest, ANamedContextWithBase64Data) {
  absl::StatusOr<RestConfig> c = LoadKubeconfig("testdata/kube/token.yaml", "prod");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://prod.example.com");
  EXPECT_EQ(c->ca_pem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_TRUE(c->token.empty());
}

TEST(RestConfigTest, ErrorsNameTheFileTheFieldAndTheRemedy) {
  auto msg = [](const char* file, const char* ctx = "") {
    return std::string(LoadKubeconfig(file, ctx).status().message());
  };
  EXPECT_EQ(msg("testdata/kube/exec-plugin.yaml"),
            "testdata/kube/exec-plugin.yaml:10: users[u].user.exec: is not supported; use a token, "
            "a token file or a client certificate");
  EXPECT_EQ(msg("testdata/kube/missing-cluster.yaml"),
            "testdata/kube/missing-cluster.yaml:4: clusters: no entry named \"nowhere\"; add it or "
            "pick another context");
  EXPECT_EQ(
      msg("testdata/kube/bad-base64.yaml"),
      "testdata/kube/bad-base64.yaml:8: clusters[c].cluster.certificate-authority-data: is not "
      "base64");
  EXPECT_EQ(msg("testdata/kube/token.yaml", "staging"),
            "testdata/kube/token.yaml:21: contexts: no entry named \"staging\"; add it or pick "
            "another context");
  EXPECT_EQ(LoadKubeconfig("testdata/kube/absent.yaml").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RestConfigTest, NotYamlIsAnErrorWithALine) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / "gpuplane-kubeconfig-bad.yaml";
  std::ofstream(p) << "clusters: [\n  {name: a\n";
  absl::StatusOr<RestConfig> c = LoadKubeconfig(p.string());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("not YAML"), std::string_view::npos) << c.status();
  std::filesystem::remove(p);
}

TEST(RestConfigTest, InClusterNeedsTheEnvironmentAndAToken) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig().status().code(), absl::StatusCode::kFailedPrecondition);
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpuplane-sa";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "token");
  EXPECT_NE(InClusterConfig(dir.string()).status().message().find("no service account token"),
            std::string_view::npos);
  std::ofstream(dir / "token") << "t0k3n\n";
  absl::StatusOr<RestConfig> c = InClusterConfig(dir.string());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->token_file, (dir / "token").string());
  EXPECT_EQ(c->ca_file, (dir / "ca.crt").string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuplane::kube
