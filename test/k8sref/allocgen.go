// Random DRA allocation instances: two nodes with GPU and NIC pools, partitionable GPUs with
// counter sets in their own slice, shareable devices with consumable capacity and request
// policies, taints and tolerations, binding conditions, pools reaching nodes by selector or
// all nodes, incomplete pools, and a pod with several claims (prioritized lists, admin access,
// All and ExactCount, match and distinct constraints within and across requests) on top of
// claims already allocated. Every selector is safe to evaluate on every device its class
// admits, so neither side stops on a CEL runtime error.
package main

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	gpuDriver = "gpu.example.com"
	nicDriver = "nic.example.com"
	targetNS  = "t"
)

// instance is one allocation problem: the cluster, claims allocated before, and the pod's
// claims to allocate together on node-0.
type instance struct {
	Nodes     []*corev1.Node
	Classes   []*resourceapi.DeviceClass
	Slices    []*resourceapi.ResourceSlice
	Allocated []*resourceapi.ResourceClaim // with status.allocation
	Pending   []*resourceapi.ResourceClaim // earlier claims still to allocate (become Allocated)
	Claims    []*resourceapi.ResourceClaim // the pod's
	Pod       *corev1.Pod
}

type allocGen struct {
	r *rand.Rand
}

func (g *allocGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }
func (g *allocGen) chance(p float64) bool    { return g.r.Float64() < p }

func typeMeta(kind string) metav1.TypeMeta {
	if kind == "Node" || kind == "Pod" {
		return metav1.TypeMeta{APIVersion: "v1", Kind: kind}
	}
	return metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: kind}
}

func selector(expr string) resourceapi.DeviceSelector {
	return resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}
}

func (g *allocGen) classes() []*resourceapi.DeviceClass {
	mk := func(name string, exprs ...string) *resourceapi.DeviceClass {
		c := &resourceapi.DeviceClass{TypeMeta: typeMeta("DeviceClass"), ObjectMeta: metav1.ObjectMeta{Name: name}}
		for _, e := range exprs {
			c.Spec.Selectors = append(c.Spec.Selectors, selector(e))
		}
		return c
	}
	gpu := fmt.Sprintf("device.driver == %q", gpuDriver)
	return []*resourceapi.DeviceClass{
		mk("gpu", gpu),
		mk("nic", fmt.Sprintf("device.driver == %q", nicDriver)),
		mk("big-gpu", gpu, fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity(\"80Gi\")) >= 0", gpuDriver)),
		mk("mig", gpu, fmt.Sprintf("device.attributes[%q].profile != \"whole\"", gpuDriver)),
		mk("whole-gpu", gpu, fmt.Sprintf("device.attributes[%q].profile == \"whole\"", gpuDriver)),
	}
}

// gpuAttrs are the attributes every GPU device has (selectors may read any of them).
func (g *allocGen) gpuAttrs(index int, profile string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	return map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"model":         {StringValue: ptr.To(g.pick("A100", "H100", "H200"))},
		"index":         {IntValue: ptr.To(int64(index))},
		"numa":          {IntValue: ptr.To(int64(g.r.Intn(2)))},
		"fast":          {BoolValue: ptr.To(g.chance(0.5))},
		"profile":       {StringValue: ptr.To(profile)},
		"driverVersion": {VersionValue: ptr.To(g.pick("1.2.0", "1.10.0", "2.0.0"))},
	}
}

func (g *allocGen) decorate(d *resourceapi.Device) {
	if g.chance(0.12) {
		d.Taints = []resourceapi.DeviceTaint{{Key: g.pick("maint", "degraded"), Value: g.pick("", "x"),
			Effect: resourceapi.DeviceTaintEffect(g.pick("NoSchedule", "NoExecute", "None"))}}
	}
	if g.chance(0.08) {
		d.BindingConditions = []string{"attached"}
		d.BindingFailureConditions = []string{"failed"}
		d.BindsToNode = ptr.To(g.chance(0.5))
	}
}

