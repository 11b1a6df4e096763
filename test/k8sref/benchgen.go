// The clusters and claims of `k8sref bench`, built once as Kubernetes objects and given to both
// sides: H100 nodes (cases a, b, d) and A100 nodes with dynamic MIG (case c).
package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const nvidiaDriver = "gpu.nvidia.com"

// benchCluster is one case's objects.
type benchCluster struct {
	Nodes     []*corev1.Node
	Classes   []*resourceapi.DeviceClass
	Slices    []*resourceapi.ResourceSlice
	Allocated []*resourceapi.ResourceClaim
	Claims    []*resourceapi.ResourceClaim
	Pods      []*corev1.Pod // one per claim, bound to ClaimNode when that is set
	ClaimNode []string      // per claim: the node it is allocated on (case a), or ""
}

// The selector of the first seed scenario ("an H100 or better with at least 40 GiB").
const h100Selector = `device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100") && ` +
	`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0`

func gpuClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{TypeMeta: typeMeta("DeviceClass"), ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{selector(`device.driver == "gpu.nvidia.com"`)}}}
}

func strAttr(s string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{StringValue: ptr.To(s)}
}
func intAttr(i int64) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{IntValue: ptr.To(i)}
}
func verAttr(v string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{VersionValue: ptr.To(v)}
}
func qty(s string) resource.Quantity       { return resource.MustParse(s) }
func counter(s string) resourceapi.Counter { return resourceapi.Counter{Value: qty(s)} }
func capacityOf(s string) resourceapi.DeviceCapacity {
	return resourceapi.DeviceCapacity{Value: qty(s)}
}

func benchNode(name string) *corev1.Node {
	return &corev1.Node{TypeMeta: typeMeta("Node"), ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// h100Nodes: n nodes of 8 H100s, each node one NVLink domain.
func h100Nodes(n int) *benchCluster {
	c := &benchCluster{Classes: []*resourceapi.DeviceClass{gpuClass()}}
	for i := 0; i < n; i++ {
		node := fmt.Sprintf("h100-%d", i)
		c.Nodes = append(c.Nodes, benchNode(node))
		s := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"), ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
			Spec: resourceapi.ResourceSliceSpec{Driver: nvidiaDriver, NodeName: ptr.To(node),
				Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
		for g := 0; g < 8; g++ {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", g),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"type": strAttr("gpu"), "productName": strAttr("NVIDIA H100 80GB HBM3"), "index": intAttr(int64(g)),
					"driverVersion": verAttr("580.82.7"), "nvlinkDomain": strAttr(node)},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": capacityOf("80Gi")}})
		}
		c.Slices = append(c.Slices, s)
	}
	return c
}

func (c *benchCluster) addClaim(name string, spec resourceapi.ResourceClaimSpec, node string) {
	claim := &resourceapi.ResourceClaim{TypeMeta: typeMeta("ResourceClaim"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: types.UID("uid-" + name)}, Spec: spec}
	pod := &corev1.Pod{TypeMeta: typeMeta("Pod"), ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.example/job:1"}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(name)}}}}
	c.Claims = append(c.Claims, claim)
	c.Pods = append(c.Pods, pod)
	c.ClaimNode = append(c.ClaimNode, node)
}

func oneGPU(selectors ...string) resourceapi.ResourceClaimSpec {
	e := &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
	for _, s := range selectors {
		e.Selectors = append(e.Selectors, selector(s))
	}
	return resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: e}}}}
}

// caseAB: 500 nodes x 8 H100 filled by one-GPU claims with the H100 selector; nodeGiven binds
// claim i to node i/8 (case a), else every claim searches the nodes (case b).
func caseAB(nodeGiven bool) *benchCluster {
	c := h100Nodes(500)
	for i := 0; i < 500*8; i++ {
		node := ""
		if nodeGiven {
			node = c.Nodes[i/8].Name
		}
		c.addClaim(fmt.Sprintf("claim-%d", i), oneGPU(h100Selector), node)
	}
	return c
}

// migClaims is case c's claim count: Kubernetes tries 120 of the 250 nodes per claim, at
// about 8 ms each (about 1 s per claim), so 4,000 claims would take it an hour per run.
var migClaims = 50

