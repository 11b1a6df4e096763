// "Did you mean ...?" for a misspelled name: the closest of the known names by edit distance
// (insertions, deletions, substitutions and swaps of neighbours count one each; letters
// compared without case), offered when it is within max(1, length / 3) edits of what was
// typed. Pure functions; thread-safe.
#ifndef GPUPLANE_UTIL_SUGGEST_H_
#define GPUPLANE_UTIL_SUGGEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplane::util {

// The closest candidate close enough, the first of equals; nullopt when none is, or when
// `name` is itself a candidate.
std::optional<std::string> Closest(std::string_view name,
                                   const std::vector<std::string>& candidates);

// "; did you mean \"NAME\"?" for the closest candidate, or "" when none is close.
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace gpuplane::util

#endif  // GPUPLANE_UTIL_SUGGEST_H_
