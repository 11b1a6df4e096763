// More of the DRA CEL surface for the random selectors: doubles and uints with cross-type
// comparisons, iteration over an attribute domain (a map), map literals, quantity and semver
// accessors, strings functions with offsets and limits, bytes, type values, optionals.
package main

import "fmt"

const attrs = "device.attributes[\"" + genDriver + "\"]"

func (g *gen) moreBool(d int) string {
	switch g.r.Intn(16) {
	case 0:
		return fmt.Sprintf("%s %s %s", g.dblExpr(d), g.pick([]string{"==", "!=", "<", ">=", ">"}), g.pick([]string{g.dblExpr(d), g.intExpr(d), g.uintExpr(d)}))
	case 1:
		return fmt.Sprintf("%s %s %s", g.uintExpr(d), g.pick([]string{"==", "<", ">="}), g.pick([]string{g.uintExpr(d), g.intExpr(d)}))
	case 2:
		k := g.fresh()
		return fmt.Sprintf("%s.%s(%s, %s)", attrs, g.pick([]string{"all", "exists", "exists_one"}), k,
			g.withVar(k, func() string { return fmt.Sprintf("%s.size() %s %d", k, g.pick([]string{">", "<", "=="}), g.r.Intn(8)) }))
	case 3:
		k, v := g.fresh(), g.fresh()
		return fmt.Sprintf("%s.exists(%s, %s, %s.startsWith(%q) && %s)", attrs, k, v, k, g.pick([]string{"m", "i", "d", ""}), g.boolExpr(0))
	case 4:
		return fmt.Sprintf("size(%s) %s %d", g.pick([]string{attrs, "device.capacity[\"" + genDriver + "\"]", "device.attributes[\"other.io\"]"}), g.pick([]string{"==", ">", "<"}), g.r.Intn(7))
	case 5:
		return fmt.Sprintf("%s in %s", g.strExpr(d), g.strMap(d))
	case 6:
		// isInteger and asInteger only on parsed quantities: on sums Kubernetes answers by
		// representation (3000m is no integer to it; docs/TESTING.md).
		return fmt.Sprintf("%s.isInteger()", g.quantity(0))
	case 7:
		return fmt.Sprintf("sign(%s) %s 0", g.quantity(d), g.pick([]string{"==", ">", "<"}))
	case 8:
		return fmt.Sprintf("isSemver(%s, %s)", g.strExpr(0), g.pick([]string{"true", "false"}))
	case 9:
		return fmt.Sprintf("semver(%q, true).%s(semver(%q))", g.pick([]string{"v1.2", "1", "01.2.3", "1.2.3"}), g.pick([]string{"isLessThan", "isGreaterThan"}), g.pick(genVersions))
	case 10:
		return fmt.Sprintf("bytes(%s) %s %s", g.strExpr(d), g.pick([]string{"<", "==", ">="}), g.pick([]string{"b'abc'", "b''", "b'\\xff'", "bytes(" + g.strExpr(d) + ")"}))
	case 11:
		return fmt.Sprintf("type(%s) == %s", g.pick([]string{g.intExpr(d), g.strExpr(d), g.attr("model"), g.attr("index"), g.dblExpr(d)}), g.pick([]string{"int", "string", "double", "bool", "uint"}))
	case 12:
		return fmt.Sprintf("optional.ofNonZeroValue(%s).hasValue()", g.pick([]string{g.intExpr(d), g.strExpr(d), "[]", "{}"}))
	case 13:
		return fmt.Sprintf("matches(%s, %q)", g.strExpr(d), g.pick(genPatterns))
	case 14:
		k, v := g.fresh(), g.fresh()
		return fmt.Sprintf("%s.transformMap(%s, %s, %s).size() %s %d", g.strMap(d), k, v,
			g.withVar(v, func() string { return g.intExpr(d) }), g.pick([]string{"==", ">"}), g.r.Intn(4))
	}
	return fmt.Sprintf("%s.?%s.orValue(%s) %s", attrs, g.pick([]string{"model", "nope", "index"}), g.pick([]string{"''", "0", "false"}), g.pick([]string{"== ''", "!= 0", "== false"}))
}

