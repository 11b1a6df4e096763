// Differences where Kubernetes is the one that departs from CEL's semantics. Each is listed
// with its reason in docs/TESTING.md and pinned by a gpuplane unit test; the harness reports
// them as KNOWN and does not fail on them. Anything else that differs fails the run.
package main

import (
	"strings"
)

// knownExprs are single expressions (from the conformance vectors) with the reason.
var knownExprs = map[string]string{
	"{true:1,false:2,true:3}[true]": "Kubernetes builds map literals with repeated keys " +
		"(the last wins); CEL makes a repeated key an error, as gpuplane does",
	"dyn({0:1,2:2,5:3}[dyn(b'')]) || true": "Kubernetes rejects the program while planning " +
		"(invalid qualifier type: bytes); in CEL an error operand of || is absorbed by true",
	"dyn({0:1,2:2,5:3}[dyn(b'')]) && false": "Kubernetes rejects the program while planning " +
		"(invalid qualifier type: bytes); in CEL an error operand of && is absorbed by false",
}

// knownDifference returns why a difference is a known Kubernetes departure, or "".
func knownDifference(c celCase, k8s, ours celResult) string {
	if reason, ok := knownExprs[c.Expr]; ok {
		return reason
	}
	// cel-go evaluates constant sub-expressions when Kubernetes builds the program, so one
	// that fails (int('x'), int(1e19)) rejects the whole expression, even in a branch that
	// evaluation never reaches; gpuplane evaluates as CEL specifies and reaches no error.
	if k8s.Kind == "compile" && strings.Contains(k8s.Error, "program instantiation failed") &&
		ours.Kind == "" {
		return "Kubernetes fails while folding a constant sub-expression that evaluation " +
			"never reaches"
	}
	// cel-go recovers a panic inside a function ("internal error: interface conversion: ...")
	// and ends the whole evaluation with it, so even `|| true` cannot absorb it; in CEL the
	// failing call is an error value like any other.
	if k8s.Kind == "runtime" && strings.HasPrefix(k8s.Error, "internal error:") && ours.Kind == "" {
		return "Kubernetes ends evaluation on a function's internal error (a recovered panic) " +
			"where CEL's || and && absorb errors"
	}
	return ""
}
