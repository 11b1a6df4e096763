// Kubernetes NodeSelector matching (matchExpressions on labels, matchFields on
// metadata.name): terms are ORed, requirements within a term ANDed; a term with neither matches
// no node. Pure functions.
#ifndef GPUPLANE_MODEL_NODE_SELECTOR_H_
#define GPUPLANE_MODEL_NODE_SELECTOR_H_

#include <map>
#include <string>

#include "api/meta.h"

namespace gpuplane::model {

bool MatchesNodeSelectorTerm(const api::NodeSelectorTerm& term, const std::string& node_name,
                             const std::map<std::string, std::string>& labels);

bool MatchesNodeSelector(const api::NodeSelector& selector, const std::string& node_name,
                         const std::map<std::string, std::string>& labels);

}  // namespace gpuplane::model

#endif  // GPUPLANE_MODEL_NODE_SELECTOR_H_
