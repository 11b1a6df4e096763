#include "acct/genai.h"

#include <cstring>

#include "gtest/gtest.h"

namespace gpuplane::acct {
namespace {

// A ustar member: header + content padded to 512 bytes.
std::string Member(const std::string& name, const std::string& content, char type = '0') {
  std::string h(512, '\0');
  std::memcpy(h.data(), name.data(), name.size());
  char size[12];
  std::snprintf(size, sizeof size, "%011o", static_cast<unsigned>(content.size()));
  std::memcpy(h.data() + 124, size, 11);
  h[156] = type;
  std::memcpy(h.data() + 257, "ustar", 5);
  std::string padded = content + std::string((512 - content.size() % 512) % 512, '\0');
  return h + padded;
}

TEST(GenaiTest, TarMembers) {
  std::string tar = Member("a.csv", "x,y\n") + Member("dir", "", '5') +
                    Member("b.csv", std::string(600, 'b')) + std::string(1024, '\0');
  absl::StatusOr<std::map<std::string, std::string>> files = ParseTar(tar, "t.tar");
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ(files->at("a.csv"), "x,y\n");
  EXPECT_EQ(files->at("b.csv").size(), 600u);
}

TEST(GenaiTest, CorruptTarIsRefusedWithItsName) {
  std::string tar = Member("a.csv", std::string(600, 'a'));
  absl::StatusOr<std::map<std::string, std::string>> cut = ParseTar(tar.substr(0, 700), "t.tar");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(std::string(cut.status().message()).find("t.tar: truncated"), std::string::npos);
  std::string bad = tar;
  bad[124] = 'x';
  EXPECT_FALSE(ParseTar(bad, "t.tar").ok());
}

TEST(GenaiTest, JoinsSeriesByPod) {
  std::string duty =
      "value,timestamp_anon,container_ip\n50,100,p1\n25,160,p1\n0,100,p2\nbad,1,p1\n10,220,p1\n";
  std::string memory = "timestamp_anon,value,container_ip\n100,1000,p1\n150,2000,p1\n100,5,p2\n";
  size_t bad = 0;
  std::vector<UsageProfile> p = JoinGenaiCsv(duty, memory, 2, &bad);
  EXPECT_EQ(bad, 1u);
  ASSERT_EQ(p.size(), 1u) << "p2 has one sample, fewer than 2";
  EXPECT_EQ(p[0].id, "p1");
  EXPECT_EQ(p[0].duty, (std::vector<double>{0.5, 0.25, 0.1}));
  EXPECT_EQ(p[0].memory, (std::vector<double>{1000, 2000, 2000})) << "latest memory at or before";
  EXPECT_TRUE(JoinGenaiCsv("no,header\n1,2\n", memory, 1, &bad).empty());
}

TEST(GenaiTest, AbsentDataIsNotFound) {
  absl::StatusOr<std::vector<UsageProfile>> p = LoadGenaiProfiles("/nonexistent");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::IsNotFound(p.status()));
}

}  // namespace
}  // namespace gpuplane::acct
