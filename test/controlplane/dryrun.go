package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// dryRunResult is one line of `dryrun` output.
type dryRunResult struct {
	File     string `json:"file"`
	Index    int    `json:"index"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
}

// runDryRun creates every object of every file with dryRun=All and prints what the API
// server said. A document the decoder cannot read is reported as not accepted.
func runDryRun(args []string) int {
	fs := flag.NewFlagSet("dryrun", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the plane (required)")
	namespace := fs.String("namespace", "default", "namespace for namespaced objects without one")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *kubeconfig == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "dryrun: --kubeconfig and at least one FILE are required")
		return 2
	}
	v, err := newValidator(*kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dryrun: %v\n", err)
		return 1
	}
	v.prepare = false // a dry run changes nothing, not even namespaces
	v.defaultNamespace = *namespace
	out := json.NewEncoder(os.Stdout)
	for _, file := range fs.Args() {
		for _, r := range v.dryRun(file) {
			_ = out.Encode(r)
		}
	}
	return 0
}

// readObjects decodes every YAML or JSON document of file, as kubectl does: a List's items
// are objects of their own.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		var obj map[string]interface{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		if obj == nil {
			continue // an empty document
		}
		u := &unstructured.Unstructured{Object: obj}
		if !u.IsList() {
			objs = append(objs, u)
			continue
		}
		// A typed list (kind FooList) may leave its items' apiVersion and kind out.
		itemKind := strings.TrimSuffix(u.GetKind(), "List")
		err = u.EachListItem(func(o runtime.Object) error {
			item := o.(*unstructured.Unstructured)
			if item.GetKind() == "" && itemKind != "" {
				item.SetAPIVersion(u.GetAPIVersion())
				item.SetKind(itemKind)
			}
			objs = append(objs, item)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
	}
}

func createDryRun(client dynamic.Interface, mapper *restmapper.DeferredDiscoveryRESTMapper, u *unstructured.Unstructured, namespace string) error {
	gvk := u.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return errors.New("apiVersion and kind are required")
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("no resource for %s: %w", gvk, err)
	}
	ri := client.Resource(mapping.Resource)
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	if mapping.Scope.Name() == "namespace" {
		ns := u.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		_, err = ri.Namespace(ns).Create(context.Background(), u, opts)
	} else {
		_, err = ri.Create(context.Background(), u, opts)
	}
	return err
}
