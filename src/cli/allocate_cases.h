// `gpuplane allocate --cases FILE.jsonl`: many small allocation instances in one process (the
// differential test against Kubernetes' allocator feeds thousands). Each line is
//   {"objects": TEXT, "claims": TEXT, "node": NAME, "check": TEXT?}
// with TEXT a YAML or JSON document stream: the cluster (as --objects), the work (as
// --claims, allocated on NODE with every allocation verified), and optionally ResourceClaims
// allocated elsewhere to verify as one pod's claims on NODE. One JSON line per case, in order:
//   {"allocated": B, "claims": [{"claim", "results"}], "reasons": [...], "check": PROBLEM?}
// ("check" is "" when the other allocation is valid), or {"error": MESSAGE, "exit": CODE} for a
// case that cannot be read (exit 2, naming the file, case line and object) or that fails
// inside (exit 3: the verifier rejecting gpuplane's own allocation is one). Main thread only.
#ifndef GPUPLANE_CLI_ALLOCATE_CASES_H_
#define GPUPLANE_CLI_ALLOCATE_CASES_H_

#include <string>

#include "api/resource_types.h"
#include "nlohmann/json.hpp"

namespace gpuplane::cli {

// One claim's allocation results in the shape `allocate -o json` prints.
nlohmann::ordered_json ResultsJson(const api::AllocationResult& a);

// Exit 0 when every case ran (allocated or not), else the largest case exit ("-": stdin).
int RunAllocateCases(const std::string& path);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_ALLOCATE_CASES_H_
