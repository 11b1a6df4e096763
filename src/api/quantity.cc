#include "api/quantity.h"

#include <vector>
#include "util/strings.h"

namespace gpuplane::api {
namespace {

constexpr int64_t kNanoPerUnit = 1'000'000'000;

struct Pieces {
  bool negative = false;
  std::string_view num;    // integer digits, leading zeros stripped
  std::string_view denom;  // fraction digits
  std::string_view suffix;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Splits "[+-]digits[.digits]suffix" the way Kubernetes does (it accepts "1.", ".5", "1.G").
absl::StatusOr<Pieces> Split(std::string_view s) {
  Pieces p;
  size_t pos = 0;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) p.negative = s[pos++] == '-';
  while (pos < s.size() && s[pos] == '0') ++pos;
  size_t start = pos;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  p.num = s.substr(start, pos - start);
  if (pos < s.size() && s[pos] == '.') {
    start = ++pos;
    while (pos < s.size() && IsDigit(s[pos])) ++pos;
    p.denom = s.substr(start, pos - start);
  }
  size_t suffix_start = pos;
  static constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < s.size() && kSuffixChars.find(s[pos]) != std::string_view::npos) ++pos;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  if (pos != s.size()) {
    return absl::InvalidArgumentError(
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
  p.suffix = s.substr(suffix_start);
  // No digits at all ("Gi", "-", ".") is zero, as Kubernetes' ParseQuantity has it.
  return p;
}

struct SuffixInfo {
  Quantity::Format format;
  int base;  // 10 or 2
  int64_t exponent;
};

absl::StatusOr<SuffixInfo> Interpret(std::string_view suffix) {
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
      {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (const auto& [s, e] : kDecimal) {
    if (s == suffix) return SuffixInfo{Quantity::Format::kDecimalSI, 10, e};
  }
  for (const auto& [s, e] : kBinary) {
    if (s == suffix) return SuffixInfo{Quantity::Format::kBinarySI, 2, e};
  }
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view digits = suffix.substr(1);
    bool neg = false;
    if (digits[0] == '+' || digits[0] == '-') {
      neg = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (!digits.empty() && digits.size() <= 18) {
      int64_t v = 0;
      bool ok = true;
      for (char c : digits) {
        if (!IsDigit(c)) ok = false;
        v = v * 10 + (c - '0');
      }
      if (ok) return SuffixInfo{Quantity::Format::kDecimalExponent, 10, neg ? -v : v};
    }
  }
  return absl::InvalidArgumentError(util::Cat(
      "unknown suffix \"", suffix,
      "\" (use n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or an exponent like e3)"));
}

// Multiplies a big-endian decimal digit string by `m` (small) in place.
void MultiplyDigits(std::vector<uint8_t>& digits, uint32_t m) {
  uint64_t carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    uint64_t v = static_cast<uint64_t>(digits[i]) * m + carry;
    digits[i] = static_cast<uint8_t>(v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    digits.insert(digits.begin(), static_cast<uint8_t>(carry % 10));
    carry /= 10;
  }
}

absl::Status OutOfRange() {
  return absl::OutOfRangeError(
      "quantity out of range: the magnitude must be at most 9223372036854775807 (2^63-1)");
}

std::string Int128ToString(Int128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  UInt128 u = neg ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
  std::string s;
  while (u > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (neg) s.push_back('-');
  return std::string(s.rbegin(), s.rend());
}

const char* DecimalSuffix(int64_t exponent) {
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 0:
      return "";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("quantity is empty");
  absl::StatusOr<Pieces> pieces = Split(text);
  if (!pieces.ok()) return pieces.status();
  absl::StatusOr<SuffixInfo> suffix = Interpret(pieces->suffix);
  if (!suffix.ok()) return suffix.status();

  std::vector<uint8_t> digits;
  digits.reserve(pieces->num.size() + pieces->denom.size());
  for (char c : pieces->num) digits.push_back(static_cast<uint8_t>(c - '0'));
  for (char c : pieces->denom) digits.push_back(static_cast<uint8_t>(c - '0'));
  int64_t shift = 9 - static_cast<int64_t>(pieces->denom.size());
  if (suffix->base == 10) {
    shift += suffix->exponent;
  } else {
    for (int64_t e = suffix->exponent; e > 0; e -= 10) MultiplyDigits(digits, 1024);
  }
  size_t lead = 0;
  while (lead < digits.size() && digits[lead] == 0) ++lead;
  digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(lead));
  if (digits.empty()) return Quantity(0, suffix->format);

  // nano = digits * 10^shift, rounded up to an integer.
  int64_t keep = static_cast<int64_t>(digits.size()) + shift;
  if (keep > 29) return OutOfRange();
  Int128 nano = 0;
  bool round_up = false;
  for (int64_t i = 0; i < static_cast<int64_t>(digits.size()); ++i) {
    if (i < keep) {
      nano = nano * 10 + digits[static_cast<size_t>(i)];
    } else if (digits[static_cast<size_t>(i)] != 0) {
      round_up = true;
    }
  }
  for (int64_t i = static_cast<int64_t>(digits.size()); i < keep; ++i) nano *= 10;
  if (round_up) ++nano;
  if (nano > kMaxNano) return OutOfRange();
  return Quantity(pieces->negative ? -nano : nano, suffix->format);
}

Quantity Quantity::FromUnits(int64_t units, Format format) {
  return Quantity(static_cast<Int128>(units) * kNanoPerUnit, format);
}

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  return Quantity(static_cast<Int128>(milli) * 1'000'000, format);
}

Quantity Quantity::FromNano(Int128 nano, Format format) { return Quantity(nano, format); }

std::string Quantity::String() const {
  if (nano_ == 0) return "0";
  Format format = format_;
  if (format == Format::kBinarySI) {
    Int128 limit = static_cast<Int128>(1024) * kNanoPerUnit;
    if ((nano_ > -limit && nano_ < limit) || !IsInteger()) format = Format::kDecimalSI;
  }
  if (format == Format::kBinarySI) {
    Int128 units = nano_ / kNanoPerUnit;
    int exponent = 0;
    while (exponent < 60 && units % 1024 == 0) {
      units /= 1024;
      exponent += 10;
    }
    static constexpr const char* kBin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    return Int128ToString(units) + kBin[exponent / 10];
  }
  // Decimal: strip factors of ten, then make the exponent a multiple of three.
  Int128 mantissa = nano_;
  int64_t exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  int64_t rem = ((exponent % 3) + 3) % 3;
  for (int64_t i = 0; i < rem; ++i) mantissa *= 10;
  exponent -= rem;
  if (format == Format::kDecimalExponent) {
    return exponent == 0 ? Int128ToString(mantissa)
                         : Int128ToString(mantissa) + "e" + std::to_string(exponent);
  }
  while (exponent > 18) {  // beyond "E": keep the E suffix with a longer mantissa.
    mantissa *= 1000;
    exponent -= 3;
  }
  return Int128ToString(mantissa) + DecimalSuffix(exponent);
}

int64_t Quantity::Value() const {
  Int128 q = nano_ / kNanoPerUnit;
  if (nano_ % kNanoPerUnit > 0) ++q;
  return static_cast<int64_t>(q);
}

int64_t Quantity::MilliValue() const {
  Int128 q = nano_ / 1'000'000;
  if (nano_ % 1'000'000 > 0) ++q;
  if (q > INT64_MAX) return INT64_MAX;
  if (q < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(q);
}

double Quantity::AsApproximateFloat() const {
  return static_cast<double>(nano_) / static_cast<double>(kNanoPerUnit);
}

absl::StatusOr<Quantity> Quantity::Add(const Quantity& other) const {
  Int128 sum = nano_ + other.nano_;
  if (sum > kMaxNano || sum < -kMaxNano) return OutOfRange();
  return Quantity(sum, nano_ == 0 ? other.format_ : format_);
}

absl::StatusOr<Quantity> Quantity::Sub(const Quantity& other) const {
  return Add(Quantity(-other.nano_, other.format_));
}

}  // namespace gpuplane::api
