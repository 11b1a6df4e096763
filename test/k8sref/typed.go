// The typed-value JSON encoding shared with `gpuplane cel eval -o json` and the conformance
// vectors: {"int":"3"}, {"uint":"5"}, {"double":1.5|"NaN"|"Infinity"|"-Infinity"},
// {"string":"s"}, {"bytes_b64":"..."}, {"bool":true}, {"null":null}, {"list":[V...]},
// {"map":[[K,V]...]}, {"type":"int"}, {"optional":V|null}, {"quantity":"40Gi"},
// {"semver":"1.2.3"}.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// fromTyped turns a typed value into a CEL value.
func fromTyped(raw json.RawMessage) (ref.Val, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 {
		return nil, fmt.Errorf("a typed value is an object with one key, got %s", raw)
	}
	for key, v := range obj {
		return fromTypedKey(key, v)
	}
	return nil, nil
}

func fromTypedKey(key string, v json.RawMessage) (ref.Val, error) {
	var s string
	switch key {
	case "int", "uint":
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		if key == "int" {
			n, err := strconv.ParseInt(s, 10, 64)
			return types.Int(n), err
		}
		n, err := strconv.ParseUint(s, 10, 64)
		return types.Uint(n), err
	case "double":
		if json.Unmarshal(v, &s) == nil {
			switch s {
			case "NaN":
				return types.Double(math.NaN()), nil
			case "Infinity":
				return types.Double(math.Inf(1)), nil
			case "-Infinity":
				return types.Double(math.Inf(-1)), nil
			}
			return nil, fmt.Errorf("bad double %q", s)
		}
		var d float64
		err := json.Unmarshal(v, &d)
		return types.Double(d), err
	case "string":
		err := json.Unmarshal(v, &s)
		return types.String(s), err
	case "bytes_b64":
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		return types.Bytes(b), err
	case "bool":
		var b bool
		err := json.Unmarshal(v, &b)
		return types.Bool(b), err
	case "null":
		return types.NullValue, nil
	case "list":
		return listFromTyped(v)
	case "map":
		return mapFromTyped(v)
	}
	return nil, fmt.Errorf("typed values of kind %q are not supported as bindings", key)
}

func listFromTyped(v json.RawMessage) (ref.Val, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, err
	}
	vals := make([]ref.Val, 0, len(items))
	for _, it := range items {
		x, err := fromTyped(it)
		if err != nil {
			return nil, err
		}
		vals = append(vals, x)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, vals), nil
}

func mapFromTyped(v json.RawMessage) (ref.Val, error) {
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(v, &pairs); err != nil {
		return nil, err
	}
	m := make(map[ref.Val]ref.Val, len(pairs))
	for _, p := range pairs {
		k, err := fromTyped(p[0])
		if err != nil {
			return nil, err
		}
		x, err := fromTyped(p[1])
		if err != nil {
			return nil, err
		}
		m[k] = x
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m), nil
}

// toTyped encodes a CEL value; kinds outside the encoding become {"unsupported": type}.
func toTyped(v ref.Val) any {
	switch x := v.(type) {
	case types.Int:
		return map[string]any{"int": strconv.FormatInt(int64(x), 10)}
	case types.Uint:
		return map[string]any{"uint": strconv.FormatUint(uint64(x), 10)}
	case types.Double:
		f := float64(x)
		switch {
		case math.IsNaN(f):
			return map[string]any{"double": "NaN"}
		case math.IsInf(f, 1):
			return map[string]any{"double": "Infinity"}
		case math.IsInf(f, -1):
			return map[string]any{"double": "-Infinity"}
		}
		return map[string]any{"double": f}
	case types.String:
		return map[string]any{"string": string(x)}
	case types.Bytes:
		return map[string]any{"bytes_b64": base64.StdEncoding.EncodeToString(x)}
	case types.Bool:
		return map[string]any{"bool": bool(x)}
	case types.Null:
		return map[string]any{"null": nil}
	case *types.Optional:
		if !x.HasValue() {
			return map[string]any{"optional": nil}
		}
		return map[string]any{"optional": toTyped(x.GetValue())}
	case apiservercel.Quantity:
		return map[string]any{"quantity": x.Quantity.String()}
	case apiservercel.Semver:
		return map[string]any{"semver": x.Version.String()}
	case *types.Type:
		return map[string]any{"type": x.TypeName()}
	case traits.Mapper:
		return mapToTyped(x)
	case traits.Lister:
		items := []any{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			items = append(items, toTyped(it.Next()))
		}
		return map[string]any{"list": items}
	}
	return map[string]any{"unsupported": v.Type().TypeName()}
}

func mapToTyped(m traits.Mapper) any {
	pairs := [][2]any{}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		val, _ := m.Find(k)
		pairs = append(pairs, [2]any{toTyped(k), toTyped(val)})
	}
	return map[string]any{"map": pairs}
}

// canonical decodes a typed value to a form where equal values compare equal with
// reflect.DeepEqual: map entries sorted by their key's encoding, numbers as float64.
func canonical(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return canon(v)
}

func canon(v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range obj {
		switch k {
		case "list":
			items, _ := x.([]any)
			c := make([]any, len(items))
			for i, it := range items {
				c[i] = canon(it)
			}
			out[k] = c
		case "map":
			pairs, _ := x.([]any)
			c := make([]any, len(pairs))
			for i, p := range pairs {
				kv, _ := p.([]any)
				if len(kv) == 2 {
					c[i] = []any{canon(kv[0]), canon(kv[1])}
				}
			}
			sort.Slice(c, func(a, b int) bool {
				ka, _ := json.Marshal(c[a])
				kb, _ := json.Marshal(c[b])
				return string(ka) < string(kb)
			})
			out[k] = c
		case "optional":
			out[k] = canon(x)
		default:
			out[k] = x
		}
	}
	return out
}
