// Claims normalized for allocation: each request becomes an ordered list of alternatives
// (one for `exactly`, one per firstAvailable subrequest, tried in order), each with its
// DeviceClass and request selectors compiled, and constraints refer to requests by index.
// Immutable after Compile; safe to share across threads. A CompiledClaim owns its compiled
// selectors (shared with the SelectorCache that made them) and borrows nothing; its capacity
// ids are those of the Inventory it was compiled against, and mean nothing with another.
#ifndef GPUPLANE_ALLOC_REQUEST_H_
#define GPUPLANE_ALLOC_REQUEST_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/resource_types.h"
#include "cel/program.h"
#include "model/inventory.h"

namespace gpuplane::alloc {

struct Selector {
  cel::Program program;  // its source() is the expression
  bool from_class;       // a DeviceClass selector (else the request's own)
};

// One consumable-capacity request, resolved to the published capacities its name denotes: a
// requested "gpu.nvidia.com/memory" names a published "gpu.nvidia.com/memory" or "memory".
struct CapacityRequest {
  std::vector<model::CapacityId> ids;  // empty when no device publishes such a capacity
  api::Quantity amount;
};

struct Alternative {
  std::string result_name;  // "gpu" or "gpu/small", as results name it
  std::string class_name;
  bool class_config = false;        // the DeviceClass has config (results carry it)
  std::vector<Selector> selectors;  // class selectors first
  bool all = false;                 // allocationMode All
  int64_t count = 1;                // ExactCount
  bool admin_access = false;
  std::vector<api::Toleration> tolerations;
  std::map<std::string, api::Quantity> capacity;  // consumable capacity requests
  std::vector<CapacityRequest> capacity_ids;      // the same, in the same order
  // What decides which devices pass the static filters (class, selectors, tolerations, admin
  // access), as one string: alternatives with equal keys filter alike (the node index
  // interns them by it). Shared: copies of a compiled claim share it.
  std::shared_ptr<const std::string> filter_key;
};

struct CompiledRequest {
  std::string name;
  std::vector<Alternative> alternatives;
};

struct CompiledConstraint {
  // The constrained requests: index into CompiledClaim::requests and the reference as written
  // ("gpu" constrains every alternative of request gpu; "gpu/small" only that subrequest).
  std::vector<std::pair<size_t, std::string>> requests;
  std::string attribute;  // fully qualified
  bool distinct = false;  // distinctAttribute (else matchAttribute)
};

struct CompiledClaim {
  std::string ns;
  std::string name;
  std::vector<CompiledRequest> requests;
  std::vector<CompiledConstraint> constraints;
  std::vector<api::DeviceClaimConfiguration> config;
};

// Caches compiled CEL programs by expression text, so thousands of claims with the same
// selectors compile each expression once. Not thread-safe.
class SelectorCache {
 public:
  absl::StatusOr<cel::Program> Get(const std::string& expression);

 private:
  std::map<std::string, cel::Program, std::less<>> programs_;
};

// Whether `tolerations` tolerate a device taint (effect None is informational only).
bool Tolerates(const std::vector<api::Toleration>& tolerations, const api::Taint& taint);

// Errors name the claim and the field (unknown DeviceClass, a selector that does not
// compile, a constraint naming no request).
absl::StatusOr<CompiledClaim> CompileClaim(const std::string& ns, const std::string& name,
                                           const api::ResourceClaimSpec& spec,
                                           const model::Inventory& inventory, SelectorCache& cache);

}  // namespace gpuplane::alloc

#endif  // GPUPLANE_ALLOC_REQUEST_H_
