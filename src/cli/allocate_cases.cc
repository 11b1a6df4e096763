#include "cli/allocate_cases.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <utility>
#include <vector>

#include "alloc/batch.h"
#include "api/loader.h"
#include "cli/exit_codes.h"
#include "util/strings.h"

namespace gpuplane::cli {
namespace {

// The objects of one text field, or the first error (with the field, line and object).
absl::StatusOr<std::vector<api::SourcedObject>> Objects(const nlohmann::json& c,
                                                        const std::string& field,
                                                        const std::string& where) {
  if (!c.contains(field) || !c[field].is_string()) {
    return absl::InvalidArgumentError(util::Cat(where, ": \"", field, "\" must be a string"));
  }
  const std::string& text = c[field].get_ref<const std::string&>();
  api::Loader loader;
  const std::string file = util::Cat(where, " ", field);
  loader.AddText(text, file, api::DetectFormat(file, text));
  api::LoadResult r = loader.Finish();
  for (const api::Diagnostic& d : r.diagnostics) {
    if (d.is_error()) return absl::InvalidArgumentError(d.ToString());
  }
  return std::move(r.objects);
}

absl::StatusOr<nlohmann::ordered_json> RunCase(const nlohmann::json& c, const std::string& where) {
  if (!c.is_object() || !c.contains("node") || !c["node"].is_string()) {
    return absl::InvalidArgumentError(where + ": a case is an object with \"node\" (a string)");
  }
  const std::string node = c["node"].get<std::string>();
  absl::StatusOr<std::vector<api::SourcedObject>> objects = Objects(c, "objects", where);
  if (!objects.ok()) return objects.status();
  absl::StatusOr<std::vector<api::SourcedObject>> work = Objects(c, "claims", where);
  if (!work.ok()) return work.status();
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (c.contains("check")) {
    absl::StatusOr<std::vector<api::SourcedObject>> check = Objects(c, "check", where);
    if (!check.ok()) return check.status();
    absl::StatusOr<std::string> problem = alloc::VerifyAllocatedClaims(*objects, *check, node);
    if (!problem.ok()) return problem.status();
    out["check"] = *problem;
  }
  absl::StatusOr<alloc::BatchResult> batch =
      alloc::AllocateInOrder(*objects, *work, node, alloc::Verification::kVerify);
  if (!batch.ok()) return batch.status();
  bool allocated = !batch->claims.empty();
  nlohmann::ordered_json claims = nlohmann::ordered_json::array();
  std::vector<std::string> reasons;
  for (const alloc::ClaimOutcome& o : batch->claims) {
    allocated = allocated && o.allocated;
    nlohmann::ordered_json j = {
        {"claim", o.claim.metadata.namespace_name + "/" + o.claim.metadata.name}};
    if (o.allocated) j["results"] = ResultsJson(*o.claim.status.allocation);
    claims.push_back(j);
    if (reasons.empty()) reasons = o.reasons;
  }
  out["allocated"] = allocated;
  out["claims"] = claims;
  out["reasons"] = reasons;
  return out;
}

}  // namespace

nlohmann::ordered_json ResultsJson(const api::AllocationResult& a) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const api::DeviceRequestAllocationResult& r : a.devices.results) {
    nlohmann::ordered_json j = {
        {"request", r.request}, {"driver", r.driver}, {"pool", r.pool}, {"device", r.device}};
    if (r.share_id) j["shareID"] = *r.share_id;
    if (!r.consumed_capacity.empty()) {
      nlohmann::ordered_json cap = nlohmann::ordered_json::object();
      for (const auto& [k, q] : r.consumed_capacity) cap[k] = q.String();
      j["consumedCapacity"] = cap;
    }
    if (r.admin_access.value_or(false)) j["adminAccess"] = true;
    results.push_back(j);
  }
  return results;
}

int RunAllocateCases(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) return Fail("allocate", absl::NotFoundError("--cases " + path + ": cannot read it"));
  }
  std::istream& in = path == "-" ? std::cin : file;
  int rc = kExitOk;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::string where = util::Cat(path, ":", number);
    nlohmann::json c = nlohmann::json::parse(line, nullptr, false);
    absl::StatusOr<nlohmann::ordered_json> result =
        c.is_discarded() ? absl::InvalidArgumentError(where + ": not JSON") : RunCase(c, where);
    if (!result.ok()) {
      const int exit = Fail("allocate", result.status());
      result =
          nlohmann::ordered_json{{"error", std::string(result.status().message())}, {"exit", exit}};
      rc = std::max(rc, exit);
    }
    std::printf("%s\n", result->dump().c_str());
  }
  return rc;
}

}  // namespace gpuplane::cli
