#include "sched/csi_migration.h"

#include <gtest/gtest.h>

#include "api/doc.h"

namespace gpuplane::sched {
namespace {

// One in-tree source with one field, as a PersistentVolume's spec or a pod's volume keeps it.
api::Passthrough Source(const std::string& source, const std::string& field,
                        const std::string& value) {
  api::Doc map = api::Doc::Map();
  map.Add(field, api::Doc::String(value));
  return {{source, map}};
}

TEST(CsiMigration, AwsEbsVolumeIdsAsTheCsiDriverNamesThem) {
  auto ebs = [](const std::string& id) {
    return MigratedVolume(Source("awsElasticBlockStore", "volumeID", id), nullptr);
  };
  EXPECT_EQ(ebs("vol-0abc"), (CsiVolume{"ebs.csi.aws.com", "ebs.csi.aws.com/vol-0abc"}));
  EXPECT_EQ(ebs("aws://us-east-1a/vol-0abc"),
            (CsiVolume{"ebs.csi.aws.com", "ebs.csi.aws.com/vol-0abc"}));
  EXPECT_EQ(ebs("aws:///vol-0abc"), (CsiVolume{"ebs.csi.aws.com", "ebs.csi.aws.com/vol-0abc"}));
  EXPECT_EQ(ebs("aws://us-east-1a/disk-0abc"), std::nullopt);  // kube cannot translate it
  EXPECT_EQ(ebs("aws://us-east-1a/a/vol-0abc"), std::nullopt);
}

TEST(CsiMigration, GcePdHandlesByTheVolumesZones) {
  api::Passthrough pd = Source("gcePersistentDisk", "pdName", "data");
  const std::string driver = "pd.csi.storage.gke.io/";
  EXPECT_EQ(MigratedVolume(pd, nullptr)->id,
            driver + "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/data");
  std::map<std::string, std::string> labels = {{"topology.kubernetes.io/zone", "us-central1-a"}};
  EXPECT_EQ(MigratedVolume(pd, &labels)->id,
            driver + "projects/UNSPECIFIED/zones/us-central1-a/disks/data");
  labels["failure-domain.beta.kubernetes.io/zone"] = "us-central1-a__us-central1-b";  // first
  EXPECT_EQ(MigratedVolume(pd, &labels)->id,
            driver + "projects/UNSPECIFIED/regions/us-central1/disks/data");
  labels["failure-domain.beta.kubernetes.io/zone"] = "us-central1-a__europe-west4-b";
  EXPECT_EQ(MigratedVolume(pd, &labels), std::nullopt);  // two regions: not translated
}

TEST(CsiMigration, AzureDiskAndCinderKeepTheirIds) {
  EXPECT_EQ(MigratedVolume(Source("azureDisk", "diskURI", "/subscriptions/s/disks/d"), nullptr),
            (CsiVolume{"disk.csi.azure.com", "disk.csi.azure.com//subscriptions/s/disks/d"}));
  EXPECT_EQ(MigratedVolume(Source("cinder", "volumeID", "c-1"), nullptr),
            (CsiVolume{"cinder.csi.openstack.org", "cinder.csi.openstack.org/c-1"}));
  // Other in-tree sources, and a source without its id: not counted.
  EXPECT_EQ(MigratedVolume(Source("nfs", "server", "nfs.example.com"), nullptr), std::nullopt);
  EXPECT_EQ(MigratedVolume(Source("azureFile", "shareName", "s"), nullptr), std::nullopt);
  EXPECT_EQ(MigratedVolume(Source("cinder", "fsType", "ext4"), nullptr), std::nullopt);
}

TEST(CsiMigration, ProvisionersOfMigratedPluginsCountUnderTheirDriver) {
  auto driver = [](std::string_view provisioner) -> std::string {
    std::optional<CsiVolume> v = ProvisionedVolume(provisioner, "t/data");
    return v ? v->driver : "(none)";
  };
  EXPECT_EQ(driver("kubernetes.io/aws-ebs"), "ebs.csi.aws.com");
  EXPECT_EQ(driver("kubernetes.io/gce-pd"), "pd.csi.storage.gke.io");
  EXPECT_EQ(driver("kubernetes.io/azure-disk"), "disk.csi.azure.com");
  EXPECT_EQ(driver("kubernetes.io/cinder"), "cinder.csi.openstack.org");
  EXPECT_EQ(driver("kubernetes.io/azure-file"), "(none)");
  EXPECT_EQ(driver("kubernetes.io/vsphere-volume"), "(none)");
  EXPECT_EQ(driver("ebs.csi.aws.com"), "ebs.csi.aws.com");
  EXPECT_EQ(ProvisionedVolume("ebs.csi.aws.com", "t/data"),
            (CsiVolume{"ebs.csi.aws.com", "ebs.csi.aws.com/(claim) t/data", ""}));
  EXPECT_EQ(ProvisionedVolume("kubernetes.io/portworx-volume", "t/data"),
            (CsiVolume{"pxd.portworx.com", "pxd.portworx.com/(claim) t/data",
                       "kubernetes.io/portworx-volume"}));
}

TEST(CsiMigration, PortworxCountsOnlyWhereTheNodeSaysThePluginMigrated) {
  std::optional<CsiVolume> px =
      MigratedVolume(Source("portworxVolume", "volumeID", "px-1"), nullptr);
  ASSERT_TRUE(px.has_value());
  EXPECT_EQ(*px, (CsiVolume{"pxd.portworx.com", "pxd.portworx.com/px-1",
                            "kubernetes.io/portworx-volume"}));
  EXPECT_EQ(MigratedVolume(Source("portworxVolume", "fsType", "ext4"), nullptr), std::nullopt);
  const std::map<std::string, int64_t> limits = {{"pxd.portworx.com", 1}};
  AttachedVolumes plain;  // a CSINode without the annotation
  plain.Add({*px});
  EXPECT_EQ(plain.Count("pxd.portworx.com"), 0);
  CsiVolume other = *px;
  other.id = "pxd.portworx.com/px-2";
  EXPECT_FALSE(OverVolumeLimits({other}, plain, limits));
  AttachedVolumes migrated;
  migrated.SetMigratedPlugins("kubernetes.io/aws-ebs,kubernetes.io/portworx-volume");
  migrated.Add({*px});
  EXPECT_EQ(migrated.Count("pxd.portworx.com"), 1);
  EXPECT_TRUE(OverVolumeLimits({other}, migrated, limits));
  EXPECT_FALSE(OverVolumeLimits({*px}, migrated, limits));  // attached already
  migrated.Remove({*px});
  EXPECT_EQ(migrated.Count("pxd.portworx.com"), 0);
}

}  // namespace
}  // namespace gpuplane::sched
