// Kubernetes' side of the allocation comparison: its structured allocator
// (k8s.io/dynamic-resource-allocation/structured) with every feature on, fed the objects of
// an instance exactly as kube-scheduler's DRA plugin feeds it (the allocated state from the
// claims already allocated, one node, the pod's unallocated claims).
package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// allFeatures is every optional behaviour of the allocator, as the issue asks.
var allFeatures = structured.Features{AdminAccess: true, ConsumableCapacity: true, DeviceBindingAndStatus: true,
	DeviceTaints: true, PartitionableDevices: true, PrioritizedList: true}

type classes []*resourceapi.DeviceClass

func (c classes) List() ([]*resourceapi.DeviceClass, error) { return c, nil }

func (c classes) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, x := range c {
		if x.Name == name {
			return x, nil
		}
	}
	return nil, errors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclasses"}, name)
}

// allocatedState is what the scheduler's DRA plugin derives from allocated claims: devices in
// exclusive use, shares of shareable devices, and their summed consumed capacity.
func allocatedState(claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	s := structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection()}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID == nil {
				s.AllocatedDevices.Insert(id)
				continue
			}
			s.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
			if r.ConsumedCapacity != nil {
				s.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
			}
		}
	}
	return s
}

// k8sTimeout bounds one Allocate call, as kube-scheduler's DRA plugin bounds its Filter
// (10 s there, for clusters; these instances have at most about 20 devices, and a call that
// needs more than 200 ms is stuck in its exponential search). It fails with the context's error.
const k8sTimeout = 200 * time.Millisecond

type k8sAllocator struct {
	cache *dracel.Cache
	trace bool // log every step of Kubernetes' allocator (klog verbosity 7) on stderr
}

func newK8sAllocator() *k8sAllocator {
	return &k8sAllocator{cache: dracel.NewCache(1000, dracel.Features{EnableConsumableCapacity: true})}
}

// allocate runs Kubernetes' allocator for `claims` together on `node`: the results (nil when
// they do not fit) or the allocator's error.
// A panic inside Kubernetes' code is returned as an error (v0.35.0 panicked on an All
// request over devices that consume counters; v0.35.10 does not).
func (k *k8sAllocator) allocate(in *instance, allocated, claims []*resourceapi.ResourceClaim, node *corev1.Node) (results []resourceapi.AllocationResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			results, err = nil, fmt.Errorf("Kubernetes' allocator panicked: %v", p)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), k8sTimeout)
	defer cancel()
	if k.trace {
		ctx = klog.NewContext(ctx, textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(7))))
	}
	a, err := structured.NewAllocator(ctx, allFeatures, allocatedState(allocated), classes(in.Classes), in.Slices, k.cache)
	if err != nil {
		return nil, fmt.Errorf("NewAllocator: %w", err)
	}
	return a.Allocate(ctx, node, claims)
}

// settle allocates the instance's earlier claims one by one (as earlier pods would have been),
// on either node, with Kubernetes' allocator; those that fit become allocated claims.
func (k *k8sAllocator) settle(in *instance) {
	for _, c := range in.Pending {
		for _, node := range in.Nodes {
			// An error (an All request meeting a pool being updated) is a claim that waits.
			results, err := k.allocate(in, in.Allocated, []*resourceapi.ResourceClaim{c}, node)
			if err == nil && results != nil {
				c.Status.Allocation = &results[0]
				in.Allocated = append(in.Allocated, c)
				break
			}
		}
	}
	in.Pending = nil
}
