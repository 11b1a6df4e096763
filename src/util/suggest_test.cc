// Suggestions: typos one or two edits away are offered, far names and exact names are not.
#include "util/suggest.h"

#include "gtest/gtest.h"

namespace gpuplane::util {
namespace {

const std::vector<std::string> kPolicies = {"random",  "dotprod", "clustering", "packing",
                                            "bestfit", "fgd",     "k8s",        "gpuplane"};

TEST(SuggestTest, CloseNamesAreOffered) {
  EXPECT_EQ(Closest("gpuplan", kPolicies), "gpuplane");  // a deletion
  EXPECT_EQ(Closest("bestfti", kPolicies), "bestfit");   // a swap of neighbours
  EXPECT_EQ(Closest("Packing", kPolicies), "packing");   // case
  EXPECT_EQ(Closest("fdg", kPolicies), "fgd");           // short names: one edit
  EXPECT_EQ(DidYouMean("clustring", kPolicies), "; did you mean \"clustering\"?");
}

TEST(SuggestTest, FarOrExactNamesAreNot) {
  EXPECT_EQ(Closest("kubernetes", kPolicies), std::nullopt);
  EXPECT_EQ(Closest("xyz", kPolicies), std::nullopt);
  EXPECT_EQ(Closest("fgd", kPolicies), std::nullopt);  // exact: nothing to suggest
  EXPECT_EQ(Closest("gpu", {}), std::nullopt);
  EXPECT_EQ(DidYouMean("zzzzzz", kPolicies), "");
}

TEST(SuggestTest, TheFirstOfEqualCandidatesWins) {
  EXPECT_EQ(Closest("gpu.nvidia.co", {"gpu.nvidia.com", "gpu.nvidia.cm"}), "gpu.nvidia.com");
}

}  // namespace
}  // namespace gpuplane::util