func memQ(gi int64) resource.Quantity { return *resource.NewQuantity(gi<<30, resource.BinarySI) }

// gpuPool publishes node's GPUs: plain, partitionable (a counter slice and a device slice)
// or shareable with consumable memory.
func (g *allocGen) gpuPool(node string) []*resourceapi.ResourceSlice {
	n := 1 + g.r.Intn(4)
	kind := g.r.Intn(10)
	slice := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"),
		ObjectMeta: metav1.ObjectMeta{Name: "gpus-" + node},
		Spec: resourceapi.ResourceSliceSpec{Driver: gpuDriver, NodeName: ptr.To(node),
			Pool: resourceapi.ResourcePool{Name: "gpus-" + node, Generation: 1, ResourceSliceCount: 1}}}
	var counters *resourceapi.ResourceSlice
	for i := 0; i < n; i++ {
		mem := []int64{40, 80, 141}[g.r.Intn(3)]
		switch {
		case kind < 3: // partitionable
			if counters == nil {
				counters = &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"),
					ObjectMeta: metav1.ObjectMeta{Name: "counters-" + node},
					Spec: resourceapi.ResourceSliceSpec{Driver: gpuDriver, NodeName: ptr.To(node),
						Pool: resourceapi.ResourcePool{Name: "gpus-" + node, Generation: 1, ResourceSliceCount: 2}}}
				slice.Spec.Pool.ResourceSliceCount = 2
			}
			set := fmt.Sprintf("gpu-%d-counters", i)
			counters.Spec.SharedCounters = append(counters.Spec.SharedCounters, resourceapi.CounterSet{Name: set,
				Counters: map[string]resourceapi.Counter{"memory": {Value: memQ(mem)}, "slices": {Value: *resource.NewQuantity(7, resource.DecimalSI)}}})
			parts := []struct {
				name   string
				mem    int64
				slices int64
			}{{"", mem, 7}, {"-3g-a", mem / 2, 3}, {"-3g-b", mem / 2, 3}, {"-1g-a", mem / 8, 1}, {"-1g-b", mem / 8, 1}, {"-1g-c", mem / 8, 1}}
			for p, part := range parts {
				if p > 0 && g.chance(0.3) {
					continue
				}
				profile := "whole"
				if p > 0 {
					profile = part.name[1:3]
				}
				d := resourceapi.Device{Name: fmt.Sprintf("gpu-%d%s", i, part.name), Attributes: g.gpuAttrs(i, profile),
					Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: memQ(part.mem)}},
					ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: set, Counters: map[string]resourceapi.Counter{
						"memory": {Value: memQ(part.mem)}, "slices": {Value: *resource.NewQuantity(part.slices, resource.DecimalSI)}}}}}
				g.decorate(&d)
				slice.Spec.Devices = append(slice.Spec.Devices, d)
			}
		case kind < 5: // shareable
			policy := &resourceapi.CapacityRequestPolicy{Default: ptr.To(memQ(10))}
			if g.chance(0.5) {
				policy.ValidRange = &resourceapi.CapacityRequestPolicyRange{Min: ptr.To(memQ(5)), Step: ptr.To(memQ(5))}
				if g.chance(0.5) {
					policy.ValidRange.Max = ptr.To(memQ(mem / 2))
				}
			} else {
				policy.ValidValues = []resource.Quantity{memQ(10), memQ(20), memQ(40)}
			}
			d := resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i), Attributes: g.gpuAttrs(i, "whole"),
				AllowMultipleAllocations: ptr.To(true),
				Capacity:                 map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: memQ(mem), RequestPolicy: policy}}}
			g.decorate(&d)
			slice.Spec.Devices = append(slice.Spec.Devices, d)
		default:
			d := resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i), Attributes: g.gpuAttrs(i, "whole"),
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: memQ(mem)}}}
			g.decorate(&d)
			slice.Spec.Devices = append(slice.Spec.Devices, d)
		}
	}
	out := []*resourceapi.ResourceSlice{slice}
	if counters != nil {
		out = append(out, counters)
	}
	if g.chance(0.04) { // a pool still being published: one of its slices is missing
		for _, s := range out {
			s.Spec.Pool.ResourceSliceCount++
		}
	}
	return out
}

