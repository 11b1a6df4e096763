// k8sref runs Kubernetes' own DRA code beside gpuplane on the same inputs and reports every
// difference. Subcommands:
//
//	k8sref cel --gpuplane BIN --vectors FILE.jsonl   conformance vectors (needs: [] only)
//	k8sref cel --gpuplane BIN --random N --seed S    random selectors over random devices
//
// Each case is evaluated by Kubernetes' DRA CEL environment (in this process) and by
// `gpuplane cel eval --cases` (one process for all cases). A value that differs, or an error
// on one side only, is a difference; each is printed with both results. Differences where
// Kubernetes departs from CEL (known.go) print as KNOWN. The last line is
// {"cases":N,"agree":N,"differ":N,"known":N,"seconds":S} (known counts the differences that
// are known); the exit status is 1 when a difference is not known, 2 on bad usage or a
// harness failure.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

func main() {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case "cel":
			os.Exit(runCel(os.Args[2:]))
		case "diff":
			os.Exit(runDiff(os.Args[2:]))
		case "bench":
			os.Exit(runBench(os.Args[2:]))
		}
	}
	fmt.Fprintln(os.Stderr, "usage: k8sref cel --gpuplane BIN (--vectors FILE | --random N --seed S)\n"+
		"       k8sref diff --gpuplane BIN --instances N --seed S [--save DIR]\n"+
		"       k8sref bench --gpuplane BIN [--reps N] [--cases a,b,c,d,e]")
	os.Exit(2)
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "k8sref: "+format+"\n", args...)
	return 2
}

func runCel(args []string) int {
	fs := flag.NewFlagSet("cel", flag.ContinueOnError)
	bin := fs.String("gpuplane", "", "the gpuplane binary")
	vectors := fs.String("vectors", "", "conformance vectors (JSON lines)")
	random := fs.Int("random", 0, "how many random selectors")
	seed := fs.Int64("seed", 1, "seed of the random selectors and devices")
	show := fs.Int("show", 20, "print at most this many differences")
	verbose := fs.Bool("verbose", false, "print every case with both results")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *bin == "" || (*vectors == "") == (*random == 0) {
		return fail("give --gpuplane and one of --vectors or --random")
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "k8sref-cel-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	var cases []celCase
	devices := map[string]dracel.Device{}
	sliceFile := ""
	if *vectors != "" {
		if cases, err = readVectors(*vectors); err != nil {
			return fail("%s: %v", *vectors, err)
		}
	} else {
		r := rand.New(rand.NewSource(*seed))
		var api []resourceapi.Device
		api, devices = genDevices(r, 16)
		sliceFile = filepath.Join(dir, "devices.json")
		if err := writeSlice(sliceFile, api); err != nil {
			return fail("%v", err)
		}
		g := &gen{r: r}
		for i := 0; i < *random; i++ {
			cases = append(cases, celCase{Expr: g.boolExpr(3), Device: fmt.Sprintf("gpu-%d", r.Intn(len(api)))})
		}
	}
	ours, err := runGpuplane(*bin, dir, sliceFile, cases)
	if err != nil {
		return fail("%v", err)
	}
	k8s, err := newK8sCEL(devices)
	if err != nil {
		return fail("the DRA CEL environment: %v", err)
	}
	agree, differ, known := 0, 0, 0
	for i, c := range cases {
		theirs := k8s.eval(c)
		if theirs.Kind == "input" || ours[i].Kind == "input" {
			return fail("case %d (%s): bad input: %s%s", i+1, c.Expr, theirs.Error, ours[i].Error)
		}
		if *verbose {
			printDifference("CASE", c, theirs, ours[i])
		}
		if same(theirs, ours[i]) {
			agree++
			continue
		}
		differ++
		if reason := knownDifference(c, theirs, ours[i]); reason != "" {
			known++
			if known <= *show {
				printDifference("KNOWN ("+reason+")", c, theirs, ours[i])
			}
			continue
		}
		if differ-known <= *show {
			printDifference("DIFFERENCE", c, theirs, ours[i])
		}
	}
	// In the field order: cases, agree, differ (then known), seconds.
	summary, _ := json.Marshal(struct {
		Cases   int     `json:"cases"`
		Agree   int     `json:"agree"`
		Differ  int     `json:"differ"`
		Known   int     `json:"known"`
		Seconds float64 `json:"seconds"`
	}{len(cases), agree, differ, known, float64(time.Since(start).Milliseconds()) / 1000})
	fmt.Println(string(summary))
	if differ > known {
		return 1
	}
	return 0
}

func same(a, b celResult) bool {
	if a.Kind != "" || b.Kind != "" {
		return a.Kind != "" && b.Kind != "" // both errors
	}
	return reflect.DeepEqual(canonical(a.Value), canonical(b.Value))
}

func printDifference(label string, c celCase, k8s, ours celResult) {
	line, _ := json.Marshal(c)
	fmt.Printf("%s %s\n  kubernetes: %s\n  gpuplane:   %s\n", label, line, describe(k8s), describe(ours))
}

func describe(r celResult) string {
	if r.Kind != "" {
		return r.Kind + " error: " + r.Error
	}
	return string(r.Value)
}

// readVectors takes the core-CEL cases (needs: [], an expected value or error).
func readVectors(path string) ([]celCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []celCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var v struct {
			celCase
			Needs  []string                   `json:"needs"`
			Expect map[string]json.RawMessage `json:"expect"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if _, unsupported := v.Expect["unsupported"]; len(v.Needs) == 0 && !unsupported {
			cases = append(cases, v.celCase)
		}
	}
	return cases, sc.Err()
}

func writeSlice(path string, devices []resourceapi.Device) error {
	slice := resourceapi.ResourceSlice{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "k8sref-devices"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   genDriver,
			Pool:     resourceapi.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1},
			NodeName: ptrTo("node-0"),
			Devices:  devices,
		},
	}
	b, err := json.MarshalIndent(slice, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func ptrTo[T any](v T) *T { return &v }

// runGpuplane evaluates every case in one `gpuplane cel eval --cases` process.
func runGpuplane(bin, dir, sliceFile string, cases []celCase) ([]celResult, error) {
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			return nil, err
		}
	}
	casesFile := filepath.Join(dir, "cases.jsonl")
	if err := os.WriteFile(casesFile, in.Bytes(), 0o644); err != nil {
		return nil, err
	}
	argv := []string{"cel", "eval", "--cases", casesFile}
	if sliceFile != "" {
		argv = append(argv, "--device", sliceFile)
	}
	cmd := exec.Command(bin, argv...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %v", bin, argv, err)
	}
	var results []celResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r celResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("gpuplane printed %q: %v", sc.Text(), err)
		}
		results = append(results, r)
	}
	if len(results) != len(cases) {
		return nil, fmt.Errorf("gpuplane gave %d results for %d cases", len(results), len(cases))
	}
	return results, nil
}
