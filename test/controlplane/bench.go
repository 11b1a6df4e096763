package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1alpha1 "k8s.io/api/scheduling/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// benchResult is the last line of `bench`.
type benchResult struct {
	Scheduler    string  `json:"scheduler"`
	Nodes        int     `json:"nodes"`
	GPUsPerNode  int     `json:"gpus_per_node"`
	Pods         int     `json:"pods"`
	Bound        int     `json:"bound"`
	Gangs        int     `json:"gangs,omitempty"`
	GangsBound   int     `json:"gangs_fully_bound,omitempty"`
	GangsPartial int     `json:"gangs_partly_bound,omitempty"`
	PodsPerSec   float64 `json:"pods_per_s"`
	P50Seconds   float64 `json:"p50_create_to_bind_s"`
	P99Seconds   float64 `json:"p99_create_to_bind_s"`
	CreatePerSec float64 `json:"pods_created_per_s"`
	Seconds      float64 `json:"seconds"`
	TimedOut     bool    `json:"timed_out"`
}

type benchConfig struct {
	kubeconfig, scheduler, runDuration string
	nodes, gpus, pods, workers         int
	gangs, gangSize                    int
	timeout                            time.Duration
}

// runBench fills a plane with nodes of GPUs published as ResourceSlices (labelled for kwok),
// creates pods that each take one GPU through a ResourceClaimTemplate, and measures how fast
// the named scheduler binds them: pods bound per second from the first creation to the last
// binding, and the time from each pod's creation to its binding (seen by a watch).
func runBench(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c benchConfig
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the plane (required)")
	fs.StringVar(&c.scheduler, "scheduler-name", "default-scheduler", "spec.schedulerName of the pods")
	fs.IntVar(&c.nodes, "nodes", 1000, "nodes")
	fs.IntVar(&c.gpus, "gpus-per-node", 8, "GPUs per node, one ResourceSlice per node")
	fs.IntVar(&c.pods, "pods", 10000, "pods, each with a one-GPU claim from a template")
	fs.IntVar(&c.workers, "workers", 16, "concurrent API writers")
	fs.IntVar(&c.gangs, "gangs", 0, "instead of single pods: this many Workload gangs (scheduling.k8s.io/v1alpha1)")
	fs.IntVar(&c.gangSize, "gang-size", 8, "pods per gang (its minCount)")
	fs.StringVar(&c.runDuration, "run-duration", "", "annotation gpuplane.io/run-duration: kwok ends each pod after it (frees its GPU)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "bench: --kubeconfig is required")
		return 2
	}
	if c.gangs > 0 {
		c.pods = c.gangs * c.gangSize
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: reading %s: %v\n", c.kubeconfig, err)
		return 2
	}
	cfg.QPS, cfg.Burst = 5000, 10000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 2
	}
	r, err := benchRun(client, c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 1
	}
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
	if r.TimedOut {
		return 1
	}
	return 0
}

const benchDriver = "gpu.bench.gpuplane.io"

