// The JSON form of an attribution, shared by `gpuplane attribute` and the agent's
// /attribution endpoint: {"pods":[...],"devices":[...],"audit":[...]} (docs/ACCOUNTING.md).
// A pure function returning a string; thread-safe.
#ifndef GPUPLANE_ACCT_ATTRIBUTION_JSON_H_
#define GPUPLANE_ACCT_ATTRIBUTION_JSON_H_

#include <string>

#include "acct/attribution.h"

namespace gpuplane::acct {

// One line of JSON, newline-terminated. Costs in dollars, seconds rounded to microseconds.
std::string AttributionJson(const Attribution& a);

}  // namespace gpuplane::acct

#endif  // GPUPLANE_ACCT_ATTRIBUTION_JSON_H_
