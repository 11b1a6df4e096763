// Checks that span Queue objects, run when loading finishes (loader.cc): parents exist and
// form no cycle, namespaces belong to leaf queues and to one queue each, children's
// guarantees fit their parent's. Internal to api/; a pure function of the objects it is given,
// appending to `out`; thread-safe.
#ifndef GPUPLANE_API_INTERNAL_QUEUE_CHECKS_H_
#define GPUPLANE_API_INTERNAL_QUEUE_CHECKS_H_

#include "api/loader.h"

namespace gpuplane::api::internal {

void CheckQueues(const ObjectRefs& objects, std::vector<Diagnostic>& out);

}  // namespace gpuplane::api::internal

#endif  // GPUPLANE_API_INTERNAL_QUEUE_CHECKS_H_
