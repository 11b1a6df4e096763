#include "model/gpu_catalog.h"

#include <string>

namespace gpuplane::model {

std::span<const MigProfile> MigProfiles() {
  // Placement rules from NVIDIA's MIG user guide (gpus-and-mig.md).
  static const std::vector<MigProfile> kProfiles = {
      {19, "1g", 1, 1, {0, 1, 2, 3, 4, 5, 6}, 1, 0, 0, 0},
      {20, "1g+me", 1, 1, {0, 1, 2, 3, 4, 5, 6}, 1, 1, 1, 1},
      {15, "1g", 1, 2, {0, 2, 4, 6}, 1, 1, 0, 0},
      {14, "2g", 2, 2, {0, 2, 4}, 2, 1, 0, 0},
      {9, "3g", 3, 4, {0, 4}, 3, 2, 0, 0},
      {5, "4g", 4, 4, {0}, 4, 2, 0, 0},
      {0, "7g", 7, 8, {0}, 7, 5, 1, 1},
  };
  return kProfiles;
}

std::span<const GpuProduct> GpuProducts() {
  static const std::vector<GpuProduct> kProducts = {
      {"h100",
       "NVIDIA H100 80GB HBM3",
       "Hopper",
       "9.0.0",
       80,
       132,
       true,
       true,
       {16, 16, 26, 32, 60, 64, 132}},
      {"h200",
       "NVIDIA H200",
       "Hopper",
       "9.0.0",
       141,
       132,
       true,
       true,
       {16, 16, 26, 32, 60, 64, 132}},
      {"b200",
       "NVIDIA B200",
       "Blackwell",
       "10.0.0",
       180,
       148,
       true,
       true,
       {18, 18, 30, 36, 66, 72, 148}},
      {"b300",
       "NVIDIA B300",
       "Blackwell",
       "10.3.0",
       288,
       148,
       true,
       true,
       {18, 18, 30, 36, 66, 72, 148}},
      {"a100-80gb",
       "NVIDIA A100-SXM4-80GB",
       "Ampere",
       "8.0.0",
       80,
       108,
       true,
       true,
       {14, 14, 14, 28, 42, 56, 98}},
      {"a100-40gb",
       "NVIDIA A100-SXM4-40GB",
       "Ampere",
       "8.0.0",
       40,
       108,
       true,
       true,
       {14, 14, 14, 28, 42, 56, 98}},
      {"l40s", "NVIDIA L40S", "Ada Lovelace", "8.9.0", 48, 142, false, false, {}},
      {"l4", "NVIDIA L4", "Ada Lovelace", "8.9.0", 24, 58, false, false, {}},
      {"a10", "NVIDIA A10", "Ampere", "8.6.0", 24, 72, false, false, {}},
      {"t4", "Tesla T4", "Turing", "7.5.0", 16, 40, false, false, {}},
      {"v100", "Tesla V100-SXM2-32GB", "Volta", "7.0.0", 32, 80, false, true, {}},
  };
  return kProducts;
}

const GpuProduct* FindGpuProduct(std::string_view key) {
  for (const GpuProduct& p : GpuProducts()) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

std::string MigProfileName(const GpuProduct& gpu, const MigProfile& profile) {
  int gb = profile.memory_slices * gpu.memory_gib / 8;
  std::string_view suffix = profile.suffix;
  std::string base(suffix.substr(0, 2));
  std::string name = base + "." + std::to_string(gb) + "gb";
  if (suffix.ends_with("+me")) name += "+me";
  return name;
}

}  // namespace gpuplane::model
