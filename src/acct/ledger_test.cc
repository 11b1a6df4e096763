#include "acct/ledger.h"

#include <filesystem>

#include "gtest/gtest.h"
#include "util/strings.h"

namespace gpuplane::acct {
namespace {

std::string TempLedger(const char* name) {
  std::string path = util::Cat(::testing::TempDir(), "/ledger_", name, "_", ::getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

Attribution Window(double sm, int64_t cost) {
  Attribution w;
  w.pods.push_back(PodUsage{{"team-a", "train-0", "main"}, "GPU-1", "", sm, 10, 100, cost});
  w.pods.push_back(PodUsage{{"team-b", "infer-0", "srv"}, "GPU-1", "", sm / 2, 20, 50, cost / 2});
  w.devices.push_back(
      DeviceUsage{"GPU-1", "NVIDIA H100 80GB HBM3", true, false, sm * 2, 0.1, cost / 4, cost * 2});
  return w;
}

TEST(LedgerTest, TotalsSurviveReopening) {
  std::string path = TempLedger("reopen");
  {
    auto l = Ledger::Open(path, Ledger::Access::kReadWrite);
    ASSERT_TRUE(l.ok()) << l.status();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*l)->Append(Window(1.5, 1000), 100 + i, 101 + i).ok());
  }
  auto l = Ledger::Open(path, Ledger::Access::kReadWrite);
  ASSERT_TRUE(l.ok());
  auto last = (*l)->LastTime();
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ(**last, 103);
  auto totals = (*l)->Totals();
  ASSERT_TRUE(totals.ok());
  ASSERT_EQ(totals->pods.size(), 2u);
  EXPECT_EQ(totals->pods[0].who.namespace_name, "team-a");
  EXPECT_DOUBLE_EQ(totals->pods[0].sm_seconds, 4.5);
  EXPECT_EQ(totals->pods[0].cost_nano, 3000);
  EXPECT_EQ(totals->pods[0].max_memory_bytes, 100);
  ASSERT_EQ(totals->devices.size(), 1u);
  EXPECT_EQ(totals->devices[0].cost_nano, 6000);
  EXPECT_EQ(totals->devices[0].model, "NVIDIA H100 80GB HBM3");
}

TEST(LedgerTest, ReportsGroupAndSelectPeriods) {
  std::string path = TempLedger("report");
  auto l = Ledger::Open(path, Ledger::Access::kReadWrite, 60);
  ASSERT_TRUE(l.ok());
  ASSERT_TRUE((*l)->Append(Window(1, 1000), 0, 1).ok());      // bucket 0
  ASSERT_TRUE((*l)->Append(Window(2, 2000), 59, 61).ok());    // bucket 0 (where it starts)
  ASSERT_TRUE((*l)->Append(Window(4, 4000), 120, 121).ok());  // bucket 120
  PodIndex pods;
  pods.by_uid["u1"] = PodIndex::Pod{"team-a", "train-0", {}, {{"app", "llm"}}};
  ASSERT_TRUE((*l)->SetPodLabels(pods).ok());

  auto by_ns = (*l)->Report(std::nullopt, std::nullopt, "namespace");
  ASSERT_TRUE(by_ns.ok()) << by_ns.status();
  ASSERT_EQ(by_ns->size(), 2u);
  EXPECT_EQ((*by_ns)[0].group, "team-a");  // most expensive first
  EXPECT_DOUBLE_EQ((*by_ns)[0].sm_seconds, 7);
  EXPECT_EQ((*by_ns)[0].cost_nano, 7000);
  EXPECT_EQ((*by_ns)[0].pods, 1);

  auto early = (*l)->Report(std::nullopt, 60, "pod");
  ASSERT_TRUE(early.ok());
  EXPECT_EQ((*early)[0].group, "team-a/train-0");
  EXPECT_DOUBLE_EQ((*early)[0].sm_seconds, 3);
  auto late = (*l)->Report(60, std::nullopt, "pod");
  ASSERT_TRUE(late.ok());
  EXPECT_DOUBLE_EQ((*late)[0].sm_seconds, 4);

  auto by_label = (*l)->Report(std::nullopt, std::nullopt, "label:app");
  ASSERT_TRUE(by_label.ok()) << by_label.status();
  ASSERT_EQ(by_label->size(), 2u);
  EXPECT_EQ((*by_label)[0].group, "llm");
  EXPECT_EQ((*by_label)[1].group, "(no label)");

  auto bad = (*l)->Report(std::nullopt, std::nullopt, "label:a\"b");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("label:KEY"), std::string::npos);
}

TEST(LedgerTest, ErrorsNameTheFile) {
  auto missing = Ledger::Open("/nonexistent/ledger.db", Ledger::Access::kReadOnly);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("/nonexistent/ledger.db"),
            std::string::npos);
  std::string path = TempLedger("notaledger");
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("this is not a database, just text of some length......................", f);
    std::fclose(f);
  }
  auto garbage = Ledger::Open(path, Ledger::Access::kReadOnly);
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(std::string(garbage.status().message()).find(path), std::string::npos);
}

}  // namespace
}  // namespace gpuplane::acct
