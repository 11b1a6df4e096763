// Kubernetes' side of the CEL comparison: expressions evaluated in the DRA environment
// (k8s.io/dynamic-resource-allocation/cel), selectors over a device exactly as the allocator
// evaluates them, and other expressions with their bindings declared as dyn variables.
package main

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	resourceapi "k8s.io/api/resource/v1"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// celCase is one line of a cases file: an expression, typed bindings, and optionally the
// name of a device (of the slice file) bound as `device`.
type celCase struct {
	Expr     string                     `json:"expr"`
	Bindings map[string]json.RawMessage `json:"bindings,omitempty"`
	Device   string                     `json:"device,omitempty"`
}

// celResult is one result line, as `gpuplane cel eval -o json` prints it.
type celResult struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
	Kind  string          `json:"kind,omitempty"` // "compile", "runtime" or "input"
}

type k8sCEL struct {
	features dracel.Features
	base     *celgo.Env
	envs     map[string]*celgo.Env // by the sorted binding names
	devices  map[string]dracel.Device
}

func newK8sCEL(devices map[string]dracel.Device) (*k8sCEL, error) {
	features := dracel.Features{EnableConsumableCapacity: true}
	r := dracel.GetCompiler(features).CompileCELExpression("true", dracel.Options{})
	if r.Error != nil {
		return nil, r.Error
	}
	return &k8sCEL{features: features, base: r.Environment, envs: map[string]*celgo.Env{},
		devices: devices}, nil
}

func (k *k8sCEL) eval(c celCase) celResult {
	if c.Device != "" {
		return k.evalSelector(c)
	}
	names := make([]string, 0, len(c.Bindings))
	for n := range c.Bindings {
		names = append(names, n)
	}
	sort.Strings(names)
	key := strings.Join(names, ",")
	env, ok := k.envs[key]
	if !ok {
		opts := make([]celgo.EnvOption, 0, len(names))
		for _, n := range names {
			opts = append(opts, celgo.Variable(n, celgo.DynType))
		}
		var err error
		if env, err = k.base.Extend(opts...); err != nil {
			return celResult{Error: err.Error(), Kind: "input"}
		}
		k.envs[key] = env
	}
	vars := map[string]any{}
	for n, raw := range c.Bindings {
		v, err := fromTyped(raw)
		if err != nil {
			return celResult{Error: "binding " + n + ": " + err.Error(), Kind: "input"}
		}
		vars[n] = v
	}
	ast, iss := env.Compile(c.Expr)
	if iss.Err() != nil {
		return celResult{Error: iss.Err().Error(), Kind: "compile"}
	}
	prg, err := env.Program(ast, celgo.CostLimit(resourceapi.CELSelectorExpressionMaxCost))
	if err != nil {
		return celResult{Error: err.Error(), Kind: "compile"}
	}
	out, _, err := prg.Eval(vars)
	if err != nil {
		return celResult{Error: err.Error(), Kind: "runtime"}
	}
	b, _ := json.Marshal(toTyped(out))
	return celResult{Value: b}
}

// evalSelector takes the allocator's own path: CompileCELExpression, then DeviceMatches.
func (k *k8sCEL) evalSelector(c celCase) celResult {
	d, ok := k.devices[c.Device]
	if !ok {
		return celResult{Error: "no device " + c.Device, Kind: "input"}
	}
	r := dracel.GetCompiler(k.features).CompileCELExpression(c.Expr,
		dracel.Options{DisableCostEstimation: true})
	if r.Error != nil {
		return celResult{Error: r.Error.Error(), Kind: "compile"}
	}
	matches, _, err := r.DeviceMatches(context.Background(), d)
	if err != nil {
		return celResult{Error: err.Error(), Kind: "runtime"}
	}
	b, _ := json.Marshal(map[string]any{"bool": matches})
	return celResult{Value: b}
}
