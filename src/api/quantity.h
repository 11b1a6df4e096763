// Quantity: Kubernetes resource.Quantity semantics (suffixes n u m k M G T P E, Ki..Ei,
// decimal exponents), held exactly as a 128-bit count of nano-units: no floating point.
// Values are rounded up to 1n on parse (as Kubernetes does); magnitudes above 2^63-1 units
// are rejected as out of range (Kubernetes silently caps binary-suffixed ones instead).
// Immutable value type; thread-safe.
#ifndef GPUPLANE_API_QUANTITY_H_
#define GPUPLANE_API_QUANTITY_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuplane::api {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

class Quantity {
 public:
  // The suffix family the value was written in; it decides the canonical output form.
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  // Largest magnitude in nano-units: (2^63 - 1) units.
  static constexpr Int128 kMaxNano = static_cast<Int128>(INT64_MAX) * 1'000'000'000;

  Quantity() = default;
  static absl::StatusOr<Quantity> Parse(std::string_view text);
  static Quantity FromUnits(int64_t units, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimalSI);
  // REQUIRES: |nano| <= kMaxNano.
  static Quantity FromNano(Int128 nano, Format format = Format::kDecimalSI);

  // Canonical text, as Kubernetes prints it: "1000m" -> "1", "1024Mi" -> "1Gi".
  std::string String() const;

  Int128 nano() const { return nano_; }
  Format format() const { return format_; }
  bool IsZero() const { return nano_ == 0; }
  int Sign() const { return nano_ < 0 ? -1 : (nano_ > 0 ? 1 : 0); }
  bool IsInteger() const { return nano_ % 1'000'000'000 == 0; }
  // Whole units, rounded up (Kubernetes Value()).
  int64_t Value() const;
  // Thousandths, rounded up (Kubernetes MilliValue()); saturates at int64 limits.
  int64_t MilliValue() const;
  double AsApproximateFloat() const;

  // Exact arithmetic; out-of-range results are errors. The result keeps this quantity's
  // format unless this quantity is zero (as Kubernetes does).
  absl::StatusOr<Quantity> Add(const Quantity& other) const;
  absl::StatusOr<Quantity> Sub(const Quantity& other) const;

  // -1, 0 or 1.
  int Compare(const Quantity& other) const {
    return nano_ < other.nano_ ? -1 : (nano_ > other.nano_ ? 1 : 0);
  }
  // Equality is by value ("1Gi" == "1024Mi"), as Kubernetes' semantic equality.
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nano_ == b.nano_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nano_ <=> b.nano_;
  }

 private:
  Quantity(Int128 nano, Format format) : nano_(nano), format_(format) {}

  Int128 nano_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace gpuplane::api

#endif  // GPUPLANE_API_QUANTITY_H_
