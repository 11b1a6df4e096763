// The lists extension and Kubernetes list functions (isSorted, sum, min, max, slice,
// flatten, distinct, sort, first, last, lists.range) and the sets library.
#include <algorithm>

#include "cel/builtins.h"
#include "cel/library.h"
#include "util/strings.h"

namespace gpuplane::cel {
namespace {

bool IsList(const Value& v) { return v.kind() == Kind::kList; }

// Orders two values with CEL's < (error when they cannot be ordered).
Value Less(const Value& a, const Value& b, bool* less) {
  int c = 0;
  Value ok = Compare(a, b, &c);
  if (ok.is_error()) return ok;
  *less = c == -1;
  return ok;
}

// Whether v has an ordering (numbers, strings, bytes, bools): Kubernetes' isSorted, min,
// max and sort have no overload for other elements, even in a list of one.
bool Orderable(const Value& v) {
  bool less = false;
  return !Less(v, v, &less).is_error();
}

Value IsSorted(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("isSorted", a);
  const auto& l = a[0].list();
  for (const Value& v : l) {
    if (!Orderable(v)) return NoOverload("isSorted", {a[0]});
  }
  for (size_t i = 1; i < l.size(); ++i) {
    bool less = false;
    // Values of kinds that do not compare (1 and 'a') count as in order, as in Kubernetes.
    if (Less(l[i], l[i - 1], &less).is_error()) continue;
    if (less) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value Sum(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("sum", a);
  const auto& l = a[0].list();
  if (l.empty()) return Value::Int(0);
  Value acc = l[0];
  if (acc.kind() != Kind::kInt && acc.kind() != Kind::kUint && acc.kind() != Kind::kDouble) {
    return NoOverload("sum", {a[0]});
  }
  for (size_t i = 1; i < l.size(); ++i) {
    acc = CallBuiltin("_+_", CallStyle::kGlobal, std::vector<Value>{acc, l[i]});
    if (acc.is_error()) return acc;
  }
  return acc;
}

Value MinMax(std::span<const Value> a, bool want_max) {
  const char* name = want_max ? "max" : "min";
  if (!IsList(a[0])) return ArgError(name, a);
  const auto& l = a[0].list();
  if (l.empty()) return Value::Error(util::Cat(name, "(): the list is empty"));
  Value best = l[0];
  for (size_t i = 0; i < l.size(); ++i) {
    if (!Orderable(l[i])) return NoOverload(name, {a[0]});
    bool less = false;
    // A value that does not compare with the best so far (1 and 'a') is passed over, as in
    // Kubernetes.
    Value ok = want_max ? Less(best, l[i], &less) : Less(l[i], best, &less);
    if (!ok.is_error() && less) best = l[i];
  }
  return best;
}

Value Slice(std::span<const Value> a) {
  if (!IsList(a[0]) || a[1].kind() != Kind::kInt || a[2].kind() != Kind::kInt) {
    return ArgError("slice", a);
  }
  const auto& l = a[0].list();
  int64_t s = a[1].int_value(), e = a[2].int_value();
  int64_t n = static_cast<int64_t>(l.size());
  if (s < 0 || e < 0)
    return Value::Error(
        util::Cat("cannot slice(", s, ", ", e, "), negative indexes not supported"));
  if (s > e)
    return Value::Error(util::Cat("cannot slice(", s, ", ", e,
                                  "), start index must be less than or equal to end index"));
  if (e > n) return Value::Error(util::Cat("cannot slice(", s, ", ", e, "), list is length ", n));
  return Value::List(std::vector<Value>(l.begin() + s, l.begin() + e));
}

void FlattenInto(const Value& v, int64_t depth, std::vector<Value>& out) {
  for (const Value& x : v.list()) {
    if (x.kind() == Kind::kList && depth > 0) {
      FlattenInto(x, depth - 1, out);
    } else {
      out.push_back(x);
    }
  }
}

Value Flatten(std::span<const Value> a) {
  if (!IsList(a[0]) || (a.size() == 2 && a[1].kind() != Kind::kInt)) return ArgError("flatten", a);
  int64_t depth = a.size() == 2 ? a[1].int_value() : 1;
  if (depth < 0) return Value::Error("flatten(): level must be non-negative");
  std::vector<Value> out;
  FlattenInto(a[0], depth, out);
  return Value::List(std::move(out));
}

Value Distinct(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("distinct", a);
  std::vector<Value> out;
  for (const Value& v : a[0].list()) {
    bool seen = false;
    for (const Value& o : out) {
      if (Equal(o, v)) {
        seen = true;
        break;
      }
    }
    if (!seen) out.push_back(v);
  }
  return Value::List(std::move(out));
}

Value Sort(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("sort", a);
  std::vector<Value> out = a[0].list();
  if (!out.empty() && !Orderable(out[0])) return NoOverload("sort", {a[0]});
  for (size_t i = 1; i < out.size(); ++i) {  // one kind only, as in Kubernetes
    if (out[i].kind() != out[0].kind()) {
      return Value::Error("sort: list elements must have the same type");
    }
  }
  for (size_t i = 1; i < out.size(); ++i) {  // every pair must be orderable
    bool less;
    if (Less(out[0], out[i], &less).is_error()) return NoOverload("sort", {a[0]});
  }
  std::stable_sort(out.begin(), out.end(), [](const Value& x, const Value& y) {
    bool less = false;
    (void)Less(x, y, &less);
    return less;
  });
  return Value::List(std::move(out));
}

Value First(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("first", a);
  return a[0].list().empty() ? Value::OptionalNone() : Value::Optional(a[0].list().front());
}

Value Last(std::span<const Value> a) {
  if (!IsList(a[0])) return ArgError("last", a);
  return a[0].list().empty() ? Value::OptionalNone() : Value::Optional(a[0].list().back());
}

Value Range(std::span<const Value> a) {
  if (a[0].kind() != Kind::kInt) return ArgError("lists.range", a);
  int64_t n = a[0].int_value();
  if (n < 0) return Value::Error("lists.range(): the count must be non-negative");
  if (n > 1'000'000) return Value::Error("lists.range(): the count is too large");
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(Value::Int(i));
  return Value::List(std::move(out));
}

bool Contains(const Value& list, const Value& v) {
  for (const Value& x : list.list()) {
    if (Equal(x, v)) return true;
  }
  return false;
}

Value SetsContains(std::span<const Value> a) {
  if (!IsList(a[0]) || !IsList(a[1])) return ArgError("sets.contains", a);
  for (const Value& v : a[1].list()) {
    if (!Contains(a[0], v)) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value SetsEquivalent(std::span<const Value> a) {
  if (!IsList(a[0]) || !IsList(a[1])) return ArgError("sets.equivalent", a);
  Value forward = SetsContains(a);
  std::vector<Value> swapped = {a[1], a[0]};
  Value backward = SetsContains(swapped);
  return Value::Bool(forward.bool_value() && backward.bool_value());
}

Value SetsIntersects(std::span<const Value> a) {
  if (!IsList(a[0]) || !IsList(a[1])) return ArgError("sets.intersects", a);
  for (const Value& v : a[1].list()) {
    if (Contains(a[0], v)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

Value MinFn(std::span<const Value> a) { return MinMax(a, false); }
Value MaxFn(std::span<const Value> a) { return MinMax(a, true); }

constexpr LibraryOverload kLists[] = {
    {"isSorted", true, 1, &IsSorted},
    {"sum", true, 1, &Sum},
    {"min", true, 1, &MinFn},
    {"max", true, 1, &MaxFn},
    {"slice", true, 3, &Slice},
    {"flatten", true, 1, &Flatten},
    {"flatten", true, 2, &Flatten},
    {"distinct", true, 1, &Distinct},
    {"sort", true, 1, &Sort},
    {"first", true, 1, &First},
    {"last", true, 1, &Last},
    {"lists.range", false, 1, &Range},
    {"sets.contains", false, 2, &SetsContains},
    {"sets.equivalent", false, 2, &SetsEquivalent},
    {"sets.intersects", false, 2, &SetsIntersects},
};

}  // namespace

std::span<const LibraryOverload> ListsLibrary() { return kLists; }

}  // namespace gpuplane::cel
