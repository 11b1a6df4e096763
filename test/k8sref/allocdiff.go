// `k8sref diff`: random allocation instances decided by Kubernetes' structured allocator (in
// this process) and by `gpuplane allocate --cases` (one process per chunk), each on node-0.
// Feasibility must agree; gpuplane verifies its own allocations and Kubernetes' with its
// independent verifier. Where only gpuplane allocates, the instance is `k8s_incomplete` (saved
// under --save as a scenario file the allocation tests replay); where only Kubernetes does, or
// the verifier rejects either allocation, it is a `gpuplane_bug`.
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
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
)

// allocCase is one line of `gpuplane allocate --cases`.
type allocCase struct {
	Objects string `json:"objects"`
	Claims  string `json:"claims"`
	Node    string `json:"node"`
	Check   string `json:"check,omitempty"`
}

// allocAnswer is gpuplane's line for a case.
type allocAnswer struct {
	Allocated bool            `json:"allocated"`
	Claims    json.RawMessage `json:"claims"`
	Reasons   []string        `json:"reasons"`
	Check     *string         `json:"check"`
	Error     string          `json:"error"`
	Exit      int             `json:"exit"`
}

// jsonStream renders objects as one JSON document per object, separated as YAML documents.
func jsonStream(objects ...any) (string, error) {
	var b strings.Builder
	for _, o := range objects {
		j, err := json.Marshal(o)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n")
		b.Write(j)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// appendObjects appends xs to out as `any` (the objects a stream renders).
func appendObjects[T any](out []any, xs []T) []any {
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}

func (in *instance) objects() []any {
	out := appendObjects(nil, in.Nodes)
	out = appendObjects(out, in.Classes)
	out = appendObjects(out, in.Slices)
	return appendObjects(out, in.Allocated)
}

func (in *instance) work() []any {
	return appendObjects([]any{in.Pod}, in.Claims)
}

// toCase renders an instance, with Kubernetes' results (nil: none) to check.
func (in *instance) toCase(results []resourceapi.AllocationResult) (allocCase, error) {
	c := allocCase{Node: in.Nodes[0].Name}
	var err error
	if c.Objects, err = jsonStream(in.objects()...); err != nil {
		return c, err
	}
	if c.Claims, err = jsonStream(in.work()...); err != nil {
		return c, err
	}
	if results != nil {
		var check []any
		for i, claim := range in.Claims {
			done := claim.DeepCopy()
			done.Status.Allocation = &results[i]
			check = append(check, done)
		}
		if c.Check, err = jsonStream(check...); err != nil {
			return c, err
		}
	}
	return c, nil
}

type diffRun struct {
	bin, save                          string
	show                               int
	verbose                            bool
	instances, agree, incomplete, bugs int
	invalid                            int // Kubernetes' allocation breaks a rule (allocknown.go)
	unexplained                        int // k8s_incomplete without a known cause
	gpuplaneSeconds                    float64
	k8sSeconds                         float64
}

func runDiff(args []string) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	d := &diffRun{}
	fs.StringVar(&d.bin, "gpuplane", "", "the gpuplane binary")
	n := fs.Int("instances", 1000, "how many random instances")
	seed := fs.Int64("seed", 1, "seed of the instances")
	chunk := fs.Int("chunk", 2000, "instances per gpuplane process")
	fs.StringVar(&d.save, "save", "", "write k8s_incomplete instances here as scenario files")
	fs.IntVar(&d.show, "show", 10, "print at most this many differences of each class")
	fs.BoolVar(&d.verbose, "verbose", false, "print every instance's outcome")
	only := fs.Int("only", -1, "judge only this instance (the others are generated and skipped), tracing Kubernetes' allocator")
	if err := fs.Parse(args); err != nil || d.bin == "" || *n <= 0 || *chunk <= 0 {
		fmt.Fprintln(os.Stderr, "usage: k8sref diff --gpuplane BIN --instances N --seed S [--save DIR]")
		return 2
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "k8sref-diff-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(dir)
	g := &allocGen{r: rand.New(rand.NewSource(*seed))}
	k := newK8sAllocator()
	if *only >= 0 {
		for i := 0; i < *only; i++ {
			g.instance()
		}
		k.trace, d.verbose, d.show = true, true, 1
		if err := d.runChunks(g, k, dir, *seed, *only, 1, 1); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	if err := d.runChunks(g, k, dir, *seed, 0, *n, *chunk); err != nil {
		return fail("%v", err)
	}
	summary, _ := json.Marshal(struct {
		Instances     int     `json:"instances"`
		Agree         int     `json:"agree"`
		K8sIncomplete int     `json:"k8s_incomplete"`
		GpuplaneBug   int     `json:"gpuplane_bug"`
		K8sInvalid    int     `json:"k8s_invalid"`
		Seconds       float64 `json:"seconds"`
	}{d.instances, d.agree, d.incomplete, d.bugs, d.invalid, float64(time.Since(start).Milliseconds()) / 1000})
	fmt.Fprintf(os.Stderr, "k8sref diff: Kubernetes' allocator %.1f s, gpuplane allocate --cases %.1f s (process included), %d k8s_incomplete without a known cause\n",
		d.k8sSeconds, d.gpuplaneSeconds, d.unexplained)
	fmt.Println(string(summary))
	if d.bugs > 0 {
		return 1
	}
	return 0
}

type decided struct {
	in      *instance
	results []resourceapi.AllocationResult
	err     error
	c       allocCase
}

// chunk is a batch of instances decided by Kubernetes, waiting for gpuplane.
type chunk struct {
	first int
	batch []decided
	lines []byte
}

// decideChunk generates `count` instances and has Kubernetes decide them.
func (d *diffRun) decideChunk(g *allocGen, k *k8sAllocator, first, count int) (chunk, error) {
	c := chunk{first: first}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	enc.SetEscapeHTML(false)
	for i := 0; i < count; i++ {
		in := g.instance()
		k.settle(in)
		t := time.Now()
		results, err := k.allocate(in, in.Allocated, in.Claims, in.Nodes[0])
		d.k8sSeconds += time.Since(t).Seconds()
		ac, cerr := in.toCase(results)
		if cerr != nil {
			return c, cerr
		}
		if err := enc.Encode(ac); err != nil {
			return c, err
		}
		c.batch = append(c.batch, decided{in, results, err, ac})
	}
	c.lines = lines.Bytes()
	return c, nil
}

// runChunks decides the instances in chunks, gpuplane working on one chunk (in its own
// process) while Kubernetes decides the next; verdicts are judged in instance order.
func (d *diffRun) runChunks(g *allocGen, k *k8sAllocator, dir string, seed int64, first, n, size int) error {
	work := make(chan chunk, 1)
	done := make(chan error, 1)
	go func() {
		var err error
		for c := range work {
			if err != nil {
				continue // drain
			}
			t := time.Now()
			path := filepath.Join(dir, fmt.Sprintf("cases-%d.jsonl", c.first))
			var answers []allocAnswer
			answers, err = runAllocateCases(d.bin, path, c.lines, len(c.batch))
			d.gpuplaneSeconds += time.Since(t).Seconds()
			for i := 0; err == nil && i < len(c.batch); i++ {
				d.judge(fmt.Sprintf("seed %d instance %d", seed, c.first+i), c.batch[i], answers[i])
			}
		}
		done <- err
	}()
	var err error
	for at := first; at < first+n && err == nil; at += size {
		var c chunk
		if c, err = d.decideChunk(g, k, at, min(size, first+n-at)); err == nil {
			work <- c
		}
	}
	close(work)
	if werr := <-done; err == nil {
		err = werr
	}
	return err
}

// judge classifies one instance.
func (d *diffRun) judge(label string, x decided, ours allocAnswer) {
	d.instances++
	k8sAllocated := x.err == nil && x.results != nil
	verdict := ""
	switch {
	case ours.Error != "":
		verdict = "gpuplane_bug: gpuplane failed: " + ours.Error
	case ours.Check != nil && *ours.Check != "":
		if known := knownK8sError(x.in, x.results); known != "" {
			verdict = "k8s_invalid: " + known + " (the verifier: " + *ours.Check + ")"
		} else {
			verdict = "gpuplane_bug: the verifier rejects Kubernetes' allocation: " + *ours.Check
		}
	case k8sAllocated == ours.Allocated:
		d.agree++
	case ours.Allocated:
		verdict = "k8s_incomplete"
	default:
		verdict = "gpuplane_bug: Kubernetes allocates, gpuplane does not"
	}
	if d.verbose {
		fmt.Printf("%s: kubernetes %v (%v), gpuplane %v %s\n", label, k8sAllocated, x.err, ours.Allocated, verdict)
	}
	switch {
	case verdict == "":
		return
	case strings.HasPrefix(verdict, "k8s_invalid"):
		d.invalid++
		if d.invalid <= d.show {
			fmt.Printf("K8S_INVALID %s: %s\n", label, verdict)
		}
	case verdict == "k8s_incomplete":
		d.incomplete++
		cause := incompleteCause(x.in, x.err, ours.Claims)
		if cause == "" {
			d.unexplained++
			cause = "unexplained"
		}
		if d.incomplete <= d.show {
			fmt.Printf("K8S_INCOMPLETE %s (%s): gpuplane allocates %s\n", label, cause, ours.Claims)
		}
		if d.save != "" {
			if err := saveScenario(d.save, label, cause, x, ours); err != nil {
				fmt.Fprintf(os.Stderr, "k8sref diff: saving %s: %v\n", label, err)
			}
		}
	default:
		d.bugs++
		if d.bugs <= d.show {
			fmt.Printf("GPUPLANE_BUG %s: %s\n  gpuplane: allocated=%v %s reasons=%q\n  kubernetes: %s\n  objects:\n%s  claims:\n%s",
				label, verdict, ours.Allocated, ours.Claims, ours.Reasons, describeResults(x), x.c.Objects, x.c.Claims)
		}
	}
}

func describeResults(x decided) string {
	if x.err != nil {
		return "error: " + x.err.Error()
	}
	if x.results == nil {
		return "does not fit"
	}
	j, _ := json.Marshal(x.results)
	return string(j)
}

// saveScenario writes a k8s_incomplete instance as a testdata/alloc-style scenario file.
func saveScenario(dir, label, cause string, x decided, ours allocAnswer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# scenario: k8sref diff %s: Kubernetes' allocator (v0.35.10) finds no allocation; gpuplane finds\n# one its verifier accepts. Why Kubernetes does not: %s.\n", label, cause)
	fmt.Fprintf(&b, "# node: %s\n", x.c.Node)
	for _, c := range x.in.Claims {
		fmt.Fprintf(&b, "# expect: %s/%s allocated\n", c.Namespace, c.Name)
	}
	fmt.Fprintf(&b, "# gpuplane: %s\n", ours.Claims)
	b.WriteString(x.c.Objects)
	b.WriteString(x.c.Claims)
	name := strings.ReplaceAll(label, " ", "-") + ".yaml"
	return os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644)
}

// runAllocateCases decides every case in one `gpuplane allocate --cases` process.
func runAllocateCases(bin, path string, lines []byte, count int) ([]allocAnswer, error) {
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "allocate", "--cases", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("%s allocate --cases: %v\n%s", bin, err, stderr.String())
	}
	var answers []allocAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var a allocAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("gpuplane printed %q: %v", sc.Text(), err)
		}
		answers = append(answers, a)
	}
	if len(answers) != count {
		return nil, fmt.Errorf("gpuplane gave %d answers for %d cases\n%s", len(answers), count, stderr.String())
	}
	return answers, nil
}
