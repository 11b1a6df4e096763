// Simulated nodes from a cluster's DRA objects (what `gpuplane allocate --objects` reads):
// each node's GPUs are its devices whose "type" attribute is "gpu" (NVIDIA's driver; every
// device when no device has a type), the model is the devices' productName (else the driver),
// and CPU and memory come from the Node object's status.capacity (16 cores and 64 GiB per GPU
// when there is no Node object). A pure function returning values (the objects are borrowed
// for the call); thread-safe.
#ifndef GPUPLANE_SIM_DRA_NODES_H_
#define GPUPLANE_SIM_DRA_NODES_H_

#include <vector>

#include "api/object.h"
#include "sim/trace.h"

namespace gpuplane::sim {

std::vector<TraceNode> NodesFromObjects(const std::vector<api::SourcedObject>& objects);

}  // namespace gpuplane::sim

#endif  // GPUPLANE_SIM_DRA_NODES_H_
