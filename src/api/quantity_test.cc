#include "api/quantity.h"

#include <string>

#include "gtest/gtest.h"

namespace gpuplane::api {
namespace {

struct CanonicalCase {
  const char* in;
  const char* out;
};

// Canonical forms as Kubernetes' resource.Quantity String() prints them.
constexpr CanonicalCase kCanonical[] = {
    {"0", "0"},
    // No digits is zero in Kubernetes (checked with its own isQuantity/quantity in CEL).
    {"Gi", "0"},
    {"-", "0"},
    {".", "0"},
    {"+", "0"},
    {"-.e3", "0"},
    {"1", "1"},
    {"1000m", "1"},
    {"1024Mi", "1Gi"},
    {"1.5Gi", "1536Mi"},
    {"0.1", "100m"},
    {"100m", "100m"},
    {"1k", "1k"},
    {"1000", "1k"},
    {"1500", "1500"},
    {"1.5k", "1500"},
    {"1e3", "1e3"},
    {"1E3", "1e3"},
    {"1.5e3", "1500"},
    {"12e6", "12e6"},
    {"0.5Ki", "512"},
    {"1Ki", "1Ki"},
    {"1023", "1023"},
    {"1024", "1024"},
    {"2048Ki", "2Mi"},
    {"1536Ki", "1536Ki"},
    {"1n", "1n"},
    {"1u", "1u"},
    {"0.000000001", "1n"},
    {"0.0000000001", "1n"},
    {"-1", "-1"},
    {"-1.5Gi", "-1536Mi"},
    {"+1", "1"},
    {"1.G", "1G"},
    {".5", "500m"},
    {"5.", "5"},
    {"00100", "100"},
    {"1M", "1M"},
    {"1000000", "1M"},
    {"1000k", "1M"},
    {"1Ei", "1Ei"},
    {"7Ei", "7Ei"},
    {"9223372036854775807", "9223372036854775807"},
    {"1e18", "1e18"},
    {"1E", "1E"},
    {"9E", "9E"},
    {"1Pi", "1Pi"},
    {"100Gi", "100Gi"},
    {"0.25", "250m"},
    {"1.25Mi", "1280Ki"},
    {"3.3333333333n", "4n"},
    {"80Gi", "80Gi"},
    {"141G", "141G"},
    {"1e-3", "1e-3"},
    {"1e-12", "1e-9"},
    {"0.3Ki", "307200m"},
    {"0Gi", "0"},
    {"-0", "0"},
    {"1.000", "1"},
    {"2.5M", "2500k"},
    {"10e-1", "1"},
};

TEST(QuantityTest, CanonicalForms) {
  for (const CanonicalCase& c : kCanonical) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.in);
    ASSERT_TRUE(q.ok()) << c.in << ": " << q.status();
    EXPECT_EQ(q->String(), c.out) << "input " << c.in;
    // The canonical form parses back to the same value.
    absl::StatusOr<Quantity> again = Quantity::Parse(q->String());
    ASSERT_TRUE(again.ok()) << q->String();
    EXPECT_EQ(*again, *q) << c.in;
  }
}

struct BadCase {
  const char* in;
  const char* message;
};

constexpr BadCase kBad[] = {
    {"", "empty"},
    {"1.5.3Gi", "regular expression"},
    {"10Qi", "regular expression"},
    {"9999999999999999999Ei", "out of range"},
    {"8Ei", "out of range"},
    {"9223372036854775808", "out of range"},
    {"1000E", "out of range"},
    {"1e400", "out of range"},
    {"abc", "regular expression"},
    {"1e", "unknown suffix"},
    {"1 Gi", "regular expression"},
    {"1gi", "regular expression"},
    {"1Ki1", "unknown suffix"},
    {"1e3.5", "regular expression"},
    {"--1", "unknown suffix"},
    {"1mi", "unknown suffix"},
    {"1KiB", "regular expression"},
};

TEST(QuantityTest, MalformedAndOutOfRange) {
  for (const BadCase& c : kBad) {
    absl::StatusOr<Quantity> q = Quantity::Parse(c.in);
    ASSERT_FALSE(q.ok()) << "\"" << c.in << "\" parsed as " << q->String();
    EXPECT_NE(std::string(q.status().message()).find(c.message), std::string::npos)
        << c.in << ": " << q.status();
  }
}

int Cmp(const char* a, const char* b) { return Quantity::Parse(a)->Compare(*Quantity::Parse(b)); }

TEST(QuantityTest, Compare) {
  EXPECT_EQ(Cmp("1Gi", "1024Mi"), 0);
  EXPECT_EQ(Cmp("1.5Gi", "1536Mi"), 0);
  EXPECT_EQ(Cmp("1", "1000m"), 0);
  EXPECT_EQ(Cmp("999m", "1"), -1);
  EXPECT_EQ(Cmp("1k", "1023"), -1);
  EXPECT_EQ(Cmp("1Ki", "1k"), 1);
  EXPECT_EQ(Cmp("-1", "0"), -1);
  EXPECT_EQ(Cmp("1n", "0"), 1);
  EXPECT_EQ(Cmp("80Gi", "40Gi"), 1);
  EXPECT_EQ(Cmp("1e3", "1k"), 0);
  EXPECT_TRUE(*Quantity::Parse("1Gi") == *Quantity::Parse("1073741824"));
  EXPECT_TRUE(*Quantity::Parse("500m") < *Quantity::Parse("1"));
}

std::string Sum(const char* a, const char* b) {
  absl::StatusOr<Quantity> s = Quantity::Parse(a)->Add(*Quantity::Parse(b));
  return s.ok() ? s->String() : std::string(s.status().message());
}

TEST(QuantityTest, Add) {
  EXPECT_EQ(Sum("1Gi", "512Mi"), "1536Mi");
  EXPECT_EQ(Sum("1", "500m"), "1500m");
  EXPECT_EQ(Sum("0", "1Gi"), "1Gi");
  EXPECT_EQ(Sum("100m", "900m"), "1");
  EXPECT_EQ(Sum("-1", "1"), "0");
  EXPECT_EQ(Sum("1k", "1Ki"), "2024");
  EXPECT_EQ(Sum("1Ki", "1Ki"), "2Ki");
  EXPECT_NE(Sum("1Ei", "7Ei").find("out of range"), std::string::npos);
  absl::StatusOr<Quantity> d = Quantity::Parse("1Gi")->Sub(*Quantity::Parse("512Mi"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->String(), "512Mi");
}

TEST(QuantityTest, ValueAccessors) {
  EXPECT_EQ(Quantity::Parse("1.5")->Value(), 2);  // rounded up, as Kubernetes does
  EXPECT_EQ(Quantity::Parse("1.5")->MilliValue(), 1500);
  EXPECT_EQ(Quantity::Parse("1n")->MilliValue(), 1);
  EXPECT_EQ(Quantity::Parse("80Gi")->Value(), 80LL << 30);
  EXPECT_TRUE(Quantity::Parse("2")->IsInteger());
  EXPECT_FALSE(Quantity::Parse("2500m")->IsInteger());
  EXPECT_DOUBLE_EQ(Quantity::Parse("2500m")->AsApproximateFloat(), 2.5);
  EXPECT_EQ(Quantity::Parse("-3")->Sign(), -1);
  EXPECT_EQ(Quantity::FromUnits(1 << 30, Quantity::Format::kBinarySI).String(), "1Gi");
  EXPECT_EQ(Quantity::FromMilli(1500).String(), "1500m");
}

}  // namespace
}  // namespace gpuplane::api