// caseC: 250 nodes x 4 A100 40GB with dynamic MIG (each GPU's whole device and its 1g.5gb,
// 2g.10gb and 3g.20gb placements share the GPU's counters), filled by claims for "a small MIG
// slice, else a medium one, else a whole GPU".
func caseC() *benchCluster {
	c := &benchCluster{Classes: []*resourceapi.DeviceClass{gpuClass()}}
	profiles := []struct {
		name, memory  string
		slices, count int
	}{{"1g.5gb", "5Gi", 1, 7}, {"2g.10gb", "10Gi", 2, 3}, {"3g.20gb", "20Gi", 3, 2}}
	for i := 0; i < 250; i++ {
		node := fmt.Sprintf("a100-%d", i)
		c.Nodes = append(c.Nodes, benchNode(node))
		pool := resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 2}
		counters := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"), ObjectMeta: metav1.ObjectMeta{Name: node + "-counters"},
			Spec: resourceapi.ResourceSliceSpec{Driver: nvidiaDriver, NodeName: ptr.To(node), Pool: pool}}
		devices := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"), ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
			Spec: resourceapi.ResourceSliceSpec{Driver: nvidiaDriver, NodeName: ptr.To(node), Pool: pool}}
		for g := 0; g < 4; g++ {
			set := fmt.Sprintf("gpu-%d", g)
			counters.Spec.SharedCounters = append(counters.Spec.SharedCounters, resourceapi.CounterSet{Name: set,
				Counters: map[string]resourceapi.Counter{"memory": counter("40Gi"), "slices": counter("7")}})
			add := func(name, profile, memory string, slices int) {
				devices.Spec.Devices = append(devices.Spec.Devices, resourceapi.Device{Name: name,
					Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
						"type": strAttr(map[bool]string{true: "gpu", false: "mig"}[profile == ""]), "profile": strAttr(profile),
						"productName": strAttr("NVIDIA A100-SXM4-40GB"), "index": intAttr(int64(g))},
					Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": capacityOf(memory)},
					ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: set, Counters: map[string]resourceapi.Counter{
						"memory": counter(memory), "slices": counter(fmt.Sprint(slices))}}}})
			}
			add(set, "", "40Gi", 7)
			for _, p := range profiles {
				for k := 0; k < p.count; k++ {
					add(fmt.Sprintf("%s-mig-%s-%d", set, strings.ReplaceAll(p.name, ".", "-"), k), p.name, p.memory, p.slices)
				}
			}
		}
		c.Slices = append(c.Slices, counters, devices)
	}
	sub := func(name, expr string) resourceapi.DeviceSubRequest {
		return resourceapi.DeviceSubRequest{Name: name, DeviceClassName: "gpu.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount,
			Count: 1, Selectors: []resourceapi.DeviceSelector{selector(expr)}}
	}
	spec := resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu",
		FirstAvailable: []resourceapi.DeviceSubRequest{
			sub("small", `device.attributes["gpu.nvidia.com"].profile == "1g.5gb"`),
			sub("medium", `device.attributes["gpu.nvidia.com"].profile == "2g.10gb"`),
			sub("full", `device.attributes["gpu.nvidia.com"].type == "gpu"`)}}}}}
	for i := 0; i < migClaims; i++ {
		c.addClaim(fmt.Sprintf("mig-%d", i), spec, "")
	}
	return c
}

// caseD: 1,000 nodes x 8 H100 with one GPU each in use, and one claim for 8 GPUs of one NVLink
// domain: it fits nowhere.
func caseD() *benchCluster {
	c := h100Nodes(1000)
	for i, n := range c.Nodes {
		used := &resourceapi.ResourceClaim{TypeMeta: typeMeta("ResourceClaim"),
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("running-%d", i), Namespace: "bench"}, Spec: oneGPU()}
		used.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: nvidiaDriver, Pool: n.Name, Device: "gpu-0"}}}}
		c.Allocated = append(c.Allocated, used)
	}
	spec := oneGPU()
	spec.Devices.Requests[0].Exactly.Count = 8
	spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName(nvidiaDriver + "/nvlinkDomain"))}}
	c.addClaim("eight-gpus", spec, "")
	return c
}
