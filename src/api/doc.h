// A parsed YAML or JSON document: a tree of scalars, maps and sequences that remembers the
// 1-based source line of every node, so later stages can report `file:line`. Both readers
// produce this tree; the typed decoders consume it. Plain value type; not synchronized.
#ifndef GPUPLANE_API_DOC_H_
#define GPUPLANE_API_DOC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplane::api {

struct DocEntry;

class Doc {
 public:
  // Scalars are resolved the way Kubernetes' YAML->JSON conversion resolves them: quoted YAML
  // scalars and JSON strings are kString; plain YAML scalars may be null, bool, int or float.
  enum class Kind : uint8_t { kNull, kBool, kInt, kFloat, kString, kMap, kSeq };

  // Defined in doc.cc, where DocEntry is complete.
  Doc();
  ~Doc();
  Doc(const Doc&);
  Doc(Doc&&) noexcept;
  Doc& operator=(const Doc&);
  Doc& operator=(Doc&&) noexcept;
  static Doc Scalar(Kind kind, std::string text, uint32_t line = 0);
  static Doc String(std::string text, uint32_t line = 0) {
    return Scalar(Kind::kString, std::move(text), line);
  }
  static Doc Map(uint32_t line = 0);
  static Doc Seq(uint32_t line = 0);

  Kind kind() const { return kind_; }
  uint32_t line() const { return line_; }
  void set_line(uint32_t line) { line_ = line; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_seq() const { return kind_ == Kind::kSeq; }
  bool is_scalar() const { return kind_ != Kind::kMap && kind_ != Kind::kSeq; }

  // Scalar text as written (for strings: the decoded string value).
  const std::string& text() const { return text_; }
  // Boolean scalars keep the text as written ("yes", "On", "true"); this is its value.
  bool bool_value() const;

  const std::vector<DocEntry>& entries() const { return entries_; }
  std::vector<DocEntry>& entries() { return entries_; }
  const std::vector<Doc>& items() const { return items_; }
  std::vector<Doc>& items() { return items_; }

  // Map lookup by key (linear; maps in Kubernetes objects are small). nullptr when absent.
  const Doc* Find(std::string_view key) const;
  // The text of member `key` when it is a scalar other than null, else "" (also on non-maps).
  std::string ScalarText(std::string_view key) const;
  // The texts of member `key`'s scalar items when it is a sequence, else none.
  std::vector<std::string> ScalarItems(std::string_view key) const;
  Doc& Add(std::string key, Doc value, uint32_t key_line = 0);
  void Push(Doc value) { items_.push_back(std::move(value)); }

  // Structural equality; source lines are ignored.
  friend bool operator==(const Doc& a, const Doc& b);

  // A short description for error messages: "a string", "an integer 42", "a map".
  std::string Describe() const;

 private:
  Kind kind_ = Kind::kNull;
  uint32_t line_ = 0;
  std::string text_;
  std::vector<DocEntry> entries_;
  std::vector<Doc> items_;
};

struct DocEntry {
  std::string key;
  uint32_t key_line = 0;
  Doc value;
};

bool operator==(const DocEntry& a, const DocEntry& b);

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_DOC_H_