func (g *gen) moreInt(d int) string {
	switch g.r.Intn(10) {
	case 0:
		return fmt.Sprintf("%s.indexOf(%s, %s)", g.strExpr(d), g.strExpr(d), g.intExpr(0))
	case 1:
		return fmt.Sprintf("%s.lastIndexOf(%s)", g.strExpr(d), g.strExpr(d))
	case 2:
		return fmt.Sprintf("%s.split(%s, %s).size()", g.strExpr(d), quote(g.pick([]string{",", "", "a"})), g.intExpr(0))
	case 3:
		return fmt.Sprintf("%s.substring(%s, %s).size()", g.strExpr(d), g.intExpr(0), g.intExpr(0))
	case 4:
		return fmt.Sprintf("%s.replace(%s, %s, %s).size()", g.strExpr(d), g.strExpr(0), g.strExpr(0), g.intExpr(0))
	case 5:
		return fmt.Sprintf("%s.asInteger()", g.quantity(0))
	case 6:
		return fmt.Sprintf("int(%s)", g.pick([]string{g.dblExpr(d), g.uintExpr(d)}))
	case 7:
		return fmt.Sprintf("%s.orValue(%s)", g.pick([]string{"[1, 2][?" + g.intExpr(0) + "]", "{'a': 1}[?" + g.strExpr(0) + "]", "optional.none()"}), g.intExpr(0))
	case 8:
		return fmt.Sprintf("%s[%s]", g.intMap(d), g.strExpr(0))
	}
	return fmt.Sprintf("size(%s)", g.pick([]string{g.strMap(d), g.intMap(d), attrs}))
}

func (g *gen) dblExpr(d int) string {
	if d <= 0 || g.r.Intn(3) == 0 {
		return g.pick([]string{"1.5", "-0.0", "0.1", "1e300", "-2.5e-3", "double('NaN')", "double('Infinity')", "double(" + g.attr("index") + ")"})
	}
	d--
	switch g.r.Intn(5) {
	case 0:
		return fmt.Sprintf("(%s %s %s)", g.dblExpr(d), g.pick([]string{"+", "-", "*", "/"}), g.dblExpr(d))
	case 1:
		return fmt.Sprintf("double(%s)", g.pick([]string{g.intExpr(d), g.uintExpr(d), g.strExpr(0)}))
	case 2:
		return fmt.Sprintf("%s.asApproximateFloat()", g.quantity(d))
	case 3:
		return fmt.Sprintf("-%s", g.dblExpr(d))
	}
	return fmt.Sprintf("(%s ? %s : %s)", g.boolExpr(0), g.dblExpr(d), g.dblExpr(d))
}

func (g *gen) uintExpr(d int) string {
	if d <= 0 || g.r.Intn(3) == 0 {
		return g.pick([]string{"0u", "1u", "18446744073709551615u", "9223372036854775808u", "uint(" + g.attr("memoryGiB") + ")"})
	}
	d--
	switch g.r.Intn(3) {
	case 0:
		return fmt.Sprintf("(%s %s %s)", g.uintExpr(d), g.pick([]string{"+", "-", "*", "/", "%"}), g.uintExpr(d))
	case 1:
		return fmt.Sprintf("uint(%s)", g.pick([]string{g.intExpr(d), g.dblExpr(d)}))
	}
	return fmt.Sprintf("(%s ? %s : %s)", g.boolExpr(0), g.uintExpr(d), g.uintExpr(d))
}

func (g *gen) strMap(d int) string {
	if g.r.Intn(3) == 0 {
		return attrs
	}
	return fmt.Sprintf("{%s: %s, %s: %s}", quote(g.pick([]string{"a", "model", "H100"})), g.intExpr(0), quote(g.pick([]string{"b", "mig"})), g.intExpr(0))
}

func (g *gen) intMap(d int) string {
	return fmt.Sprintf("{%q: %s, %q: %s}", g.pick([]string{"a", "H100", ""}), g.intExpr(d), g.pick([]string{"b", "gpu"}), g.intExpr(0))
}
