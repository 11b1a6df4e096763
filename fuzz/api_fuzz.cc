// libFuzzer target over every api/ parser: JSON and YAML readers, object decoding and
// validation, encode -> decode round trips, and Quantity parsing. Invariants are checked and
// a violation aborts, so the fuzzer reports it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/loader.h"
#include "api/quantity.h"
#include "api/writer.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

void FuzzQuantity(std::string_view text) {
  absl::StatusOr<gpuplane::api::Quantity> q = gpuplane::api::Quantity::Parse(text);
  if (!q.ok()) return;
  absl::StatusOr<gpuplane::api::Quantity> again = gpuplane::api::Quantity::Parse(q->String());
  Check(again.ok() && *again == *q);
  (void)q->Add(*q);
}

void FuzzObjects(std::string_view text, gpuplane::api::Format format) {
  gpuplane::api::Loader loader;
  loader.AddText(text, "fuzz", format);
  gpuplane::api::LoadResult r = loader.Finish();
  for (const gpuplane::api::SourcedObject& o : r.objects) {
    if (!o.valid) continue;
    // A valid object survives encode -> decode unchanged.
    std::string yaml = gpuplane::api::ToYaml(gpuplane::api::EncodeObject(o.object));
    gpuplane::api::Loader again;
    again.AddText(yaml, "fuzz-roundtrip", gpuplane::api::Format::kYaml);
    gpuplane::api::LoadResult back = again.Finish();
    Check(back.objects.size() == 1 && back.objects[0].object == o.object);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (size < 64) FuzzQuantity(text);
  FuzzObjects(text, gpuplane::api::Format::kJson);
  FuzzObjects(text, gpuplane::api::Format::kYaml);
  return 0;
}
