#include "api/doc.h"

namespace gpuplane::api {

Doc::Doc() = default;
Doc::~Doc() = default;
Doc::Doc(const Doc&) = default;
Doc::Doc(Doc&&) noexcept = default;
Doc& Doc::operator=(const Doc&) = default;
Doc& Doc::operator=(Doc&&) noexcept = default;

Doc Doc::Scalar(Kind kind, std::string text, uint32_t line) {
  Doc d;
  d.kind_ = kind;
  d.text_ = std::move(text);
  d.line_ = line;
  return d;
}

Doc Doc::Map(uint32_t line) {
  Doc d;
  d.kind_ = Kind::kMap;
  d.line_ = line;
  return d;
}

Doc Doc::Seq(uint32_t line) {
  Doc d;
  d.kind_ = Kind::kSeq;
  d.line_ = line;
  return d;
}

bool Doc::bool_value() const {
  static constexpr std::string_view kTrue[] = {"true", "True", "TRUE", "y",  "Y", "yes",
                                               "Yes",  "YES",  "on",   "On", "ON"};
  for (std::string_view t : kTrue) {
    if (text_ == t) return true;
  }
  return false;
}

const Doc* Doc::Find(std::string_view key) const {
  for (const DocEntry& e : entries_) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

std::string Doc::ScalarText(std::string_view key) const {
  const Doc* v = Find(key);
  return v != nullptr && v->is_scalar() && !v->is_null() ? v->text() : "";
}

std::vector<std::string> Doc::ScalarItems(std::string_view key) const {
  std::vector<std::string> out;
  const Doc* v = Find(key);
  if (v == nullptr || !v->is_seq()) return out;
  for (const Doc& item : v->items()) {
    if (item.is_scalar()) out.push_back(item.text());
  }
  return out;
}

Doc& Doc::Add(std::string key, Doc value, uint32_t key_line) {
  entries_.push_back(DocEntry{std::move(key), key_line, std::move(value)});
  return entries_.back().value;
}

bool operator==(const Doc& a, const Doc& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Doc::Kind::kMap:
      return a.entries_ == b.entries_;
    case Doc::Kind::kSeq:
      return a.items_ == b.items_;
    case Doc::Kind::kNull:
      return true;
    case Doc::Kind::kBool:
      return a.bool_value() == b.bool_value();
    default:
      return a.text_ == b.text_;
  }
}

bool operator==(const DocEntry& a, const DocEntry& b) {
  return a.key == b.key && a.value == b.value;
}

std::string Doc::Describe() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "a boolean (" + text_ + ")";
    case Kind::kInt:
      return "an integer (" + text_ + ")";
    case Kind::kFloat:
      return "a number (" + text_ + ")";
    case Kind::kString:
      return "a string";
    case Kind::kMap:
      return "a map";
    case Kind::kSeq:
      return "a list";
  }
  return "a value";
}

}  // namespace gpuplane::api
