#include "ember/ordered_dict.h"

#include <gtest/gtest.h>

#include "expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using Dict = ember::OrderedDict<std::string, int>;

TEST(OrderedDict, KeepsInsertionOrderAndFindsByKey) {
  Dict d("parameter");
  d.insert("weight", 1);
  d.insert("bias", 2);
  d.insert("alpha", 3);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"weight", "bias", "alpha"}));
  EXPECT_EQ(d.values(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(d["bias"], 2);
  EXPECT_EQ(d[size_t{2}].key(), "alpha");
  EXPECT_TRUE(d.contains("alpha"));
  EXPECT_EQ(d.find("gamma"), nullptr);
  int sum = 0;
  for (const auto& item : d) sum += item.value();
  EXPECT_EQ(sum, 6);
}

TEST(OrderedDict, InsertOrAssignKeepsPositionAndEraseReindexes) {
  Dict d;
  d.insert("a", 1);
  d.insert("b", 2);
  d.insert("c", 3);
  d.insert_or_assign("a", 10);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(d["a"], 10);
  d.erase("b");
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(d["c"], 3);
  d.insert("d", 4);
  EXPECT_EQ(d[size_t{2}].value(), 4);
}

TEST(OrderedDict, DuplicateAndMissingKeysRaise) {
  Dict d("parameter");
  d.insert("weight", 1);
  EXPECT_ERROR(d.insert("weight", 2), "parameter 'weight' already defined");
  EXPECT_ERROR(d.at("bias"), "parameter 'bias' is not defined");
  EXPECT_ERROR(d.erase("bias"), "parameter 'bias' is not defined");
  EXPECT_EQ(d.size(), 1u);
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
