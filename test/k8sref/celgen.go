// Random devices and random well-typed selector expressions over `device` and the libraries
// of Kubernetes' DRA CEL environment that gpuplane implements (strings, lists, sets, regex,
// quantity, semver, optional, two-variable comprehensions, cel.bind, format).
package main

import (
	"fmt"
	"math/rand"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"
)

const genDriver = "gpu.example.com"

var (
	genModels   = []string{"H100", "H200", "A100", "B200", "T4", "h100", "A100 80GB", ""}
	genStrings  = []string{"", "a", "H", "100", "H100", "gpu", "a,b,c", " x ", "é", "%", "a.b", "GPU-1"}
	genVersions = []string{"1.2.3", "535.104.5", "12.0.0", "0.0.1", "2.1.0-rc.1"}
	genQuantity = []string{"0", "1", "40Gi", "80Gi", "141Gi", "1500m", "1k", "1e3", "512Mi", "2"}
	genPatterns = []string{"^H", "100$", "^[A-Z]+[0-9]+$", "a|b", ".*", "^$", "(?i)h100"}
)

// genDevices makes n devices of one driver with attributes of every kind, some missing.
func genDevices(r *rand.Rand, n int) ([]resourceapi.Device, map[string]dracel.Device) {
	var api []resourceapi.Device
	devs := map[string]dracel.Device{}
	for i := 0; i < n; i++ {
		attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
		put := func(name string, a resourceapi.DeviceAttribute) {
			if r.Intn(6) > 0 {
				attrs[resourceapi.QualifiedName(name)] = a
			}
		}
		put("model", resourceapi.DeviceAttribute{StringValue: ptr.To(genModels[r.Intn(len(genModels))])})
		put("index", resourceapi.DeviceAttribute{IntValue: ptr.To(int64(r.Intn(10) - 1))})
		put("memoryGiB", resourceapi.DeviceAttribute{IntValue: ptr.To([]int64{16, 40, 80, 141, 180, 0}[r.Intn(6)])})
		put("mig", resourceapi.DeviceAttribute{BoolValue: ptr.To(r.Intn(2) == 0)})
		put("driverVersion", resourceapi.DeviceAttribute{VersionValue: ptr.To(genVersions[r.Intn(len(genVersions))])})
		put("topo.example.com/nvlink", resourceapi.DeviceAttribute{StringValue: ptr.To(fmt.Sprintf("nvl-%d", r.Intn(3)))})
		capacity := map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}
		if r.Intn(6) > 0 {
			capacity["memory"] = resourceapi.DeviceCapacity{Value: resource.MustParse(genQuantity[2+r.Intn(3)])}
		}
		if r.Intn(3) > 0 {
			capacity["cores"] = resourceapi.DeviceCapacity{Value: resource.MustParse(genQuantity[r.Intn(len(genQuantity))])}
		}
		name := fmt.Sprintf("gpu-%d", i)
		multi := ptr.To(r.Intn(2) == 0)
		api = append(api, resourceapi.Device{Name: name, Attributes: attrs, Capacity: capacity,
			AllowMultipleAllocations: multi})
		devs[name] = dracel.Device{Driver: genDriver, Attributes: attrs, Capacity: capacity,
			AllowMultipleAllocations: multi}
	}
	return api, devs
}

type gen struct {
	r    *rand.Rand
	vars []string // comprehension and bind variables in scope, all ints
	next int
}

func (g *gen) pick(opts []string) string { return opts[g.r.Intn(len(opts))] }

