#include "sim/csv.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "util/strings.h"

namespace gpuplane::sim::csv {
namespace {

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string_view Trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Table ParseTable(const std::string& text) {
  Table t;
  size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    pos = end + 1;
    if (line.empty()) continue;
    if (t.header.empty()) {
      t.header = SplitCsvLine(line);
      for (std::string& h : t.header) {
        h.erase(0, h.find_first_not_of(" \t\xEF\xBB\xBF"));  // spaces, a UTF-8 BOM
        h.erase(h.find_last_not_of(" \t") + 1);
      }
    } else {
      t.rows.emplace_back(line_no, SplitCsvLine(line));
    }
  }
  return t;
}

Columns::Columns(const Table& t, std::string name) : name_(std::move(name)) {
  for (size_t i = 0; i < t.header.size(); ++i) index_[t.header[i]] = i;
}

absl::Status Columns::Require(std::initializer_list<const char*> names) const {
  for (const char* n : names) {
    if (!index_.contains(n)) {
      std::string all;
      for (const char* m : names) util::Append(all, all.empty() ? "" : ", ", m);
      return absl::InvalidArgumentError(
          util::Cat(name_, ":1: the header lacks column \"", n, "\"; expected columns: ", all));
    }
  }
  return absl::OkStatus();
}

const std::string* Columns::Get(const std::vector<std::string>& row, const std::string& col) const {
  auto it = index_.find(col);
  if (it == index_.end() || it->second >= row.size()) return nullptr;
  return &row[it->second];
}

namespace {

// The trimmed field of `col`; nullopt (with `problem` set) when the row lacks it.
std::optional<std::string_view> Field(const Columns& cols, const std::vector<std::string>& row,
                                      const char* col, std::string& problem) {
  const std::string* v = cols.Get(row, col);
  if (v == nullptr) {
    problem = util::Cat("column ", col, " is missing in this row");
    return std::nullopt;
  }
  return Trimmed(*v);
}

}  // namespace

bool Integer(const Columns& cols, const std::vector<std::string>& row, const char* col,
             int64_t& out, std::string& problem) {
  std::optional<std::string_view> s = Field(cols, row, col, problem);
  if (!s) return false;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), out);
  if (ec != std::errc() || ptr != s->data() + s->size() || s->empty() || out < 0) {
    problem = util::Cat(col, " \"", *cols.Get(row, col), "\" is not a non-negative integer");
    return false;
  }
  return true;
}

bool Number(const Columns& cols, const std::vector<std::string>& row, const char* col, double& out,
            std::string& problem) {
  std::optional<std::string_view> s = Field(cols, row, col, problem);
  if (!s) return false;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), out);
  if (ec != std::errc() || ptr != s->data() + s->size() || s->empty() || !std::isfinite(out) ||
      out < 0) {
    problem = util::Cat(col, " \"", *cols.Get(row, col), "\" is not a non-negative number");
    return false;
  }
  return true;
}

std::string Where(const std::string& name, int line) { return util::Cat(name, ":", line); }

}  // namespace gpuplane::sim::csv
