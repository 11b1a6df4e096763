#include "kube/json_field.h"

#include <gtest/gtest.h>

namespace gpuplane::kube {
namespace {

using nlohmann::json;

TEST(FieldTest, ReturnsTheMemberItselfNotACopy) {
  json pod = {{"metadata", {{"name", "p"}, {"labels", {{"a", "b"}}}}}};
  const json& meta = Field(pod, "metadata");
  EXPECT_EQ(&meta, &pod["metadata"]);
  EXPECT_EQ(Field(meta, "labels").value("a", ""), "b");
}

TEST(FieldTest, MissingNullOrNotAnObjectReadsAsEmpty) {
  json pod = {{"metadata", nullptr}, {"spec", json::array({1})}};
  for (const json* j : {&Field(pod, "status"), &Field(pod, "metadata"), &Field(pod["spec"], "x"),
                        &Field(json("text"), "x")}) {
    EXPECT_TRUE(j->is_object());
    EXPECT_TRUE(j->empty());
    EXPECT_EQ(j->value("name", "none"), "none");
    int n = 0;
    for (const json& e : *j) n += e.is_null() ? 0 : 1;
    EXPECT_EQ(n, 0);
  }
  // Chained reads of a missing path do not throw (value() on null would).
  EXPECT_EQ(Field(Field(pod, "metadata"), "labels").value("a", "-"), "-");
}

TEST(StrTest, TextOfAStringMemberElseEmptyNeverThrows) {
  json meta = {{"name", "p"}, {"namespace", 5}, {"uid", nullptr}, {"labels", {{"a", "b"}}}};
  EXPECT_EQ(Str(meta, "name"), "p");
  for (const char* key : {"namespace", "uid", "labels", "missing"}) EXPECT_EQ(Str(meta, key), "");
  EXPECT_EQ(Str(json::array({"name"}), "name"), "");
  EXPECT_EQ(Str(json("name"), "name"), "");
}

}  // namespace
}  // namespace gpuplane::kube
