#include "api/names.h"
#include "util/strings.h"

namespace gpuplane::api {
namespace {

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsAlnumLower(c) || (c >= 'A' && c <= 'Z'); }

bool LabelOk(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  for (char c : s) {
    if (!IsAlnumLower(c) && c != '-') return false;
  }
  return true;
}

bool SubdomainOk(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!LabelOk(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string TooLong(std::string_view what, size_t max) {
  return util::Cat(what, " must be no more than ", max, " characters");
}

bool NameOk(std::string_view s) {  // label-key name part and label values
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool NumericIdentifierOk(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return s.size() == 1 || s[0] != '0';
}

bool IdentifiersOk(std::string_view s, bool numeric_rules) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view id = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (id.empty()) return false;
    bool all_digits = true;
    for (char c : id) {
      if (!IsAlnum(c) && c != '-') return false;
      if (c < '0' || c > '9') all_digits = false;
    }
    if (numeric_rules && all_digits && !NumericIdentifierOk(id)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

std::string CheckDnsLabel(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > 63) return TooLong("a DNS label", 63);
  if (!LabelOk(s)) {
    return util::Cat("\"", s, "\" is not a DNS label (lower case letters, digits and '-', ",
                     "starting and ending with a letter or digit)");
  }
  return "";
}

std::string CheckDnsSubdomain(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > 253) return TooLong("a DNS subdomain", 253);
  if (!SubdomainOk(s, 253)) {
    return util::Cat("\"", s, "\" is not a DNS subdomain (dot-separated DNS labels: lower ",
                     "case letters, digits and '-')");
  }
  return "";
}

std::string CheckDriverName(std::string_view s) {
  if (s.size() > 63) return TooLong("a driver name", 63);
  return CheckDnsSubdomain(s);
}

std::string CheckPoolName(std::string_view s) {
  if (s.empty()) return "must not be empty";
  if (s.size() > 253) return TooLong("a pool name", 253);
  size_t start = 0;
  while (true) {
    size_t slash = s.find('/', start);
    std::string_view part = s.substr(start, slash == s.npos ? s.npos : slash - start);
    if (!SubdomainOk(part, 253)) {
      return util::Cat("\"", s, "\" is not a pool name (DNS subdomains separated by '/')");
    }
    if (slash == s.npos) return "";
    start = slash + 1;
  }
}

std::string CheckLabelKey(std::string_view s) {
  if (s.empty()) return "must not be empty";
  std::string_view name = s;
  size_t slash = s.find('/');
  if (slash != s.npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (!SubdomainOk(prefix, 253)) {
      return util::Cat("prefix \"", prefix, "\" of \"", s, "\" is not a DNS subdomain");
    }
  }
  if (name.empty() || name.size() > 63 || !NameOk(name)) {
    return util::Cat("\"", s, "\" is not a qualified name (at most 63 letters, digits, '-', ",
                     "'_' or '.', starting and ending with a letter or digit, with an ",
                     "optional DNS subdomain prefix and '/')");
  }
  return "";
}

std::string CheckLabelValue(std::string_view s) {
  if (s.empty()) return "";
  if (s.size() > 63) return TooLong("a label value", 63);
  if (!NameOk(s)) {
    return util::Cat("\"", s, "\" is not a valid label value (letters, digits, '-', '_' or ",
                     "'.', starting and ending with a letter or digit)");
  }
  return "";
}

std::string CheckQualifiedName(std::string_view s) {
  if (s.empty()) return "must not be empty";
  std::string_view id = s;
  size_t slash = s.find('/');
  if (slash != s.npos) {
    std::string_view domain = s.substr(0, slash);
    id = s.substr(slash + 1);
    if (domain.size() > 63) return TooLong("the domain of a qualified name", 63);
    if (!SubdomainOk(domain, 63)) {
      return util::Cat("domain \"", domain, "\" is not a DNS subdomain");
    }
  }
  if (id.size() > 32) return TooLong("the name part of a qualified name", 32);
  bool ok = !id.empty() && !(id[0] >= '0' && id[0] <= '9');
  for (char c : id) {
    if (!IsAlnum(c) && c != '_') ok = false;
  }
  if (!ok) {
    return util::Cat("\"", s, "\" is not a qualified name (an optional DNS domain and '/', ",
                     "then a C identifier: letters, digits and '_', not starting with a digit)");
  }
  return "";
}

std::string CheckSemver(std::string_view s) {
  std::string_view core = s;
  std::string_view pre, build;
  size_t plus = core.find('+');
  if (plus != core.npos) {
    build = core.substr(plus + 1);
    core = core.substr(0, plus);
    if (!IdentifiersOk(build, false)) return util::Cat("\"", s, "\" has bad build metadata");
  }
  size_t dash = core.find('-');
  if (dash != core.npos) {
    pre = core.substr(dash + 1);
    core = core.substr(0, dash);
    if (!IdentifiersOk(pre, true)) return util::Cat("\"", s, "\" has a bad pre-release");
  }
  int parts = 0;
  size_t start = 0;
  while (true) {
    size_t dot = core.find('.', start);
    std::string_view num = core.substr(start, dot == core.npos ? core.npos : dot - start);
    if (!NumericIdentifierOk(num)) parts = -100;
    ++parts;
    if (dot == core.npos) break;
    start = dot + 1;
  }
  if (parts != 3) {
    return util::Cat("\"", s, "\" is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.2.3, ",
                     "without leading zeros)");
  }
  return "";
}

}  // namespace gpuplane::api
