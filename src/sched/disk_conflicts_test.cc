#include "sched/disk_conflicts.h"

#include <gtest/gtest.h>

namespace gpuplane::sched {
namespace {

InlineDisk Gce(const std::string& name, bool read_only) {
  return {InlineDisk::Kind::kGcePd, name, {}, read_only};
}

TEST(DiskConflicts, ReadOnlyOnBothSidesSharesWhereTheDiskAllowsIt) {
  EXPECT_TRUE(Conflict(Gce("data", false), Gce("data", true)));
  EXPECT_FALSE(Conflict(Gce("data", true), Gce("data", true)));
  EXPECT_FALSE(Conflict(Gce("data", false), Gce("other", false)));
  // An EBS volume is never shared, read-only or not; ids compare as written.
  InlineDisk ebs{InlineDisk::Kind::kAwsEbs, "vol-1", {}, true};
  EXPECT_TRUE(Conflict(ebs, ebs));
  EXPECT_FALSE(Conflict(ebs, {InlineDisk::Kind::kAwsEbs, "aws://us-east-1a/vol-1", {}, true}));
  // Same id, other kind: no conflict.
  EXPECT_FALSE(Conflict(Gce("vol-1", false), {InlineDisk::Kind::kAwsEbs, "vol-1", {}, false}));
}

TEST(DiskConflicts, RbdImagesConflictThroughACommonMonitor) {
  InlineDisk a{InlineDisk::Kind::kRbd, "rbd/img", {"10.0.0.1:6789", "10.0.0.2:6789"}, false};
  InlineDisk b{InlineDisk::Kind::kRbd, "rbd/img", {"10.0.0.2:6789"}, false};
  InlineDisk c{InlineDisk::Kind::kRbd, "rbd/img", {"10.0.0.3:6789"}, false};
  EXPECT_TRUE(Conflict(a, b));
  EXPECT_FALSE(Conflict(a, c));  // another Ceph cluster's image of the same name
  b.read_only = a.read_only = true;
  EXPECT_FALSE(Conflict(a, b));
}

TEST(DiskConflicts, ReadFromThePodsInlineVolumes) {
  api::PodSpec spec;
  auto volume = [](const std::string& name, const std::string& source,
                   const std::vector<std::pair<std::string, std::string>>& fields) {
    api::Volume v;
    v.name = name;
    api::Doc map = api::Doc::Map();
    for (const auto& [k, val] : fields) map.Add(k, api::Doc::Scalar(api::Doc::Kind::kString, val));
    v.extra.emplace(source, std::move(map));
    return v;
  };
  spec.volumes.push_back(volume("a", "gcePersistentDisk", {{"pdName", "data"}}));
  spec.volumes.push_back(volume("b", "iscsi", {{"iqn", "iqn.2001-04.com.example:t"}}));
  spec.volumes.push_back(volume("c", "rbd", {{"image", "img"}}));
  spec.volumes.push_back(volume("d", "nfs", {{"server", "nfs.example.com"}}));
  std::vector<InlineDisk> disks = InlineDisksOf(spec);
  ASSERT_EQ(disks.size(), 3u);
  EXPECT_EQ(disks[0], Gce("data", false));
  EXPECT_EQ(disks[1].kind, InlineDisk::Kind::kIscsi);
  EXPECT_EQ(disks[2].id, "rbd/img");  // the pool the API server defaults
  EXPECT_TRUE(AnyDiskConflict({Gce("data", true)}, disks));
  EXPECT_EQ(FirstDiskConflict({Gce("data", true)}, disks), &disks[0]);
  EXPECT_EQ(Describe(disks[0]), "GCE PD data (read-write)");
  EXPECT_FALSE(AnyDiskConflict({Gce("other", false)}, disks));
}

}  // namespace
}  // namespace gpuplane::sched