func benchRun(client kubernetes.Interface, c benchConfig) (benchResult, error) {
	ctx := context.Background()
	ns := fmt.Sprintf("bench-%06d", rand.Intn(1000000))
	start := time.Now()
	if err := benchCluster(ctx, client, c, ns); err != nil {
		return benchResult{}, err
	}
	fmt.Fprintf(os.Stderr, "bench: %d nodes x %d GPUs ready in %.1f s\n", c.nodes, c.gpus, time.Since(start).Seconds())
	for g := 0; g < c.gangs; g++ {
		w := &schedulingv1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%04d", g), Namespace: ns},
			Spec: schedulingv1alpha1.WorkloadSpec{PodGroups: []schedulingv1alpha1.PodGroup{{Name: "workers",
				Policy: schedulingv1alpha1.PodGroupPolicy{Gang: &schedulingv1alpha1.GangSchedulingPolicy{MinCount: int32(c.gangSize)}}}}}}
		if _, err := client.SchedulingV1alpha1().Workloads(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			return benchResult{}, err
		}
	}

	var mu sync.Mutex
	created := map[string]time.Time{}
	bound := map[string]time.Time{}
	allBound := make(chan struct{})
	seen := func(obj interface{}) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, dup := bound[pod.Name]; !dup {
			bound[pod.Name] = now
			if len(bound) == c.pods {
				close(allBound)
			}
		}
	}
	// An informer, not a bare watch: it re-lists and re-watches when the server ends a watch.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	podInformer := factory.Core().V1().Pods().Informer()
	_, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj interface{}) { seen(obj) },
	})
	if err != nil {
		return benchResult{}, err
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	t0 := time.Now()
	err = parallel(c.pods, c.workers, func(i int) error {
		pod := benchPod(ns, i, c)
		now := time.Now()
		mu.Lock()
		created[pod.Name] = now
		mu.Unlock()
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return benchResult{}, err
	}
	createSecs := time.Since(t0).Seconds()
	timedOut := false
	select {
	case <-allBound:
	case <-time.After(c.timeout):
		timedOut = true
	}
	mu.Lock()
	defer mu.Unlock()
	var last time.Time
	var lat []float64
	for name, b := range bound {
		if b.After(last) {
			last = b
		}
		lat = append(lat, b.Sub(created[name]).Seconds())
	}
	sort.Float64s(lat)
	perGang := map[string]int{}
	for name := range bound {
		var i int
		_, _ = fmt.Sscanf(name, "p-%d", &i)
		if c.gangs > 0 {
			perGang[fmt.Sprintf("g-%04d", i/c.gangSize)]++
		}
	}
	r := benchResult{Scheduler: c.scheduler, Nodes: c.nodes, GPUsPerNode: c.gpus, Pods: c.pods,
		Bound: len(bound), CreatePerSec: float64(c.pods) / createSecs, TimedOut: timedOut,
		Seconds: time.Since(t0).Seconds(), Gangs: c.gangs}
	for _, n := range perGang {
		if n == c.gangSize {
			r.GangsBound++
		} else {
			r.GangsPartial++
		}
	}
	if len(lat) > 0 {
		r.PodsPerSec = float64(len(bound)) / last.Sub(t0).Seconds()
		r.P50Seconds = lat[len(lat)/2]
		r.P99Seconds = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	// Best effort: leave the plane as it was for the next run (not the nodes: they are shared).
	_ = client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	return r, nil
}

// benchCluster creates the DeviceClass, the nodes and their ResourceSlices (kept when they
// exist from an earlier run) and the namespace with its one-GPU claim template.
func benchCluster(ctx context.Context, client kubernetes.Interface, c benchConfig, ns string) error {
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: benchDriver},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.driver == %q", benchDriver)}}}}}
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	err := parallel(c.nodes, c.workers, func(i int) error {
		name := fmt.Sprintf("bench-node-%04d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"gpuplane.io/kwok": "true", "kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Allocatable: benchNodeResources(), Capacity: benchNodeResources()}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name + "-gpus"},
			Spec: resourcev1.ResourceSliceSpec{Driver: benchDriver, NodeName: ptr.To(name),
				Pool: resourcev1.ResourcePool{Name: name, Generation: 1, ResourceSliceCount: 1}}}
		for g := 0; g < c.gpus; g++ {
			slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", g),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("H100")}},
				Capacity:   map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}})
		}
		if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: benchDriver}}}}}}}
	_, err = client.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{})
	return err
}

func benchNodeResources() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("256"),
		corev1.ResourceMemory: resource.MustParse("2Ti"), corev1.ResourcePods: resource.MustParse("110")}
}

func benchPod(ns string, i int, c benchConfig) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i), Namespace: ns},
		Spec: corev1.PodSpec{SchedulerName: c.scheduler,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					Claims:   []corev1.ResourceClaim{{Name: "gpu"}}}}},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}}}
	if c.gangs > 0 {
		pod.Spec.WorkloadRef = &corev1.WorkloadReference{Name: fmt.Sprintf("g-%04d", i/c.gangSize), PodGroup: "workers"}
	}
	if c.runDuration != "" {
		pod.Annotations = map[string]string{"gpuplane.io/run-duration": c.runDuration}
	}
	return pod
}

// parallel runs f(0..n-1) on workers goroutines; the first error wins.
func parallel(n, workers int, f func(int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
loop:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case err = <-errs:
			break loop
		}
	}
	close(next)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}
