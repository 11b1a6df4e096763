#include "sched/disk_conflicts.h"

#include <algorithm>

#include "util/strings.h"

namespace gpuplane::sched {
namespace {

bool ReadOnly(const api::Doc& source) {
  const api::Doc* r = source.Find("readOnly");
  return r != nullptr && r->is_scalar() && r->bool_value();
}

}  // namespace

std::vector<InlineDisk> InlineDisksOf(const api::PodSpec& spec) {
  std::vector<InlineDisk> out;
  for (const api::Volume& v : spec.volumes) {
    for (const auto& [source, doc] : v.extra) {
      if (!doc.is_map()) continue;
      const bool ro = ReadOnly(doc);
      InlineDisk d;
      if (source == "gcePersistentDisk") {
        d = {InlineDisk::Kind::kGcePd, doc.ScalarText("pdName"), {}, ro};
      } else if (source == "awsElasticBlockStore") {
        d = {InlineDisk::Kind::kAwsEbs, doc.ScalarText("volumeID"), {}, ro};
      } else if (source == "iscsi") {
        d = {InlineDisk::Kind::kIscsi, doc.ScalarText("iqn"), {}, ro};
      } else if (source == "rbd") {
        std::string pool = doc.ScalarText("pool");
        if (pool.empty()) pool = "rbd";  // the API server's default
        d = {InlineDisk::Kind::kRbd, pool + "/" + doc.ScalarText("image"),
             doc.ScalarItems("monitors"), ro};
      } else {
        continue;
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

bool Conflict(const InlineDisk& a, const InlineDisk& b) {
  if (a.kind != b.kind || a.id != b.id) return false;
  switch (a.kind) {
    case InlineDisk::Kind::kAwsEbs:
      return true;  // an EBS volume attaches to one node read-write or not
    case InlineDisk::Kind::kRbd:
      if (std::none_of(a.monitors.begin(), a.monitors.end(), [&](const std::string& m) {
            return std::find(b.monitors.begin(), b.monitors.end(), m) != b.monitors.end();
          })) {
        return false;
      }
      break;
    case InlineDisk::Kind::kGcePd:
    case InlineDisk::Kind::kIscsi:
      break;
  }
  return !(a.read_only && b.read_only);
}

const InlineDisk* FirstDiskConflict(const std::vector<InlineDisk>& want,
                                    const std::vector<InlineDisk>& used) {
  for (const InlineDisk& w : want) {
    for (const InlineDisk& u : used) {
      if (Conflict(w, u)) return &u;
    }
  }
  return nullptr;
}

std::string Describe(const InlineDisk& d) {
  std::string_view kind;
  switch (d.kind) {
    case InlineDisk::Kind::kGcePd:
      kind = "GCE PD";
      break;
    case InlineDisk::Kind::kAwsEbs:
      kind = "AWS EBS volume";
      break;
    case InlineDisk::Kind::kIscsi:
      kind = "iSCSI LUN";
      break;
    case InlineDisk::Kind::kRbd:
      kind = "RBD image";
      break;
  }
  return util::Cat(kind, " ", d.id, d.read_only ? " (read-only)" : " (read-write)");
}

}  // namespace gpuplane::sched
