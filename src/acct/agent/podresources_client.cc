#include "acct/agent/podresources_client.h"

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>

#include "acct/sources.h"
#include "podresources.grpc.pb.h"
#include "util/strings.h"

namespace gpuplane::acct {

absl::StatusOr<std::string> ListPodResourcesJson(const std::string& socket_path,
                                                 double timeout_seconds) {
  if (!std::filesystem::exists(socket_path)) {
    return absl::UnavailableError(util::Cat(
        "kubelet PodResources socket ", socket_path,
        " does not exist; mount /var/lib/kubelet/pod-resources into the agent (see deploy/)"));
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(util::Cat("unix://", socket_path), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::PodResourcesLister::Stub> stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::microseconds(static_cast<int64_t>(timeout_seconds * 1e6)));
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(util::Cat("kubelet PodResources List on ", socket_path,
                                            " failed: ", status.error_message(),
                                            "; check that the kubelet runs and the socket is "
                                            "readable by the agent"));
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = false;
  if (!google::protobuf::util::MessageToJsonString(response, &json, options).ok()) {
    return absl::InternalError("PodResources List response could not be converted to JSON");
  }
  if (json == "{}") json = R"({"podResources":[]})";
  return json;
}

absl::StatusOr<Ownership> ListPodResources(const std::string& socket_path,
                                           const std::map<int, std::string>& uuid_by_index,
                                           double timeout_seconds) {
  absl::StatusOr<std::string> json = ListPodResourcesJson(socket_path, timeout_seconds);
  if (!json.ok()) return json.status();
  return ParsePodResourcesJson(*json, util::Cat("PodResources List on ", socket_path),
                               uuid_by_index);
}

}  // namespace gpuplane::acct
