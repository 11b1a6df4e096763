// The PodResources client against an in-process gRPC server implementing the kubelet's
// v1.PodResourcesLister service on a unix socket.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <filesystem>

#include "acct/agent/podresources_client.h"
#include "gtest/gtest.h"
#include "podresources.grpc.pb.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext* /*context*/, const v1::ListPodResourcesRequest* /*req*/,
                    v1::ListPodResourcesResponse* response) override {
    ++calls;
    v1::PodResources* train = response->add_pod_resources();
    train->set_name("train-0");
    train->set_namespace_("team-a");
    v1::ContainerResources* c = train->add_containers();
    c->set_name("main");
    v1::ContainerDevices* d = c->add_devices();
    d->set_resource_name("nvidia.com/gpu");
    d->add_device_ids("GPU-aaaa::0");
    d->add_device_ids("GPU-aaaa::1");  // two time-slicing replicas of one GPU
    c->add_cpu_ids(3);
    v1::PodResources* infer = response->add_pod_resources();
    infer->set_name("infer-0");
    infer->set_namespace_("team-b");
    v1::ContainerResources* s = infer->add_containers();
    s->set_name("server");
    v1::DynamicResource* dr = s->add_dynamic_resources();
    dr->set_claim_name("gpu-claim");
    dr->set_claim_namespace("team-b");
    v1::ClaimResource* r = dr->add_claim_resources();
    r->set_driver_name("gpu.nvidia.com");
    r->set_pool_name("node-1");
    r->set_device_name("gpu-1");
    r->add_cdi_devices()->set_name("nvidia.com/gpu=gpu-1");
    return grpc::Status::OK;
  }
  int calls = 0;
};

std::string SocketPath() {
  return util::Cat(::testing::TempDir(), "/podresources_", ::getpid(), ".sock");
}

TEST(PodResourcesTest, ListOverRealGrpc) {
  std::string socket = SocketPath();
  std::filesystem::remove(socket);
  FakeKubelet kubelet;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(util::Cat("unix://", socket), grpc::InsecureServerCredentials());
  builder.RegisterService(&kubelet);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  absl::StatusOr<Ownership> own = ListPodResources(socket, {{0, "GPU-aaaa"}, {1, "GPU-bbbb"}});
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(kubelet.calls, 1);
  ASSERT_EQ(own->owners.size(), 2u);
  const std::vector<ContainerRef>& a = own->owners.at("GPU-aaaa");
  ASSERT_EQ(a.size(), 2u) << "each time-slicing replica counts";
  EXPECT_EQ(a[0], (ContainerRef{"team-a", "train-0", "main"}));
  const std::vector<ContainerRef>& b = own->owners.at("GPU-bbbb");
  ASSERT_EQ(b.size(), 1u) << "DRA device gpu-1 is the GPU with index 1";
  EXPECT_EQ(b[0], (ContainerRef{"team-b", "infer-0", "server"}));

  server->Shutdown();
  std::filesystem::remove(socket);
}

TEST(PodResourcesTest, MissingSocketSaysWhatToMount) {
  absl::StatusOr<Ownership> own = ListPodResources("/nonexistent/kubelet.sock", {});
  ASSERT_FALSE(own.ok());
  EXPECT_NE(std::string(own.status().message()).find("/nonexistent/kubelet.sock"),
            std::string::npos);
  EXPECT_NE(std::string(own.status().message()).find("mount"), std::string::npos);
}

TEST(PodResourcesTest, DeadSocketFailsWithinTheDeadline) {
  std::string socket = SocketPath() + ".dead";
  FILE* f = std::fopen(socket.c_str(), "w");  // a file where a socket should be
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  absl::StatusOr<Ownership> own = ListPodResources(socket, {}, 0.5);
  EXPECT_FALSE(own.ok());
  EXPECT_NE(std::string(own.status().message()).find("List"), std::string::npos);
  std::filesystem::remove(socket);
}

}  // namespace
}  // namespace gpuplane::acct
