#include "alloc/selector_memo.h"

#include <set>

#include "api/loader.h"
#include "cel/device_env.h"
#include "gtest/gtest.h"

namespace gpuplane::alloc {
namespace {

using Result = SelectorMemo::Result;

class SelectorMemoTest : public ::testing::Test {
 protected:
  SelectorMemoTest()
      : objects_(*api::LoadPaths({std::string(GPUPLANE_SOURCE_DIR) + "/examples/cluster"})),
        inv_(model::Inventory::Build(objects_.objects)) {}

  static cel::Program Compile(const std::string& expression) {
    return *cel::Program::Compile(expression, cel::DeviceSelectorOptions());
  }

  // The plain evaluation the memo must agree with.
  Result Direct(const cel::Program& p, model::DeviceId d) const {
    const model::DeviceInfo& info = inv_.devices()[d];
    cel::Value v = p.Evaluate(
        cel::DeviceActivation(cel::DeviceValue(inv_.pools()[info.pool].driver, *info.spec)));
    if (v.is_error() || v.kind() != cel::Kind::kBool) return Result::kError;
    return v.bool_value() ? Result::kMatch : Result::kNoMatch;
  }

  api::LoadResult objects_;
  model::Inventory inv_;
};

TEST_F(SelectorMemoTest, AgreesWithEvaluationAndEvaluatesEachDeviceOnce) {
  ASSERT_GT(inv_.devices().size(), 4u);
  SelectorMemo memo(inv_);
  const cel::Program memory =
      Compile("device.capacity[device.driver].memory.compareTo(quantity(\"40Gi\")) >= 0");
  const cel::Program error = Compile("device.attributes[device.driver].noSuchAttribute == 1");
  for (int round = 0; round < 3; ++round) {
    for (model::DeviceId d = 0; d < inv_.devices().size(); ++d) {
      EXPECT_EQ(memo.Evaluate(memory, d), Direct(memory, d)) << "device " << d;
      EXPECT_EQ(memo.Evaluate(error, d), Direct(error, d)) << "device " << d;
    }
  }
  const auto n = static_cast<int64_t>(inv_.devices().size());
  EXPECT_EQ(memo.evaluations(), 2 * n);
  EXPECT_EQ(memo.hits(), 4 * n);
  EXPECT_EQ(memo.Evaluate(error, 0), Result::kError);
  EXPECT_NE(memo.ErrorText(error, 0).find("noSuchAttribute"), std::string::npos)
      << memo.ErrorText(error, 0);
}

TEST_F(SelectorMemoTest, CopiesShareAnEntryAndSeparateCompilesDoNot) {
  SelectorMemo memo(inv_);
  const cel::Program a = Compile("device.driver != \"\"");
  const cel::Program copy = a;  // NOLINT(performance-unnecessary-copy-initialization)
  const cel::Program again = Compile("device.driver != \"\"");
  memo.Evaluate(a, 0);
  memo.Evaluate(copy, 0);
  EXPECT_EQ(memo.evaluations(), 1);
  memo.Evaluate(again, 0);
  EXPECT_EQ(memo.evaluations(), 2);
}

TEST_F(SelectorMemoTest, DevicesAlikeForASelectorShareOneEvaluation) {
  SelectorMemo memo(inv_);
  // Reads product and memory only: the GPUs of one node differ in index and UUID, not in these.
  const cel::Program product = Compile(
      "device.attributes[\"gpu.nvidia.com\"].productName.lowerAscii().contains(\"h100\") && "
      "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0");
  std::set<std::string> alike;
  for (model::DeviceId d = 0; d < inv_.devices().size(); ++d) {
    EXPECT_EQ(memo.Evaluate(product, d), Direct(product, d)) << "device " << d;
    const model::DeviceInfo& info = inv_.devices()[d];
    std::string key;
    cel::AppendDeviceReadKey(inv_.pools()[info.pool].driver, *info.spec, *cel::DeviceReads(product),
                             &key);
    alike.insert(key);
  }
  const auto n = static_cast<int64_t>(inv_.devices().size());
  EXPECT_EQ(memo.evaluations(), static_cast<int64_t>(alike.size()));
  EXPECT_EQ(memo.shared(), n - memo.evaluations());
  EXPECT_LT(memo.evaluations(), n / 2);
}

}  // namespace
}  // namespace gpuplane::alloc
