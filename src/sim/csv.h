// CSV tables for the trace readers: a header and rows of fields with their 1-based line
// numbers, columns found by header name, and field readers that explain what is wrong with a
// field. Internal to sim/; pure functions and value types; thread-safe.
#ifndef GPUPLANE_SIM_CSV_H_
#define GPUPLANE_SIM_CSV_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace gpuplane::sim::csv {

// Fields may be double-quoted ("" escapes a quote).
struct Table {
  std::vector<std::string> header;
  std::vector<std::pair<int, std::vector<std::string>>> rows;
};

// Blank lines are skipped; a UTF-8 BOM and spaces around header names are dropped.
Table ParseTable(const std::string& text);

class Columns {
 public:
  Columns(const Table& t, std::string name);
  // Errors: a column is not in the header ("name:1: the header lacks column ...").
  absl::Status Require(std::initializer_list<const char*> names) const;
  // The field of `col` in `row`; nullptr when the column or the field is missing.
  const std::string* Get(const std::vector<std::string>& row, const std::string& col) const;

 private:
  std::string name_;
  std::map<std::string, size_t> index_;
};

// Reads a non-negative integer field; false (with `problem` set) when it is not one.
bool Integer(const Columns& cols, const std::vector<std::string>& row, const char* col,
             int64_t& out, std::string& problem);
// Reads a non-negative decimal number ("66.0"); false (with `problem` set) when it is not one.
bool Number(const Columns& cols, const std::vector<std::string>& row, const char* col, double& out,
            std::string& problem);

// "name:line".
std::string Where(const std::string& name, int line);

}  // namespace gpuplane::sim::csv

#endif  // GPUPLANE_SIM_CSV_H_
