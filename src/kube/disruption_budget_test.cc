#include "kube/disruption_budget.h"

#include <gtest/gtest.h>

namespace gpuplane::kube {
namespace {

using nlohmann::json;

const std::map<std::string, std::string> kLabels = {{"app", "train"}, {"team", "nlp"}};

TEST(SelectsTest, EmptySelectsEveryPodAndNullNone) {
  EXPECT_TRUE(Selects(json::object(), kLabels));  // policy/v1: an empty selector selects all
  EXPECT_FALSE(Selects(json(), kLabels));
  EXPECT_FALSE(Selects(json::array(), kLabels));
}

TEST(SelectsTest, MatchLabelsNeedsEveryPair) {
  EXPECT_TRUE(Selects({{"matchLabels", {{"app", "train"}}}}, kLabels));
  EXPECT_FALSE(Selects({{"matchLabels", {{"app", "train"}, {"team", "cv"}}}}, kLabels));
  EXPECT_FALSE(Selects({{"matchLabels", {{"zone", "a"}}}}, kLabels));
  EXPECT_FALSE(Selects({{"matchLabels", {{"app", 1}}}}, kLabels));
}

TEST(SelectsTest, EachOperatorOfMatchExpressions) {
  auto expr = [](const std::string& key, const std::string& op, json values) {
    json e = {{"key", key}, {"operator", op}};
    if (!values.is_null()) e["values"] = std::move(values);
    return json{{"matchExpressions", json::array({e})}};
  };
  EXPECT_TRUE(Selects(expr("team", "In", {"cv", "nlp"}), kLabels));
  EXPECT_FALSE(Selects(expr("team", "In", {"cv"}), kLabels));
  EXPECT_FALSE(Selects(expr("zone", "In", {"a"}), kLabels));
  EXPECT_TRUE(Selects(expr("team", "NotIn", {"cv"}), kLabels));
  EXPECT_FALSE(Selects(expr("team", "NotIn", {"nlp"}), kLabels));
  EXPECT_TRUE(Selects(expr("zone", "NotIn", {"a"}), kLabels));  // absent: not in the set
  EXPECT_TRUE(Selects(expr("app", "Exists", nullptr), kLabels));
  EXPECT_FALSE(Selects(expr("zone", "Exists", nullptr), kLabels));
  EXPECT_TRUE(Selects(expr("zone", "DoesNotExist", nullptr), kLabels));
  EXPECT_FALSE(Selects(expr("app", "DoesNotExist", nullptr), kLabels));
  EXPECT_FALSE(Selects(expr("app", "Gt", {"1"}), kLabels));  // not a label-selector operator
  // Both parts must hold.
  json both = expr("team", "In", {"nlp"});
  both["matchLabels"] = {{"app", "serve"}};
  EXPECT_FALSE(Selects(both, kLabels));
}

TEST(BudgetsTest, ReadsNamespaceSelectorAndAllowedDisruptions) {
  std::vector<json> pdbs = {
      {{"metadata", {{"namespace", "ml"}}},
       {"spec", {{"selector", {{"matchLabels", {{"app", "train"}}}}}}},
       {"status", {{"disruptionsAllowed", 2}}}},
      {{"metadata", {{"namespace", "ml"}}}, {"spec", json::object()}},  // no status yet
      {{"metadata", {{"namespace", "ml"}}},
       {"spec", {{"selector", json::object()}}},
       {"status", {{"disruptionsAllowed", "2"}}}},
  };
  std::vector<DisruptionBudget> b = Budgets(pdbs);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].allowed, 2);
  EXPECT_TRUE(Covers(b[0], "ml", kLabels));
  EXPECT_FALSE(Covers(b[0], "prod", kLabels));  // another namespace
  EXPECT_EQ(b[1].allowed, 0);
  EXPECT_FALSE(Covers(b[1], "ml", kLabels));  // no selector: selects nothing
  EXPECT_EQ(b[2].allowed, 0);                 // not an integer: read as absent
  EXPECT_TRUE(Covers(b[2], "ml", kLabels));
}

}  // namespace
}  // namespace gpuplane::kube
