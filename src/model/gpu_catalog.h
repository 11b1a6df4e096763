// Facts about GPU products and their MIG geometry (../shared/reference/gpus-and-mig.md), used
// to publish devices the way NVIDIA's DRA driver does and to reason about MIG placements.
// Immutable static data; thread-safe.
#ifndef GPUPLANE_MODEL_GPU_CATALOG_H_
#define GPUPLANE_MODEL_GPU_CATALOG_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gpuplane::model {

// A GPU-instance profile: which memory slices it may start at and what it consumes. Engine
// counts follow the A100-40GB table for every product (the reference verifies no others).
struct MigProfile {
  int gi_profile_id;
  std::string_view suffix;  // "1g", "1g+me", "1g(2x)", "2g"... combined with memory below
  int compute_slices;
  int memory_slices;
  std::vector<int> starts;
  int copy_engines;
  int decoders;
  int jpeg_engines;
  int ofa_engines;
};

struct GpuProduct {
  std::string_view key;           // "h100", "a100-80gb", ... (CLI and trace names)
  std::string_view product_name;  // as NVML reports it
  std::string_view architecture;
  std::string_view compute_capability;  // semver form, "9.0.0"
  int memory_gib;
  int multiprocessors;
  bool mig_capable;
  bool nvlink;  // HGX board: all GPUs of a node share one NVLink domain
  // MIG SMs per profile in the order of MigProfiles(); empty when not MIG-capable.
  std::vector<int> mig_multiprocessors;
};

// The seven GI profiles, ordered 19, 20, 15, 14, 9, 5, 0.
std::span<const MigProfile> MigProfiles();
std::span<const GpuProduct> GpuProducts();
// nullptr when unknown.
const GpuProduct* FindGpuProduct(std::string_view key);

// "1g.10gb" style name of a profile on a product (memory = slices x memory / 8).
std::string MigProfileName(const GpuProduct& gpu, const MigProfile& profile);

}  // namespace gpuplane::model

#endif  // GPUPLANE_MODEL_GPU_CATALOG_H_
