// Scalar decoders and encoders for the field-table machinery in internal/schema.h.
#include <charconv>

#include "api/internal/schema.h"
#include "api/names.h"
#include "util/strings.h"

namespace gpuplane::api::internal {

std::string CheckFormat(Fmt fmt, std::string_view s) {
  switch (fmt) {
    case Fmt::kAny:
      return "";
    case Fmt::kDnsLabel:
      return CheckDnsLabel(s);
    case Fmt::kDnsSubdomain:
      return CheckDnsSubdomain(s);
    case Fmt::kDriverName:
      return CheckDriverName(s);
    case Fmt::kPoolName:
      return CheckPoolName(s);
    case Fmt::kLabelKey:
      return CheckLabelKey(s);
    case Fmt::kLabelValue:
      return CheckLabelValue(s);
    case Fmt::kQualifiedName:
      return CheckQualifiedName(s);
    case Fmt::kSemver:
      return CheckSemver(s);
    case Fmt::kCel:
      if (s.empty()) return "must not be empty";
      if (s.size() > size_t{10} * 1024) {
        return util::Cat("CEL expression longer than 10240 bytes (", s.size(), ")");
      }
      return "";
  }
  return "";
}

uint32_t LineOf(const Doc& n, std::string_view key) {
  for (const DocEntry& e : n.entries()) {
    if (e.key == key) return e.value.is_scalar() ? e.value.line() : e.key_line;
  }
  return n.line();
}

void DecodeValue(Decoder& d, const Doc& n, std::string& out, const Rule& r) {
  if (n.is_null()) return;
  if (n.kind() != Doc::Kind::kString) {
    std::string hint = n.is_scalar() ? " (quote it to make it a string)" : "";
    d.Error(n.line(), "expected a string, got " + n.Describe() + hint);
    return;
  }
  out = n.text();
  if (r.max_len != 0 && out.size() > r.max_len) {
    d.Error(n.line(), util::Cat("value longer than ", r.max_len, " characters"));
    return;
  }
  if (r.value != Fmt::kAny) {
    std::string problem = CheckFormat(r.value, out);
    if (!problem.empty()) d.Error(n.line(), std::move(problem));
  }
}

void DecodeValue(Decoder& d, const Doc& n, bool& out, const Rule&) {
  if (n.is_null()) return;
  if (n.kind() != Doc::Kind::kBool) {
    d.Error(n.line(), "expected true or false, got " + n.Describe());
    return;
  }
  out = n.bool_value();
}

namespace {

template <typename I>
void DecodeInt(Decoder& d, const Doc& n, I& out, const char* what) {
  if (n.is_null()) return;
  if (n.kind() != Doc::Kind::kInt) {
    d.Error(n.line(), util::Cat("expected ", what, ", got ", n.Describe()));
    return;
  }
  std::string_view t = n.text();
  if (!t.empty() && t[0] == '+') t.remove_prefix(1);
  I v{};
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size()) {
    d.Error(n.line(), util::Cat("integer ", n.text(), " is out of range for ", what));
    return;
  }
  out = v;
}

}  // namespace

void DecodeValue(Decoder& d, const Doc& n, int64_t& out, const Rule&) {
  DecodeInt(d, n, out, "a 64-bit integer");
}

void DecodeValue(Decoder& d, const Doc& n, int32_t& out, const Rule&) {
  DecodeInt(d, n, out, "a 32-bit integer");
}

void DecodeValue(Decoder& d, const Doc& n, Quantity& out, const Rule&) {
  if (n.is_null()) return;
  if (!n.is_scalar() || n.kind() == Doc::Kind::kBool) {
    d.Error(n.line(), "expected a quantity such as \"80Gi\" or \"500m\", got " + n.Describe());
    return;
  }
  absl::StatusOr<Quantity> q = Quantity::Parse(n.text());
  if (!q.ok()) {
    d.Error(n.line(),
            util::Cat("bad quantity \"", n.text(), "\": ", std::string(q.status().message())));
    return;
  }
  out = *q;
}

void DecodeValue(Decoder&, const Doc& n, Doc& out, const Rule&) { out = n; }

Doc EncodeValue(const std::string& v) { return Doc::String(v); }
Doc EncodeValue(bool v) { return Doc::Scalar(Doc::Kind::kBool, v ? "true" : "false"); }
Doc EncodeValue(int64_t v) { return Doc::Scalar(Doc::Kind::kInt, std::to_string(v)); }
Doc EncodeValue(int32_t v) { return Doc::Scalar(Doc::Kind::kInt, std::to_string(v)); }
Doc EncodeValue(const Quantity& v) { return Doc::String(v.String()); }
Doc EncodeValue(const Doc& v) { return v; }

}  // namespace gpuplane::api::internal