func (g *allocGen) nicPool(node string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"), ObjectMeta: metav1.ObjectMeta{Name: "nics-" + node},
		Spec: resourceapi.ResourceSliceSpec{Driver: nicDriver, NodeName: ptr.To(node),
			Pool: resourceapi.ResourcePool{Name: "nics-" + node, Generation: 1, ResourceSliceCount: 1}}}
	for i := 0; i < 1+g.r.Intn(3); i++ {
		d := resourceapi.Device{Name: fmt.Sprintf("nic-%d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"numa": {IntValue: ptr.To(int64(g.r.Intn(2)))}, gpuDriver + "/numa": {IntValue: ptr.To(int64(g.r.Intn(2)))},
			"speed": {IntValue: ptr.To(int64([]int{100, 200, 400}[g.r.Intn(3)]))}}}
		g.decorate(&d)
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	return s
}

// fabricPool is network-attached: it reaches nodes by label, or all nodes.
func (g *allocGen) fabricPool() *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{TypeMeta: typeMeta("ResourceSlice"), ObjectMeta: metav1.ObjectMeta{Name: "fabric"},
		Spec: resourceapi.ResourceSliceSpec{Driver: gpuDriver,
			Pool: resourceapi.ResourcePool{Name: "fabric", Generation: 1, ResourceSliceCount: 1}}}
	if g.chance(0.5) {
		s.Spec.AllNodes = ptr.To(true)
	} else {
		s.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "rack", Operator: corev1.NodeSelectorOpIn,
				Values: []string{g.pick("r0", "r1")}}}}}}
	}
	for i := 0; i < 1+g.r.Intn(2); i++ {
		d := resourceapi.Device{Name: fmt.Sprintf("fabric-%d", i), Attributes: g.gpuAttrs(10+i, "whole"),
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: memQ(80)}}}
		g.decorate(&d)
		s.Spec.Devices = append(s.Spec.Devices, d)
	}
	return s
}

// requestSelector is safe on every device of the class's driver.
func (g *allocGen) requestSelector(class string) string {
	if class == "nic" {
		return g.pick(fmt.Sprintf("device.attributes[%q].speed >= 200", nicDriver),
			fmt.Sprintf("device.attributes[%q].numa == 0", nicDriver))
	}
	a := fmt.Sprintf("device.attributes[%q]", gpuDriver)
	return g.pick(a+".model == \"H100\"", a+".model in [\"H100\", \"H200\"]", a+".fast",
		a+".index % 2 == 0", a+".numa == 1", a+".driverVersion.isGreaterThan(semver(\"1.5.0\"))",
		fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity(\"40Gi\")) > 0", gpuDriver),
		a+".profile == \"1g\" || "+a+".profile == \"3g\"", "!"+a+".fast")
}

func (g *allocGen) tolerations() []resourceapi.DeviceToleration {
	if !g.chance(0.3) {
		return nil
	}
	t := resourceapi.DeviceToleration{Key: g.pick("maint", "degraded", ""), Operator: resourceapi.DeviceTolerationOperator(g.pick("Exists", "Equal"))}
	if t.Operator == "Equal" {
		if t.Key == "" {
			t.Key = "maint"
		}
		t.Value = g.pick("", "x")
	}
	if g.chance(0.5) {
		t.Effect = resourceapi.DeviceTaintEffect(g.pick("NoSchedule", "NoExecute"))
	}
	return []resourceapi.DeviceToleration{t}
}