func (g *gen) attr(name string) string {
	switch g.r.Intn(3) {
	case 0:
		return fmt.Sprintf("device.attributes[%q].%s", genDriver, name)
	case 1:
		return fmt.Sprintf("device.attributes[%q][%q]", genDriver, name)
	}
	return fmt.Sprintf("cel.bind(a, device.attributes[%q], a.%s)", genDriver, name)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// boolExpr is a selector: the top level of every generated case.
func (g *gen) boolExpr(d int) string {
	if d <= 0 {
		return g.pick([]string{"true", "false", g.attr("mig"), "device.allowMultipleAllocations"})
	}
	d--
	if g.r.Intn(3) == 0 {
		return g.moreBool(d)
	}
	switch g.r.Intn(22) {
	case 0:
		return fmt.Sprintf("%s %s %s", g.intExpr(d), g.pick([]string{"==", "!=", "<", "<=", ">", ">="}), g.intExpr(d))
	case 1:
		return fmt.Sprintf("%s %s %s", g.strExpr(d), g.pick([]string{"==", "!=", "<", ">="}), g.strExpr(d))
	case 2:
		return fmt.Sprintf("%s.%s(%s)", g.strExpr(d), g.pick([]string{"startsWith", "endsWith", "contains"}), g.strExpr(d))
	case 3:
		return fmt.Sprintf("%s.matches(%q)", g.strExpr(d), g.pick(genPatterns))
	case 4:
		return fmt.Sprintf("(%s %s %s)", g.boolExpr(d), g.pick([]string{"&&", "||"}), g.boolExpr(d))
	case 5:
		return fmt.Sprintf("!(%s)", g.boolExpr(d))
	case 6:
		return fmt.Sprintf("(%s ? %s : %s)", g.boolExpr(d), g.boolExpr(d), g.boolExpr(d))
	case 7:
		return fmt.Sprintf("%q in device.attributes[%q]", g.pick([]string{"model", "mig", "nope", "index"}), g.pick([]string{genDriver, "topo.example.com", "other.io"}))
	case 8:
		return fmt.Sprintf("has(device.attributes[%q].%s)", g.pick([]string{genDriver, "topo.example.com"}), g.pick([]string{"model", "nvlink", "mig"}))
	case 9:
		return fmt.Sprintf("%s.compareTo(%s) %s 0", g.quantity(d), g.quantity(d), g.pick([]string{"<", "==", ">="}))
	case 10:
		return fmt.Sprintf("%s.%s(%s)", g.quantity(d), g.pick([]string{"isLessThan", "isGreaterThan"}), g.quantity(d))
	case 11:
		return fmt.Sprintf("%s.%s(%s)", g.semver(), g.pick([]string{"isLessThan", "isGreaterThan"}), g.semver())
	case 12:
		return fmt.Sprintf("%s.compareTo(%s) %s 0", g.semver(), g.semver(), g.pick([]string{"<", "==", ">"}))
	case 13:
		v := g.fresh()
		return fmt.Sprintf("%s.%s(%s, %s)", g.intList(d), g.pick([]string{"all", "exists", "exists_one"}), v, g.withVar(v, func() string { return g.boolExpr(d) }))
	case 14:
		i, v := g.fresh(), g.fresh()
		return fmt.Sprintf("%s.%s(%s, %s, %s)", g.intList(d), g.pick([]string{"all", "exists", "existsOne"}), i, v,
			g.withVar(i, func() string { return g.withVar(v, func() string { return g.boolExpr(d) }) }))
	case 15:
		// Plain strings only: gpuplane's quantities stop at a magnitude of 2^63-1 where
		// Kubernetes' go on (docs/TESTING.md), and computed strings of digits reach that.
		return fmt.Sprintf("%s(%s)", g.pick([]string{"isSemver", "isQuantity"}), g.strExpr(0))
	case 16:
		return fmt.Sprintf("sets.%s(%s, %s)", g.pick([]string{"contains", "intersects", "equivalent"}), g.intList(d), g.intList(d))
	case 17:
		return fmt.Sprintf("%s.isSorted()", g.intList(d))
	case 18:
		return fmt.Sprintf("%s in %s", g.intExpr(d), g.intList(d))
	case 19:
		return fmt.Sprintf("%s in %s", g.strExpr(d), g.strList(d))
	case 20:
		return fmt.Sprintf("%s.optMap(x, x > 2).orValue(%s)", g.pick([]string{"optional.of(3)", "optional.none()", "[1, 5][?1]", fmt.Sprintf("device.attributes[%q].?index", genDriver)}), g.boolExpr(0))
	}
	return fmt.Sprintf("%s == %s", g.strExpr(d), g.format(d))
}

// fresh names a new comprehension variable; now and then it reuses one in scope, so
// shadowing and duplicate names get tested too.
func (g *gen) fresh() string {
	if len(g.vars) > 0 && g.r.Intn(20) == 0 {
		return g.vars[g.r.Intn(len(g.vars))]
	}
	g.next++
	return fmt.Sprintf("v%d", g.next)
}

func (g *gen) withVar(v string, f func() string) string {
	g.vars = append(g.vars, v)
	defer func() { g.vars = g.vars[:len(g.vars)-1] }()
	return f()
}

func (g *gen) intExpr(d int) string {
	if d <= 0 || g.r.Intn(4) == 0 {
		if len(g.vars) > 0 && g.r.Intn(2) == 0 {
			return g.vars[g.r.Intn(len(g.vars))]
		}
		switch g.r.Intn(5) {
		case 0:
			return g.attr(g.pick([]string{"index", "memoryGiB"}))
		case 1:
			return g.pick([]string{"9223372036854775807", "-9223372036854775808", "4611686018427387904"})
		}
		return fmt.Sprint(g.r.Intn(21) - 5)
	}
	d--
	if g.r.Intn(4) == 0 {
		return g.moreInt(d)
	}
	switch g.r.Intn(12) {
	case 0, 1:
		return fmt.Sprintf("(%s %s %s)", g.intExpr(d), g.pick([]string{"+", "-", "*", "/", "%"}), g.intExpr(d))
	case 2:
		return fmt.Sprintf("size(%s)", g.strExpr(d))
	case 3:
		return fmt.Sprintf("%s.size()", g.intList(d))
	case 4:
		return fmt.Sprintf("%s.indexOf(%s)", g.strExpr(d), g.strExpr(d))
	case 5:
		return fmt.Sprintf("%s.%s()", g.intList(d), g.pick([]string{"sum", "min", "max"}))
	case 6:
		return fmt.Sprintf("%s[%s]", g.intList(d), g.intExpr(d))
	case 7:
		return fmt.Sprintf("%s.%s()", g.semver(), g.pick([]string{"major", "minor", "patch"}))
	case 8:
		return fmt.Sprintf("(%s ? %s : %s)", g.boolExpr(d), g.intExpr(d), g.intExpr(d))
	case 9:
		return fmt.Sprintf("int(%s)", g.pick([]string{g.strExpr(d), "2.5", "-2.5", "1e19", "7u"}))
	case 10:
		return fmt.Sprintf("%s.lastIndexOf(%s)", g.intList(d), g.intExpr(d))
	}
	v := g.fresh()
	return fmt.Sprintf("cel.bind(%s, %s, %s)", v, g.intExpr(d), g.withVar(v, func() string { return g.intExpr(d) }))
}

func (g *gen) strExpr(d int) string {
	if d <= 0 || g.r.Intn(4) == 0 {
		switch g.r.Intn(4) {
		case 0:
			return g.attr("model")
		case 1:
			return "device.driver"
		case 2:
			return fmt.Sprintf("device.attributes[%q].nvlink", "topo.example.com")
		}
		return quote(g.pick(genStrings))
	}
	d--
	switch g.r.Intn(11) {
	case 0:
		return fmt.Sprintf("(%s + %s)", g.strExpr(d), g.strExpr(d))
	case 1:
		return fmt.Sprintf("%s.%s()", g.strExpr(d), g.pick([]string{"lowerAscii", "upperAscii", "trim"}))
	case 2:
		return fmt.Sprintf("%s.replace(%s, %s)", g.strExpr(d), g.strExpr(d), g.strExpr(d))
	case 3:
		return fmt.Sprintf("%s.substring(%s)", g.strExpr(d), g.intExpr(d))
	case 4:
		return fmt.Sprintf("%s.charAt(%s)", g.strExpr(d), g.intExpr(d))
	case 5:
		return fmt.Sprintf("string(%s)", g.intExpr(d))
	case 6:
		return fmt.Sprintf("%s.join(%s)", g.strList(d), quote(g.pick([]string{"", ",", "-"})))
	case 7:
		return g.format(d)
	case 8:
		return fmt.Sprintf("%s.find(%q)", g.strExpr(d), g.pick(genPatterns))
	case 9:
		return fmt.Sprintf("(%s ? %s : %s)", g.boolExpr(d), g.strExpr(d), g.strExpr(d))
	}
	return fmt.Sprintf("strings.quote(%s)", g.strExpr(d))
}

func (g *gen) format(d int) string {
	switch g.r.Intn(6) {
	case 0:
		return fmt.Sprintf("%q.format([%s, %s])", g.pick([]string{"%s-%d", "%s/%x", "%s %o", "%s%b"}), g.strExpr(d), g.intExpr(d))
	case 1:
		return fmt.Sprintf("\"%%s\".format([%s])", g.pick([]string{g.intList(d), g.strList(d), "null", "true", "{'a': 1, 'b': [2.5]}", "[1.5, 'x', b'y']"}))
	case 2:
		return fmt.Sprintf("%q.format([%s])", g.pick([]string{"%f", "%.2f", "%e", "%.0f", "%.3e"}), g.pick([]string{"1.5", "-1234567.891", "0.0", "1e21", "'NaN'", "double(" + g.intExpr(d) + ")"}))
	case 3:
		return fmt.Sprintf("\"%%b %%d\".format([%s, %s])", g.boolExpr(d), g.intExpr(d))
	case 4:
		return fmt.Sprintf("\"%%X\".format([%s])", g.strExpr(d))
	}
	return fmt.Sprintf("\"%%s\".format([%s])", g.strExpr(d))
}

// literal is a list literal of 1 to most leaf items.
func (g *gen) literal(most int, item func(d int) string) string {
	items := make([]string, 1+g.r.Intn(most))
	for i := range items {
		items[i] = item(0)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func (g *gen) intList(d int) string {
	if d <= 0 || g.r.Intn(3) == 0 {
		// Never an empty literal: Kubernetes types [] by the first overload that takes it
		// ([].sort() is a list(int)) and folds `x in []` to false without evaluating x
		// (docs/TESTING.md, known Kubernetes differences); lists.range(0) is empty instead.
		return g.literal(3, g.intExpr)
	}
	d--
	switch g.r.Intn(9) {
	case 0:
		v := g.fresh()
		return fmt.Sprintf("%s.map(%s, %s)", g.intList(d), v, g.withVar(v, func() string { return g.intExpr(d) }))
	case 1:
		v := g.fresh()
		return fmt.Sprintf("%s.filter(%s, %s)", g.intList(d), v, g.withVar(v, func() string { return g.boolExpr(d) }))
	case 2:
		return fmt.Sprintf("lists.range(%d)", g.r.Intn(5)) // lists.range(0) is the empty list
	case 3:
		return fmt.Sprintf("%s.%s()", g.intList(d), g.pick([]string{"sort", "distinct", "reverse"}))
	case 4:
		return fmt.Sprintf("%s.slice(%d, %d)", g.intList(d), g.r.Intn(2), g.r.Intn(3))
	case 5:
		i, v := g.fresh(), g.fresh()
		return fmt.Sprintf("%s.transformList(%s, %s, %s)", g.intList(d), i, v,
			g.withVar(i, func() string { return g.withVar(v, func() string { return g.intExpr(d) }) }))
	case 6:
		return fmt.Sprintf("[%s, %s].flatten()", g.intList(d), g.intList(d))
	case 7:
		return fmt.Sprintf("(%s + %s)", g.intList(d), g.intList(d))
	}
	return fmt.Sprintf("%s.map(x, %s)", g.strList(d), "size(x)")
}

func (g *gen) strList(d int) string {
	if d <= 0 || g.r.Intn(3) == 0 {
		return g.literal(2, g.strExpr)
	}
	d--
	switch g.r.Intn(3) {
	case 0:
		return fmt.Sprintf("%s.split(%s)", g.strExpr(d), quote(g.pick([]string{",", "", "a"})))
	case 1:
		return fmt.Sprintf("%s.findAll(%q)", g.strExpr(d), g.pick(genPatterns))
	}
	return fmt.Sprintf("%s.sort()", g.strList(d))
}

func (g *gen) quantity(d int) string {
	switch g.r.Intn(4) {
	case 0:
		return fmt.Sprintf("device.capacity[%q].%s", genDriver, g.pick([]string{"memory", "cores"}))
	case 1:
		if d > 0 {
			return fmt.Sprintf("%s.%s(%s)", g.quantity(d-1), g.pick([]string{"add", "sub"}), g.quantity(d-1))
		}
	}
	return fmt.Sprintf("quantity(%q)", g.pick(genQuantity))
}

func (g *gen) semver() string {
	if g.r.Intn(2) == 0 {
		return g.attr("driverVersion")
	}
	return fmt.Sprintf("semver(%q)", g.pick(genVersions))
}
