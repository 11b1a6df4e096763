package main

import (
	"bufio"
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
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// validateSummary is the last line of `validate`.
type validateSummary struct {
	Files  int     `json:"files"`
	Agree  int     `json:"agree"`
	Known  int     `json:"known"`
	Differ int     `json:"differ"`
	Secs   float64 `json:"seconds"`
}

// runValidate compares `gpuplane validate FILE` with the API server's server-side dry run of
// every object in FILE: a file is accepted by the API server when all its objects are. A
// disagreement is a difference unless the known-differences file lists the file with the
// reason; a listed file that now agrees is a difference too (the list must stay true).
// Exit 1 on any difference.
func runValidate(args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the plane (required)")
	gpuplane := fs.String("gpuplane", "build/gpuplane", "the gpuplane binary")
	knownFile := fs.String("known", "", "known differences: lines `FILE: reason`")
	crds := fs.String("crds", "", "folder of CustomResourceDefinitions to install first")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "validate: --kubeconfig and at least one FILE or folder are required")
		return 2
	}
	start := time.Now()
	known, err := readKnown(*knownFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "validate: %v\n", err)
		return 2
	}
	v, err := newValidator(*kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "validate: %v\n", err)
		return 2
	}
	if *crds != "" {
		if err := v.installCRDs(*crds); err != nil {
			fmt.Fprintf(os.Stderr, "validate: installing the CRDs in %s: %v\n", *crds, err)
			return 2
		}
	}
	files, err := inputFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "validate: %v\n", err)
		return 2
	}
	var s validateSummary
	for _, file := range files {
		s.Files++
		gpOK, gpErr, err := gpuplaneAccepts(*gpuplane, file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "validate: %v\n", err)
			return 2
		}
		results := v.dryRun(file)
		apiOK, apiErr := len(results) > 0, ""
		for _, r := range results {
			if !r.Accepted {
				apiOK = false
				if apiErr == "" {
					apiErr = fmt.Sprintf("%s %s (document %d): %s", r.Kind, r.Name, r.Index, r.Error)
				}
			}
		}
		reason, listed := known[filepath.Base(file)]
		switch {
		case gpOK == apiOK && listed:
			s.Differ++
			fmt.Printf("STALE %s: listed as a known difference (%s) but both sides now %s; remove the line\n",
				file, reason, verdict(gpOK))
		case gpOK == apiOK:
			s.Agree++
		case listed:
			s.Known++
			fmt.Printf("known %s: gpuplane %s, kube-apiserver %s: %s\n", file, verdict(gpOK), verdict(apiOK), reason)
		default:
			s.Differ++
			fmt.Printf("DIFFER %s: gpuplane %s, kube-apiserver %s\n  gpuplane: %s\n  kube-apiserver: %s\n",
				file, verdict(gpOK), verdict(apiOK), gpErr, apiErr)
		}
	}
	s.Secs = time.Since(start).Seconds()
	line, _ := json.Marshal(s)
	fmt.Println(string(line))
	if s.Differ > 0 {
		return 1
	}
	return 0
}

func verdict(ok bool) string {
	if ok {
		return "accepts"
	}
	return "rejects"
}

// readKnown reads `FILE: reason` lines (FILE is a base name); # starts a comment.
func readKnown(path string) (map[string]string, error) {
	known := map[string]string{}
	if path == "" {
		return known, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, ": ")
		if !ok || strings.TrimSpace(reason) == "" {
			return nil, fmt.Errorf("%s:%d: expected `FILE: reason`", path, n)
		}
		known[name] = reason
	}
	return known, sc.Err()
}

// inputFiles expands folders into their .yaml, .yml and .json files, sorted.
func inputFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch filepath.Ext(path) {
			case ".yaml", ".yml", ".json":
				if !d.IsDir() {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// gpuplaneAccepts runs `gpuplane validate FILE`: exit 0 accepts, 1 rejects, anything else is
// an error of the harness.
func gpuplaneAccepts(bin, file string) (bool, string, error) {
	cmd := exec.Command(bin, "validate", file)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	first := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, ": ") && !strings.Contains(line, "warning:") {
			first = line
			break
		}
	}
	if err == nil {
		return true, "", nil
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return false, first, nil
	}
	return false, "", fmt.Errorf("%s validate %s: %v: %s", bin, file, err, first)
}

type validator struct {
	core       kubernetes.Interface
	client     dynamic.Interface
	mapper     *restmapper.DeferredDiscoveryRESTMapper
	namespaces map[string]bool
	// prepare: create the namespaces and PriorityClasses objects refer to, for real, so that
	// their dry runs can pass; defaultNamespace: for namespaced objects without one.
	prepare          bool
	defaultNamespace string
}

func newValidator(kubeconfig string) (*validator, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &validator{core: core, client: client,
		mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		namespaces: map[string]bool{"default": true}, prepare: true, defaultNamespace: "default"}, nil
}

// installCRDs creates every CustomResourceDefinition in dir and waits until each is served.
func (v *validator) installCRDs(dir string) error {
	files, err := inputFiles([]string{dir})
	if err != nil {
		return err
	}
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	var kinds []schema.GroupVersionKind
	for _, file := range files {
		objs, err := readObjects(file)
		if err != nil {
			return err
		}
		for _, u := range objs {
			_, err := v.client.Resource(crd).Create(context.Background(), u, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: %s: %w", file, u.GetName(), err)
			}
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
			for _, ver := range versions {
				name, _, _ := unstructured.NestedString(ver.(map[string]interface{}), "name")
				kinds = append(kinds, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, gvk := range kinds {
		for {
			v.mapper.Reset()
			if _, err := v.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s is not served after 30 s", gvk)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// ensureNamespace creates a namespace for real, once, so that dry runs in it can pass.
func (v *validator) ensureNamespace(ns string) {
	if ns == "" || v.namespaces[ns] {
		return
	}
	v.namespaces[ns] = true
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	_, _ = v.core.CoreV1().Namespaces().Create(context.Background(), obj, metav1.CreateOptions{})
}

// ensurePriorityClass creates the PriorityClass a Pod names, once, so that the Priority
// admission plugin does not reject the Pod for a cluster object the file cannot carry.
func (v *validator) ensurePriorityClass(u *unstructured.Unstructured) {
	name, _, _ := unstructured.NestedString(u.Object, "spec", "priorityClassName")
	if u.GetKind() != "Pod" || name == "" || v.namespaces["priorityclass/"+name] {
		return
	}
	v.namespaces["priorityclass/"+name] = true
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: 1000}
	_, _ = v.core.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{})
}

func (v *validator) dryRun(file string) []dryRunResult {
	objs, err := readObjects(file)
	if err != nil {
		return []dryRunResult{{File: file, Error: err.Error()}}
	}
	var results []dryRunResult
	for i, u := range objs {
		r := dryRunResult{File: file, Index: i, Kind: u.GetKind(), Name: u.GetName()}
		if v.prepare {
			v.ensureNamespace(u.GetNamespace())
			v.ensurePriorityClass(u)
		}
		if err := createDryRun(v.client, v.mapper, u, v.defaultNamespace); err != nil {
			r.Error = err.Error()
		} else {
			r.Accepted = true
		}
		results = append(results, r)
	}
	return results
}