// exact fills one request or subrequest's common fields.
func (g *allocGen) exact() resourceapi.ExactDeviceRequest {
	class := g.pick("gpu", "gpu", "gpu", "nic", "big-gpu", "mig", "whole-gpu")
	e := resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount,
		Count: []int64{1, 1, 1, 2, 2, 3}[g.r.Intn(6)], Tolerations: g.tolerations()}
	if g.chance(0.08) {
		e.AllocationMode, e.Count = resourceapi.DeviceAllocationModeAll, 0
	}
	if g.chance(0.4) {
		e.Selectors = []resourceapi.DeviceSelector{selector(g.requestSelector(class))}
	}
	if class != "nic" && g.chance(0.25) {
		e.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
			"memory": memQ([]int64{5, 10, 15, 30, 60}[g.r.Intn(5)])}}
	}
	return e
}

func (g *allocGen) claimSpec() resourceapi.ResourceClaimSpec {
	var spec resourceapi.ResourceClaimSpec
	n := 1 + g.r.Intn(3)
	for i := 0; i < n; i++ {
		req := resourceapi.DeviceRequest{Name: fmt.Sprintf("r%d", i)}
		if g.chance(0.3) {
			for s := 0; s < 2+g.r.Intn(2); s++ {
				e := g.exact()
				req.FirstAvailable = append(req.FirstAvailable, resourceapi.DeviceSubRequest{Name: fmt.Sprintf("s%d", s),
					DeviceClassName: e.DeviceClassName, Selectors: e.Selectors, AllocationMode: e.AllocationMode,
					Count: e.Count, Tolerations: e.Tolerations, Capacity: e.Capacity})
			}
		} else {
			e := g.exact()
			if g.chance(0.05) {
				e.AdminAccess = ptr.To(true)
			}
			req.Exactly = &e
		}
		spec.Devices.Requests = append(spec.Devices.Requests, req)
	}
	if g.chance(0.4) {
		c := resourceapi.DeviceConstraint{}
		attr := resourceapi.FullyQualifiedName(g.pick(gpuDriver+"/numa", gpuDriver+"/model", gpuDriver+"/index", gpuDriver+"/driverVersion"))
		if g.chance(0.3) {
			c.DistinctAttribute = &attr
		} else {
			c.MatchAttribute = &attr
		}
		if n > 1 && g.chance(0.5) {
			for i := 0; i < n; i++ {
				if g.chance(0.6) {
					c.Requests = append(c.Requests, fmt.Sprintf("r%d", i))
				}
			}
		}
		spec.Devices.Constraints = append(spec.Devices.Constraints, c)
	}
	return spec
}

func (g *allocGen) claim(name string) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{TypeMeta: typeMeta("ResourceClaim"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: targetNS, UID: types.UID("uid-" + name)},
		Spec:       g.claimSpec()}
}

func (g *allocGen) instance() *instance {
	in := &instance{Classes: g.classes()}
	for i, rack := range []string{"r0", "r1"} {
		node := fmt.Sprintf("node-%d", i)
		in.Nodes = append(in.Nodes, &corev1.Node{TypeMeta: typeMeta("Node"),
			ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"rack": rack}}})
		in.Slices = append(in.Slices, g.gpuPool(node)...)
		if g.chance(0.5) {
			in.Slices = append(in.Slices, g.nicPool(node))
		}
	}
	if g.chance(0.3) {
		in.Slices = append(in.Slices, g.fabricPool())
	}
	for i := 0; i < g.r.Intn(3); i++ {
		in.Pending = append(in.Pending, g.claim(fmt.Sprintf("earlier-%d", i)))
	}
	pod := &corev1.Pod{TypeMeta: typeMeta("Pod"), ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: targetNS, UID: "uid-pod"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/job:1"}}}}
	for i := 0; i < 1+g.r.Intn(3); i++ {
		c := g.claim(fmt.Sprintf("claim-%d", i))
		in.Claims = append(in.Claims, c)
		pod.Spec.ResourceClaims = append(pod.Spec.ResourceClaims, corev1.PodResourceClaim{Name: fmt.Sprintf("c%d", i), ResourceClaimName: ptr.To(c.Name)})
	}
	in.Pod = pod
	return in
}
