#include "sched/storage_capacity.h"

#include <gtest/gtest.h>

#include <deque>

#include "api/testing.h"
#include "sched/pod_topology.h"

namespace gpuplane::sched {
namespace {

api::CSIStorageCapacity Capacity(std::optional<api::LabelSelector> topology, int64_t capacity,
                                 int64_t maximum = -1) {
  api::CSIStorageCapacity c;
  c.node_topology = std::move(topology);
  if (capacity >= 0) c.capacity = api::Quantity::FromUnits(capacity);
  if (maximum >= 0) c.maximum_volume_size = api::Quantity::FromUnits(maximum);
  return c;
}

TEST(StorageCapacities, EveryMatchLabelAndExpressionMustHold) {
  api::LabelSelector both;
  both.match_labels = {{"node", "n0"}, {"rack", "r0"}};
  api::LabelSelector fast;
  fast.match_expressions = {{"disk", "In", {"nvme"}}};
  std::deque<api::CSIStorageCapacity> objects = {Capacity(both, 100), Capacity(fast, 10),
                                                 Capacity(std::nullopt, 1000)};
  StorageCapacities caps;
  for (const api::CSIStorageCapacity& c : objects) caps.Add(c);
  const api::Quantity want = api::Quantity::FromUnits(50);
  EXPECT_TRUE(caps.HasRoom({{"node", "n0"}, {"rack", "r0"}}, want));
  EXPECT_FALSE(caps.HasRoom({{"node", "n0"}, {"rack", "r1"}}, want));  // the second label
  EXPECT_FALSE(caps.HasRoom({{"disk", "nvme"}}, want));                // 10 is too little
  EXPECT_TRUE(caps.HasRoom({{"disk", "nvme"}}, api::Quantity::FromUnits(10)));
  EXPECT_FALSE(caps.HasRoom({}, api::Quantity::FromUnits(1)));  // no topology: no node
}

// The index finds what a walk over every object finds, for random selectors, sizes and nodes.
TEST(StorageCapacities, FindsWhatAWalkOverEveryObjectFinds) {
  api::testing::Rand r{std::mt19937(7)};
  const std::vector<std::string> keys = {"node", "rack", "zone", "disk"};
  auto value = [&] { return std::string(1, static_cast<char>('a' + r.Int(0, 2))); };
  for (int round = 0; round < 300; ++round) {
    std::deque<api::CSIStorageCapacity> objects;
    for (int i = r.Int(0, 8); i > 0; --i) {
      std::optional<api::LabelSelector> s;
      if (!r.Chance(0.1)) {
        s.emplace();
        for (const std::string& k : keys) {
          if (r.Chance(0.3)) s->match_labels[k] = value();
          if (r.Chance(0.15)) s->match_expressions.push_back({k, "In", {value(), value()}});
        }
      }
      objects.push_back(
          Capacity(s, r.Chance(0.2) ? -1 : r.Int(0, 100), r.Chance(0.5) ? -1 : r.Int(0, 100)));
    }
    StorageCapacities caps;
    for (const api::CSIStorageCapacity& c : objects) caps.Add(c);
    for (int node = 0; node < 20; ++node) {
      std::map<std::string, std::string> labels;
      for (const std::string& k : keys) {
        if (r.Chance(0.7)) labels[k] = value();
      }
      const api::Quantity want = api::Quantity::FromUnits(r.Int(0, 100));
      bool walk = false;
      for (const api::CSIStorageCapacity& c : objects) {
        const std::optional<api::Quantity>& limit =
            c.maximum_volume_size ? c.maximum_volume_size : c.capacity;
        walk = walk || (c.node_topology && limit && *limit >= want &&
                        MatchesLabels(*c.node_topology, labels));
      }
      ASSERT_EQ(caps.HasRoom(labels, want), walk) << "round " << round << " node " << node;
    }
  }
}

}  // namespace
}  // namespace gpuplane::sched
