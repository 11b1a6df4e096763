#include "sim/workload.h"

#include <algorithm>

#include "util/strings.h"

namespace gpuplane::sim {

Demands ToDemands(const std::vector<TracePod>& pods, const sched::ClusterView& cluster) {
  Demands out;
  int64_t max_cpu = 0, max_memory = 0;
  bool memory_modelled = true;
  for (const sched::NodeView& n : cluster.nodes) {
    max_cpu = std::max(max_cpu, n.cpu_capacity);
    max_memory = std::max(max_memory, n.memory_capacity);
    memory_modelled = memory_modelled && n.memory_capacity > 0;
  }
  for (size_t index = 0; index < pods.size(); ++index) {
    const TracePod& p = pods[index];
    sched::PodDemand d;
    d.cpu_milli = p.cpu_milli;
    d.memory_mib = p.memory_mib;
    d.num_gpu = p.num_gpu;
    d.gpu_milli = p.gpu_milli;
    std::string unknown;
    for (const std::string& m : p.models) {
      int id = cluster.ModelId(m);
      if (id < 0) {
        util::Append(unknown, unknown.empty() ? "" : ", ", m);
      } else {
        d.models |= uint64_t{1} << id;
      }
    }
    std::string problem;
    if (p.num_gpu > cluster.max_gpus_per_node) {
      problem = util::Cat("asks for ", p.num_gpu, " GPUs, but no node has more than ",
                          cluster.max_gpus_per_node);
    } else if (p.num_gpu > 0 && !p.models.empty() && d.models == 0) {
      problem = util::Cat("allows only GPU models the cluster lacks (", unknown, ")");
    } else if (p.cpu_milli > max_cpu) {
      problem =
          util::Cat("asks for ", p.cpu_milli, " milli-CPU, more than any node has (", max_cpu, ")");
    } else if (memory_modelled && p.memory_mib > max_memory) {
      problem = util::Cat("asks for ", p.memory_mib, " MiB of memory, more than any node has (",
                          max_memory, ")");
    }
    if (!problem.empty()) {
      out.problems.push_back(util::Cat(p.source, ": pod ", p.name, " dropped: it ", problem));
      ++out.dropped;
      continue;
    }
    if (!unknown.empty()) {
      out.problems.push_back(
          util::Cat(p.source, ": pod ", p.name, ": unknown GPU models ignored: ", unknown));
    }
    out.pods.push_back(d);
    out.names.push_back(p.name);
    out.trace_index.push_back(index);
  }
  return out;
}

}  // namespace gpuplane::sim
