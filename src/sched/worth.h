// What a device is worth to the rest of the work, so a pod that fits several GPU models takes
// the one whose loss costs least (a 40 GiB job takes a free H100 before the B200 a 150 GiB
// job needs). From prices when given (dollars per GPU-hour by product name, as the
// accounting side's prices file has them, with an optional "default"), else from the device
// itself: memory in GiB times CUDA compute capability (9.0 for Hopper). Devices without
// either are worth 0. Pure functions; thread-safe.
#ifndef GPUPLANE_SCHED_WORTH_H_
#define GPUPLANE_SCHED_WORTH_H_

#include <map>
#include <string>
#include <vector>

#include "model/inventory.h"

namespace gpuplane::sched {

// Per device of the inventory.
std::vector<double> DeviceWorth(const model::Inventory& inv,
                                const std::map<std::string, double>& prices);

// Per node of the inventory: the worth of its most valuable device (`device_worth` as
// DeviceWorth returns it).
std::vector<double> NodeWorth(const model::Inventory& inv, const std::vector<double>& device_worth);

}  // namespace gpuplane::sched

#endif  // GPUPLANE_SCHED_WORTH_H_
