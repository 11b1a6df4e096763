// Fuzz target for the accounting parsers: recordings, Pods JSON, PodResources JSON, prices,
// tar archives and the GenAI CSVs.
// Any bytes are parsed or refused with a message; a parsed recording attributes without
// crashing, and its costs conserve.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "acct/attribution.h"
#include "acct/genai.h"
#include "acct/recording.h"
#include "acct/sources.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gpuplane::acct::Recording rec = gpuplane::acct::ParseRecording(text, "fuzz.jsonl");
  gpuplane::acct::Prices prices;
  prices.default_price = 2.0;
  gpuplane::acct::Attribution a = gpuplane::acct::Attribute(
      rec, [](int64_t) { return std::nullopt; }, {}, prices);
  // Costs conserve: every device's cost is its pods' plus its idle cost.
  std::map<std::string, int64_t> charged;
  for (const auto& p : a.pods) charged[p.gpu_uuid] += p.cost_nano;
  for (const auto& d : a.devices) {
    if (d.idle_cost_nano < 0 || charged[d.gpu_uuid] + d.idle_cost_nano != d.cost_nano) {
      __builtin_trap();
    }
  }
  (void)gpuplane::acct::ParsePodsJson(text, "fuzz.json");
  (void)gpuplane::acct::ParsePodResourcesJson(text, "fuzz.json", {{0, "GPU-0"}});
  if (size < 4096) (void)gpuplane::acct::ParsePrices(text, "fuzz.yaml");
  (void)gpuplane::acct::ParseTar(text, "fuzz.tar");
  size_t half = size / 2, bad = 0;
  (void)gpuplane::acct::JoinGenaiCsv(text.substr(0, half), text.substr(half), 1, &bad);
  return 0;
}
