#include "cel/checker.h"

#include "cel/device_env.h"
#include "cel/program.h"
#include "gtest/gtest.h"

namespace gpuplane::cel {
namespace {

std::string CompileError(const std::string& expr) {
  absl::StatusOr<Program> p = Program::Compile(expr, DeviceSelectorOptions());
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(CheckerTest, RejectsOverloadsThatCanNeverMatch) {
  struct Case {
    const char* expr;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"device.driver + 1", "found no matching overload for '_+_' applied to '(string, int)'"},
           {"device.capacity['gpu.nvidia.com'].memory.compareTo(1)",
            "found no matching overload for 'compareTo' applied to '(kubernetes.Quantity, int)'"},
           {"device.nodeName == 'a'", "undefined field 'nodeName'"},
           {"'a' < 1", "found no matching overload for '_<_' applied to '(string, int)'"},
           {"[1, 2].map(x, x + 'a')", "applied to '(int, string)'"},
           {"1.size()", "found no matching overload for 'size' applied to '(int)'"},
           {"quantity('1Gi').isGreaterThan(semver('1.0.0'))", "'isGreaterThan'"},
           {"device.driver.startsWith(1)", "'startsWith' applied to '(string, int)'"},
           {"device.allowMultipleAllocations && 'x'", "'_&&_' applied to '(bool, string)'"},
           {"[1].all(x, x)", "the predicate must be a bool, not int"},
           {"1.f", "type 'int' does not support field selection"},
           // Kubernetes' rules (cel-go's checker and HomogeneousAggregateLiterals), confirmed by
           // running Kubernetes' own CEL (test/k8sref):
           {"[1, 'a'].exists(x, x == 'a')", "expected type 'int' but found 'string'"},
           {"[1, dyn('a')]", "expected type 'int' but found 'dyn'"},
           {"[[1], ['a']]", "expected type 'list(int)' but found 'list(string)'"},
           {"{'a': 1, 'b': null}", "expected type 'int' but found 'null_type'"},
           {"[device.attributes['gpu.nvidia.com'].model, 'x']",
            "expected type 'any' but found 'string'"},
           {"1 == 1.0", "'_==_' applied to '(int, double)'"},
           {"[1] != [1u]", "'_!=_' applied to '(list(int), list(uint))'"},
           {"'a' == null", "'_==_' applied to '(string, null_type)'"},
           {"1 in [1.0]", "'in' applied to '(int, list(double))'"},
           {"true ? 'cows' : 17", "'_?_:_' applied to '(bool, string, int)'"},
           {"[1] + ['a']", "'_+_' applied to '(list(int), list(string))'"},
           {"{'a': 1}.exists(k, k == 1)", "'_==_' applied to '(string, int)'"},
           {"{'k': 1}.`k` == 1", "backtick-quoted field names are not in Kubernetes' CEL"},
           {"device.attributes['gpu.nvidia.com'].x.y.frob()", "undeclared reference to 'frob'"},
       }) {
    std::string got = CompileError(c.expr);
    EXPECT_NE(got.find(c.message), std::string::npos) << c.expr << " -> " << got;
  }
}

TEST(CheckerTest, AcceptsWhatMightEvaluate) {
  for (const char* ok : {
           "device.attributes['gpu.nvidia.com'].productName + 1 == 2",  // dyn: may be an int
           "device.driver.size() > 0 && device.capacity['x'].y.isInteger()",
           "device.attributes['gpu.nvidia.com'].index < 2.5",
           "[dyn(1), dyn('a')].exists(x, x == 'a')",
           "[[], [1]].size() == 2 && [{}, {'a': 1}].size() == 2 && 1 == dyn(1.0)",
           "device.attributes['gpu.nvidia.com'].model == 1",
           "{'a': 1}.all(k, k.startsWith('a'))",
           "cel.bind(q, quantity('1Gi'), sign(q.add(1)) > 0)",
           "device.attributes['gpu.nvidia.com'].?profile.orValue('').startsWith('1g')",
           "has(device.attributes['gpu.nvidia.com'].uuid)",
       }) {
    EXPECT_EQ(CompileError(ok), "") << ok;
  }
}

}  // namespace
}  // namespace gpuplane::cel
