#include "sched/volume_limits.h"

#include <gtest/gtest.h>

namespace gpuplane::sched {
namespace {

CsiVolume Ebs(const std::string& handle) {
  return {"ebs.csi.aws.com", "ebs.csi.aws.com/" + handle};
}

TEST(VolumeLimits, AVolumeCountsOnceHoweverManyPodsUseIt) {
  AttachedVolumes a;
  a.Add({Ebs("v1"), Ebs("v2")});
  a.Add({Ebs("v1")});
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 2);
  a.Remove({Ebs("v1")});
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 2);  // another pod still uses v1
  a.Remove({Ebs("v1")});
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 1);
  EXPECT_FALSE(a.Has("ebs.csi.aws.com/v1"));
  a.Remove({Ebs("v9")});  // not attached: nothing changes
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 1);
}

TEST(VolumeLimits, NewVolumesPerDriverAgainstTheLimit) {
  AttachedVolumes a;
  a.Add({Ebs("v1")});
  const std::map<std::string, int64_t> limits = {{"ebs.csi.aws.com", 2}};
  EXPECT_FALSE(OverVolumeLimits({Ebs("v2")}, a, limits));
  EXPECT_FALSE(OverVolumeLimits({Ebs("v1"), Ebs("v2")}, a, limits));  // v1 is attached already
  EXPECT_FALSE(OverVolumeLimits({Ebs("v2"), Ebs("v2")}, a, limits));  // twice is one volume
  EXPECT_TRUE(OverVolumeLimits({Ebs("v2"), Ebs("v3")}, a, limits));
  // Another driver's volumes, or no limit for the driver: never over.
  EXPECT_FALSE(OverVolumeLimits(
      {{"x.example.com", "x.example.com/a"}, {"x.example.com", "x.example.com/b"}}, a, limits));
  EXPECT_FALSE(OverVolumeLimits({Ebs("v2"), Ebs("v3")}, a, {}));
  EXPECT_TRUE(OverVolumeLimits({Ebs("v2")}, a, {{"ebs.csi.aws.com", 0}}));
}

TEST(VolumeLimits, AVolumeAttachmentStaysWhateverPodsComeAndGo) {
  AttachedVolumes a;
  a.Attach(Ebs("v1"));  // a VolumeAttachment: attached, used by no pod
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 1);
  a.Add({Ebs("v1")});  // a pod uses it: still one volume
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 1);
  a.Remove({Ebs("v1")});  // the pod goes (preemption, say): the attachment stays
  EXPECT_EQ(a.Count("ebs.csi.aws.com"), 1);
  EXPECT_TRUE(a.Has("ebs.csi.aws.com/v1"));
  const std::map<std::string, int64_t> limits = {{"ebs.csi.aws.com", 1}};
  EXPECT_FALSE(OverVolumeLimits({Ebs("v1")}, a, limits));  // attached already
  EXPECT_TRUE(OverVolumeLimits({Ebs("v2")}, a, limits));
}

}  // namespace
}  // namespace gpuplane::sched
