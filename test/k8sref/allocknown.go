// Known errors of Kubernetes' allocator (v0.35.10), found by this harness and recorded in
// docs/TESTING.md. When gpuplane's verifier rejects an allocation Kubernetes returned, these
// independent checks, on Kubernetes' results alone, decide whether it is one of them (a
// `k8s_invalid` finding) or something gpuplane must explain (a `gpuplane_bug`).
package main

import (
	"encoding/json"
	"fmt"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
)

// knownK8sError names the known Kubernetes error that makes `results` invalid, or "".
func knownK8sError(in *instance, results []resourceapi.AllocationResult) string {
	for i, claim := range in.Claims {
		if i >= len(results) {
			break
		}
		if why := allInLaterSubrequest(claim, results[i]); why != "" {
			return why
		}
		if why := brokenDistinct(in, claim, results[i]); why != "" {
			return why
		}
	}
	return ""
}

// incompleteCause names why Kubernetes found nothing where gpuplane did, when it is known: its
// error (a constraint broken by an All request is fatal there; an All request meets a pool
// being updated; the time limit), or a claim with an All subrequest after the first, which
// Kubernetes mishandles (see allInLaterSubrequest). "" when unexplained.
func incompleteCause(in *instance, err error, ours json.RawMessage) string {
	if err != nil {
		return "its error: " + err.Error()
	}
	if why := adminConsumes(in, ours); why != "" {
		return why
	}
	if why := counterLeak(in); why != "" {
		return why
	}
	for _, claim := range in.Claims {
		for _, req := range claim.Spec.Devices.Requests {
			for s, sub := range req.FirstAvailable {
				if s > 0 && sub.AllocationMode == resourceapi.DeviceAllocationModeAll {
					return "an All subrequest after the first (" + claim.Name + " " + req.Name + "/" + sub.Name + ")"
				}
			}
		}
	}
	return ""
}

// adminConsumes: within one Allocate call, Kubernetes makes an adminAccess request need and
// take a shareable device's capacity and a partition's shared counters, as if it used the
// device (yet allocated adminAccess results count for nothing afterwards). gpuplane lets
// adminAccess neither need nor take them. It matters when gpuplane's allocation has an
// adminAccess result on such a device.
func adminConsumes(in *instance, ours json.RawMessage) string {
	var claims []struct {
		Results []resourceapi.DeviceRequestAllocationResult `json:"results"`
	}
	if json.Unmarshal(ours, &claims) != nil {
		return ""
	}
	for _, c := range claims {
		for _, r := range c.Results {
			if r.AdminAccess == nil || !*r.AdminAccess {
				continue
			}
			if d := findDevice(in, r); d != nil && (len(d.ConsumesCounters) > 0 || (d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations)) {
				return "adminAccess takes capacity or counters in Kubernetes (" + r.Device + ")"
			}
		}
	}
	return ""
}

func findDevice(in *instance, r resourceapi.DeviceRequestAllocationResult) *resourceapi.Device {
	for _, s := range in.Slices {
		if s.Spec.Driver != r.Driver || s.Spec.Pool.Name != r.Pool {
			continue
		}
		for i := range s.Spec.Devices {
			if s.Spec.Devices[i].Name == r.Device {
				return &s.Spec.Devices[i]
			}
		}
	}
	return nil
}

// counterLeak: Kubernetes adds a device's counters to the pool's consumption before it checks
// the device's taints and the claim's constraints, and does not take them back when those
// reject it, so later devices of the pool look short of counters. It can bite when a device
// that consumes counters reaches the node and the claims have constraints or such a device
// is tainted.
func counterLeak(in *instance) string {
	constrained := false
	for _, c := range in.Claims {
		constrained = constrained || len(c.Spec.Devices.Constraints) > 0
	}
	for _, s := range in.Slices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName != in.Nodes[0].Name {
			continue
		}
		for _, d := range s.Spec.Devices {
			if len(d.ConsumesCounters) > 0 && (constrained || len(d.Taints) > 0) {
				return "counters of a device rejected for a taint or constraint stay consumed (" + d.Name + ")"
			}
		}
	}
	return ""
}

// allInLaterSubrequest: an allocationMode All subrequest after the first of a firstAvailable
// list gets one device only (Allocate continues the request with subrequest index 0, whose
// count is then used up, instead of the All subrequest's next device).
func allInLaterSubrequest(claim *resourceapi.ResourceClaim, result resourceapi.AllocationResult) string {
	for _, req := range claim.Spec.Devices.Requests {
		for s, sub := range req.FirstAvailable {
			if s == 0 || sub.AllocationMode != resourceapi.DeviceAllocationModeAll {
				continue
			}
			name := req.Name + "/" + sub.Name
			for _, r := range result.Devices.Results {
				if r.Request == name {
					return fmt.Sprintf("claim %s: All subrequest %s (not the first) allocated partially", claim.Name, name)
				}
			}
		}
	}
	return ""
}

// brokenDistinct: distinctAttribute remembers one value per request, so a request with
// several devices (or backtracking within one) can end with duplicate values.
func brokenDistinct(in *instance, claim *resourceapi.ResourceClaim, result resourceapi.AllocationResult) string {
	for _, c := range claim.Spec.Devices.Constraints {
		if c.DistinctAttribute == nil {
			continue
		}
		seen := map[string]string{}
		for _, r := range result.Devices.Results {
			if !constrains(c.Requests, r.Request) {
				continue
			}
			v := attributeValue(in, r, string(*c.DistinctAttribute))
			if prev, dup := seen[v]; dup && v != "" {
				return fmt.Sprintf("claim %s: distinctAttribute %s: %s and %s/%s share %s", claim.Name,
					*c.DistinctAttribute, prev, r.Pool, r.Device, v)
			}
			seen[v] = r.Pool + "/" + r.Device
		}
	}
	return ""
}

func constrains(requests []string, result string) bool {
	if len(requests) == 0 {
		return true
	}
	base, _, _ := strings.Cut(result, "/")
	for _, r := range requests {
		if r == result || r == base {
			return true
		}
	}
	return false
}

// attributeValue renders a device's fully qualified attribute ("" when it lacks it).
func attributeValue(in *instance, r resourceapi.DeviceRequestAllocationResult, qualified string) string {
	for _, s := range in.Slices {
		if s.Spec.Driver != r.Driver || s.Spec.Pool.Name != r.Pool {
			continue
		}
		for _, d := range s.Spec.Devices {
			if d.Name != r.Device {
				continue
			}
			for k, a := range d.Attributes {
				full := string(k)
				if !strings.Contains(full, "/") {
					full = r.Driver + "/" + full
				}
				if full == qualified {
					return fmt.Sprintf("%v|%v|%v|%v", deref(a.IntValue), deref(a.BoolValue), deref(a.StringValue), deref(a.VersionValue))
				}
			}
		}
	}
	return ""
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
