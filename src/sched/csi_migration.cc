#include "sched/csi_migration.h"

#include <set>
#include <vector>

#include "absl/strings/str_split.h"
#include "util/strings.h"

namespace gpuplane::sched {
namespace {

// Plugin and driver names and handle formats: k8s.io/csi-translation-lib v0.35 (plugins/).
constexpr std::string_view kEbsDriver = "ebs.csi.aws.com";
constexpr std::string_view kGcePdDriver = "pd.csi.storage.gke.io";
constexpr std::string_view kAzureDiskDriver = "disk.csi.azure.com";
constexpr std::string_view kCinderDriver = "cinder.csi.openstack.org";
constexpr std::string_view kPortworxDriver = "pxd.portworx.com";
constexpr std::string_view kPortworxPlugin = "kubernetes.io/portworx-volume";

std::string Field(const api::Passthrough& sources, const char* source, std::string_view field) {
  auto it = sources.find(source);
  return it != sources.end() && it->second.is_map() ? it->second.ScalarText(field) : "";
}

// "aws://<zone>/vol-..." or "vol-...": the EBS volume id, "" when it is neither.
std::string EbsVolumeId(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return std::string(id);  // a bare id, taken as it is
  id.remove_prefix(kScheme.size());
  size_t slash = id.find('/');
  if (slash == std::string_view::npos) return "";
  id.remove_prefix(slash);  // the path, after the zone
  while (id.starts_with('/')) id.remove_prefix(1);
  while (id.ends_with('/')) id.remove_suffix(1);
  if (!id.starts_with("vol-") || id.find('/') != std::string_view::npos) return "";
  return std::string(id);
}

// A GCE PD volume's handle: zonal by the volume's zone label, regional when the label names
// several zones of one region ("<a>__<b>"), else with the zone unspecified.
std::string GcePdHandle(const std::string& disk, const std::map<std::string, std::string>* labels) {
  std::string zones;
  if (labels != nullptr) {
    for (const char* key :
         {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"}) {
      auto it = labels->find(key);
      if (it != labels->end() && !it->second.empty()) {
        zones = it->second;
        break;
      }
    }
  }
  std::vector<std::string> list = absl::StrSplit(zones, "__");
  if (list.size() == 1 && !list[0].empty()) {
    return util::Cat("projects/UNSPECIFIED/zones/", list[0], "/disks/", disk);
  }
  if (list.size() > 1) {
    std::set<std::string> regions;
    for (const std::string& zone : list) {
      std::vector<std::string> parts = absl::StrSplit(zone, '-');
      if (parts.size() != 3) return "";  // not {locale}-{region}-{zone}
      regions.insert(parts[0] + "-" + parts[1]);
    }
    if (regions.size() != 1) return "";
    return util::Cat("projects/UNSPECIFIED/regions/", *regions.begin(), "/disks/", disk);
  }
  return util::Cat("projects/UNSPECIFIED/zones/UNSPECIFIED/disks/", disk);
}

CsiVolume Of(std::string_view driver, const std::string& handle) {
  return {std::string(driver), util::Cat(driver, "/", handle), ""};
}

}  // namespace

std::optional<CsiVolume> MigratedVolume(const api::Passthrough& sources,
                                        const std::map<std::string, std::string>* pv_labels) {
  if (sources.contains("awsElasticBlockStore")) {
    std::string id = EbsVolumeId(Field(sources, "awsElasticBlockStore", "volumeID"));
    if (id.empty()) return std::nullopt;
    return Of(kEbsDriver, id);
  }
  if (sources.contains("gcePersistentDisk")) {
    std::string disk = Field(sources, "gcePersistentDisk", "pdName");
    std::string handle = disk.empty() ? "" : GcePdHandle(disk, pv_labels);
    if (handle.empty()) return std::nullopt;
    return Of(kGcePdDriver, handle);
  }
  if (sources.contains("azureDisk")) {
    std::string uri = Field(sources, "azureDisk", "diskURI");
    if (uri.empty()) return std::nullopt;
    return Of(kAzureDiskDriver, uri);
  }
  if (sources.contains("cinder")) {
    std::string id = Field(sources, "cinder", "volumeID");
    if (id.empty()) return std::nullopt;
    return Of(kCinderDriver, id);
  }
  if (sources.contains("portworxVolume")) {
    std::string id = Field(sources, "portworxVolume", "volumeID");
    if (id.empty()) return std::nullopt;
    CsiVolume v = Of(kPortworxDriver, id);
    v.migrated_plugin = kPortworxPlugin;
    return v;
  }
  return std::nullopt;
}

std::optional<CsiVolume> ProvisionedVolume(std::string_view provisioner, std::string_view claim) {
  // Not a volume handle: a claim's key has a space no driver's handle here would have.
  auto of = [&](std::string_view driver) {
    return CsiVolume{std::string(driver), util::Cat(driver, "/(claim) ", claim), ""};
  };
  if (provisioner == "kubernetes.io/aws-ebs") return of(kEbsDriver);
  if (provisioner == "kubernetes.io/gce-pd") return of(kGcePdDriver);
  if (provisioner == "kubernetes.io/azure-disk") return of(kAzureDiskDriver);
  if (provisioner == "kubernetes.io/cinder") return of(kCinderDriver);
  if (provisioner == kPortworxPlugin) {
    CsiVolume v = of(kPortworxDriver);
    v.migrated_plugin = kPortworxPlugin;
    return v;
  }
  if (provisioner == "kubernetes.io/azure-file" || provisioner == "kubernetes.io/vsphere-volume") {
    return std::nullopt;
  }
  return of(provisioner);
}

}  // namespace gpuplane::sched
