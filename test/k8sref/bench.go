// `k8sref bench`: the same instances timed on both sides in one run, medians of --reps runs.
// Kubernetes: its structured allocator in this process, a new Allocator per claim (as the
// scheduler makes one per pod) on top of the claims allocated so far; with node search, its
// allocator is tried per node as kube-scheduler's Filter does (from a rotating start, until
// numFeasibleNodesToFind nodes fit: 230 of 500, 120 of 250), the first that fits kept. gpuplane: `gpuplane allocate -o json`, its own timing of the allocation (after
// loading; the whole process's wall time is printed too). Both sides must allocate the same
// number of claims. CEL (case e): Kubernetes' compiled selectors' DeviceMatches against cel_bench's
// H100 device, and gpuplane's build/bench/cel_bench on the same selectors and device.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

type benchResult struct {
	Unit       string  `json:"unit"`
	Gpuplane   float64 `json:"gpuplane"`
	Kubernetes float64 `json:"kubernetes"`
	Ratio      float64 `json:"ratio"`
}

type benchRun struct {
	bin, celBench, dir string
	reps               int
}

func runBench(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	b := &benchRun{}
	fs.StringVar(&b.bin, "gpuplane", "", "the gpuplane binary")
	fs.StringVar(&b.celBench, "cel-bench", "", "gpuplane's cel_bench (default: bench/cel_bench beside --gpuplane)")
	fs.IntVar(&b.reps, "reps", 3, "runs per case and side (the median is reported)")
	only := fs.String("cases", "a,b,c,d,e", "which cases to run")
	keep := fs.String("keep", "", "write each case's objects and claims files here (and keep them)")
	if err := fs.Parse(args); err != nil || b.bin == "" || b.reps < 1 {
		fmt.Fprintln(os.Stderr, "usage: k8sref bench --gpuplane BIN [--reps N] [--cases a,b,c,d,e]")
		return 2
	}
	if b.celBench == "" {
		b.celBench = filepath.Join(filepath.Dir(b.bin), "bench", "cel_bench")
	}
	var err error
	if *keep != "" {
		b.dir, err = *keep, os.MkdirAll(*keep, 0o755)
	} else if b.dir, err = os.MkdirTemp("", "k8sref-bench-"); err == nil {
		defer os.RemoveAll(b.dir)
	}
	if err != nil {
		return fail("%v", err)
	}
	out := map[string]benchResult{}
	cases := []struct {
		name  string
		build func() *benchCluster
		what  string
	}{
		{"a", func() *benchCluster { return caseAB(true) }, "4,000 one-GPU claims with a CEL selector, 500 nodes x 8 H100, node given"},
		{"b", func() *benchCluster { return caseAB(false) }, "the same, each claim searching the nodes"},
		{"c", caseC, "50 firstAvailable MIG claims (1g, else 2g, else a whole GPU), 250 nodes x 4 A100 with dynamic MIG"},
		{"d", caseD, "one 8-GPU matchAttribute claim, 1,000 nodes with 7 free GPUs each (fits nowhere)"},
	}
	for _, c := range cases {
		if !strings.Contains(*only, c.name) {
			continue
		}
		r, err := b.allocationCase(c.name, c.what, c.build())
		if err != nil {
			return fail("case %s: %v", c.name, err)
		}
		out[c.name] = r
	}
	if strings.Contains(*only, "e") {
		r, err := b.celCase()
		if err != nil {
			return fail("case e: %v", err)
		}
		out["e"] = r
	}
	line, _ := json.Marshal(out) // keys sorted: a..e
	fmt.Println(string(line))
	return 0
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// allocationCase times both sides on one cluster: claims/s, or for a claim that fits nowhere
// (case d) the seconds to conclude so.
func (b *benchRun) allocationCase(name, what string, c *benchCluster) (benchResult, error) {
	// JSON documents in a YAML stream (---), as the diff's cases carry them.
	objects, claims := filepath.Join(b.dir, name+"-objects.yaml"), filepath.Join(b.dir, name+"-claims.yaml")
	if err := writeStream(objects, c.objects()); err != nil {
		return benchResult{}, err
	}
	if err := writeStream(claims, c.work()); err != nil {
		return benchResult{}, err
	}
	var ours, theirs, walls []float64
	oursDone, theirsDone := 0, 0
	for rep := 0; rep < b.reps; rep++ {
		seconds, wall, allocated, err := b.gpuplaneAllocate(objects, claims)
		if err != nil {
			return benchResult{}, err
		}
		ours, walls, oursDone = append(ours, seconds), append(walls, wall), allocated
		k8sSeconds, k8sAllocated, err := k8sFill(c)
		if err != nil {
			return benchResult{}, err
		}
		theirs, theirsDone = append(theirs, k8sSeconds), k8sAllocated
	}
	if oursDone != theirsDone {
		return benchResult{}, fmt.Errorf("gpuplane allocated %d claims, Kubernetes %d", oursDone, theirsDone)
	}
	g, k := median(ours), median(theirs)
	fmt.Fprintf(os.Stderr, "%s: %s: %d of %d claims allocated; gpuplane %.3f s (process wall %.3f s), Kubernetes %.3f s\n",
		name, what, oursDone, len(c.Claims), g, median(walls), k)
	if oursDone == 0 { // time to conclude that nothing fits
		return benchResult{Unit: "s", Gpuplane: g, Kubernetes: k, Ratio: k / g}, nil
	}
	n := float64(len(c.Claims))
	return benchResult{Unit: "claims/s", Gpuplane: n / g, Kubernetes: n / k, Ratio: k / g}, nil
}

func (c *benchCluster) objects() []any {
	out := appendObjects(nil, c.Nodes)
	out = appendObjects(out, c.Classes)
	out = appendObjects(out, c.Slices)
	return appendObjects(out, c.Allocated)
}

func (c *benchCluster) work() []any {
	var out []any
	for i := range c.Claims {
		out = append(out, c.Pods[i], c.Claims[i])
	}
	return out
}

func writeStream(path string, objects []any) error {
	text, err := jsonStream(objects...)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// gpuplaneAllocate runs `gpuplane allocate -o json`: its allocation seconds, the process's
// wall seconds, and how many claims it allocated.
func (b *benchRun) gpuplaneAllocate(objects, claims string) (float64, float64, int, error) {
	cmd := exec.Command(b.bin, "allocate", "--objects", objects, "--claims", claims, "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if exit, ok := err.(*exec.ExitError); err != nil && (!ok || exit.ExitCode() != 1) {
		return 0, 0, 0, fmt.Errorf("gpuplane allocate: %v\n%s", err, stderr.String())
	}
	var timings struct {
		Timings struct {
			Seconds float64 `json:"seconds"`
		} `json:"timings"`
	}
	var summary struct {
		Summary struct {
			Allocated int `json:"allocated"`
		} `json:"summary"`
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if json.Unmarshal([]byte(lines[len(lines)-1]), &summary) != nil {
		return 0, 0, 0, fmt.Errorf("gpuplane allocate: no summary line")
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, `{"timings"`) && json.Unmarshal([]byte(l), &timings) == nil {
			return timings.Timings.Seconds, wall, summary.Summary.Allocated, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("gpuplane allocate printed no timings:\n%s", stderr.String())
}

// k8sFill allocates the claims in order with Kubernetes' allocator: seconds spent in
// NewAllocator and Allocate, and how many claims it allocated.
func k8sFill(c *benchCluster) (float64, int, error) {
	ctx := context.Background()
	cache := dracel.NewCache(1000, dracel.Features{EnableConsumableCapacity: true})
	state := allocatedState(c.Allocated)
	byName := map[string]*corev1.Node{}
	for _, n := range c.Nodes {
		byName[n.Name] = n
	}
	var spent time.Duration
	allocated, next := 0, 0
	for i, claim := range c.Claims {
		start := time.Now()
		a, err := structured.NewAllocator(ctx, allFeatures, state, classes(c.Classes), c.Slices, cache)
		if err != nil {
			return 0, 0, err
		}
		var results []resourceapi.AllocationResult
		if node := c.ClaimNode[i]; node != "" {
			if results, err = a.Allocate(ctx, byName[node], []*resourceapi.ResourceClaim{claim}); err != nil {
				return 0, 0, err
			}
		} else {
			// kube-scheduler's Filter: nodes from where the last search stopped, until
			// numFeasibleNodesToFind fit or every node was tried; the first that fit is kept
			// (its DRA scoring ranks only prioritized-list choices, all equal here).
			want, feasible, j := feasibleNodesToFind(len(c.Nodes)), 0, 0
			for ; j < len(c.Nodes) && feasible < want; j++ {
				n := (next + j) % len(c.Nodes)
				r, err := a.Allocate(ctx, c.Nodes[n], []*resourceapi.ResourceClaim{claim})
				if err != nil {
					return 0, 0, err
				}
				if r != nil {
					feasible++
					if results == nil {
						results = r
					}
				}
			}
			next = (next + j) % len(c.Nodes)
		}
		spent += time.Since(start)
		if results == nil {
			continue
		}
		allocated++
		for _, r := range results[0].Devices.Results {
			state.AllocatedDevices.Insert(structured.MakeDeviceID(r.Driver, r.Pool, r.Device))
		}
	}
	return spent.Seconds(), allocated, nil
}

// feasibleNodesToFind is kube-scheduler's numFeasibleNodesToFind with the default
// percentageOfNodesToScore (0: adaptive): all nodes below 100; else 50% minus one point per 125
// nodes (at least 5%) of them, and at least 100.
func feasibleNodesToFind(nodes int) int {
	if nodes < 100 {
		return nodes
	}
	percentage := max(50-nodes/125, 5)
	return max(nodes*percentage/100, 100)
}

// The selectors and device of gpuplane's cel_bench (BM_EvalSelectorA/B/C).
var celBenchSelectors = []string{
	`device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`,
	h100Selector,
	`device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))`,
}

func celBenchDevice() dracel.Device {
	return dracel.Device{Driver: nvidiaDriver,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"type": strAttr("gpu"), "uuid": strAttr("GPU-a02c12e4-1897-e85f-adf7-bf32a8a8ca98"),
			"productName": strAttr("NVIDIA H100 80GB HBM3"), "brand": strAttr("Nvidia"), "architecture": strAttr("Hopper"),
			"cudaComputeCapability": verAttr("9.0.0"), "driverVersion": verAttr("580.82.7"), "cudaDriverVersion": verAttr("13.0.0"),
			"resource.kubernetes.io/pciBusID": strAttr("0000:18:00.0"), "resource.kubernetes.io/pcieRoot": strAttr("pci0000:10")},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}}
}

// celCase: nanoseconds to evaluate the three selectors once each against the device.
func (b *benchRun) celCase() (benchResult, error) {
	ctx := context.Background()
	compiler := dracel.GetCompiler(dracel.Features{EnableConsumableCapacity: true})
	dev := celBenchDevice()
	var theirs []float64
	for rep := 0; rep < b.reps; rep++ {
		total := 0.0
		for _, expr := range celBenchSelectors {
			r := compiler.CompileCELExpression(expr, dracel.Options{})
			if r.Error != nil {
				return benchResult{}, r.Error
			}
			if ok, _, err := r.DeviceMatches(ctx, dev); err != nil || !ok {
				return benchResult{}, fmt.Errorf("%s: %v %v", expr, ok, err)
			}
			const n = 200000
			start := time.Now()
			for i := 0; i < n; i++ {
				_, _, _ = r.DeviceMatches(ctx, dev)
			}
			total += float64(time.Since(start).Nanoseconds()) / n
		}
		theirs = append(theirs, total)
	}
	ours, err := b.celBenchNanos()
	if err != nil {
		return benchResult{}, err
	}
	k := median(theirs)
	fmt.Fprintf(os.Stderr, "e: the three selectors of the CEL issue against one H100 device: gpuplane %.0f ns, Kubernetes %.0f ns\n", ours, k)
	return benchResult{Unit: "ns", Gpuplane: ours, Kubernetes: k, Ratio: k / ours}, nil
}

// celBenchNanos runs cel_bench's three evaluation benchmarks: the sum of their medians.
func (b *benchRun) celBenchNanos() (float64, error) {
	cmd := exec.Command(b.celBench, "--benchmark_filter=BM_EvalSelector[ABC]_", "--benchmark_format=json",
		fmt.Sprintf("--benchmark_repetitions=%d", b.reps), "--benchmark_report_aggregates_only=true")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v (build it: cmake --build build --target cel_bench)", b.celBench, err)
	}
	var report struct {
		Benchmarks []struct {
			Name      string  `json:"name"`
			Aggregate string  `json:"aggregate_name"`
			RealTime  float64 `json:"real_time"`
			TimeUnit  string  `json:"time_unit"`
		} `json:"benchmarks"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		return 0, err
	}
	total, found := 0.0, 0
	for _, x := range report.Benchmarks {
		if x.Aggregate == "median" || (b.reps == 1 && x.Aggregate == "") {
			if x.TimeUnit != "ns" {
				return 0, fmt.Errorf("cel_bench reports %s, expected ns", x.TimeUnit)
			}
			total += x.RealTime
			found++
		}
	}
	if found != 3 {
		return 0, fmt.Errorf("cel_bench reported %d of the 3 evaluation benchmarks", found)
	}
	return total, nil
}
