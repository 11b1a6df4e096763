#include "cel/library.h"

#include <map>
#include <string>

#include "cel/builtins.h"

namespace gpuplane::cel {
namespace {

struct OverloadKey {
  std::string name;
  bool receiver;
  size_t arity;
  bool operator<(const OverloadKey& o) const {
    return std::tie(name, receiver, arity) < std::tie(o.name, o.receiver, o.arity);
  }
};

const std::map<OverloadKey, LibraryOverload>& Registry() {
  static const auto* registry = [] {
    auto* m = new std::map<OverloadKey, LibraryOverload>();
    for (auto table : {StringsLibrary(), FormatLibrary(), ListsLibrary(), KubernetesLibrary()}) {
      for (const LibraryOverload& o : table) {
        m->emplace(OverloadKey{std::string(o.name), o.receiver, static_cast<size_t>(o.arity)}, o);
      }
    }
    return m;
  }();
  return *registry;
}

}  // namespace

const LibraryOverload* FindLibraryOverload(std::string_view name, CallStyle style, size_t arity) {
  const bool receiver = style == CallStyle::kReceiver;
  auto it = Registry().find(OverloadKey{std::string(name), receiver, arity});
  return it == Registry().end() ? nullptr : &it->second;
}

bool IsLibraryFunction(std::string_view name) {
  auto it = Registry().lower_bound(OverloadKey{std::string(name), false, 0});
  return it != Registry().end() && it->first.name == name;
}

std::vector<std::string> LibraryFunctionNames() {
  std::vector<std::string> names;
  for (const auto& [key, overload] : Registry()) {
    if (names.empty() || names.back() != key.name) names.push_back(key.name);
  }
  return names;
}

bool IsFunctionNamespace(std::string_view ident) {
  return ident == "optional" || ident == "sets" || ident == "lists" || ident == "strings";
}

Value ArgError(std::string_view name, std::span<const Value> args) {
  return NoOverload(name, args);
}

std::vector<size_t> CodePointOffsets(const std::string& s) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offsets.push_back(i);
  }
  return offsets;
}

}  // namespace gpuplane::cel
