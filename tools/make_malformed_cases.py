#!/usr/bin/env python3
"""Writes testdata/api/malformed/: one bad input per file with the diagnostic it must produce.

Each case names the message fragment it is about; this script runs `gpuplane validate` once,
checks that a diagnostic containing the fragment exists, and records that diagnostic in full
(file:line: object: field: message) as the case's expectation. A case whose fragment does not
appear is reported and not written, so a wrong expectation cannot slip in.
Usage: tools/make_malformed_cases.py build/gpuplane
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "api", "malformed")

SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: s
spec:
  driver: gpu.nvidia.com
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  nodeName: node-a
  devices:
"""
CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec: {}
---
"""
CLAIM = CLASS + """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: default
spec:
  devices:
    requests:
"""

def dev(name="gpu-0", extra=""):
    return f"  - name: {name}\n    attributes:\n      type: {{string: gpu}}\n{extra}"

def devices(n, taint_first=False):
    out = ""
    for i in range(n):
        out += f"  - name: gpu-{i}\n"
        if taint_first and i == 0:
            out += "    taints: [{key: example.com/bad, effect: NoSchedule}]\n"
    return out

def requests(n):
    return "".join(f"    - name: r{i}\n      exactly: {{deviceClassName: gpu.nvidia.com}}\n" for i in range(n))

CASES = {
  "yaml-unclosed-flow.yaml": ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: x\nspec: {}\n", "invalid YAML"),
  "yaml-bad-indentation.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n   labels: {}\n", "invalid YAML"),
  "yaml-duplicate-key.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  name: m\n", "duplicate key \"name\""),
  "yaml-tab-indentation.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n\tname: n\n", "invalid YAML"),
  "json-trailing-comma.json": ('{"apiVersion": "v1", "kind": "Node",\n "metadata": {"name": "n",}}\n', "expected a string key"),
  "json-unterminated-string.json": ('{"apiVersion": "v1", "kind": "Node",\n "metadata": {"name": "n', "unterminated string"),
  "json-duplicate-field.json": ('{"apiVersion": "v1", "kind": "Node",\n "metadata": {"name": "n"},\n "metadata": {"name": "m"}}\n', "duplicate field"),
  "json-wrong-type.json": ('{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},\n "spec": {"driver": "gpu.nvidia.com", "nodeName": "a",\n  "pool": {"name": "a", "generation": "1", "resourceSliceCount": 1}}}\n', "expected a 64-bit integer, got a string"),
  "document-not-a-map.yaml": ("- a\n- b\n", "a document must be a map"),
  "yaml-norway-bool-name.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n", "expected a string, got a boolean (n) (quote it to make it a string)"),
  "missing-kind.yaml": ("apiVersion: v1\nmetadata: {name: n}\n", "kind is missing"),
  "missing-apiversion.yaml": ("kind: Node\nmetadata: {name: n}\n", "apiVersion is missing"),
  "int-for-string.yaml": (SLICE.replace("driver: gpu.nvidia.com", "driver: 123") + dev(), "expected a string, got an integer (123)"),
  "string-for-int.yaml": (SLICE.replace("generation: 1", "generation: one") + dev(), "expected a 64-bit integer, got a string"),
  "list-for-map.yaml": (SLICE + "  - name: gpu-0\n    attributes: []\n", "expected a map, got a list"),
  "map-for-list.yaml": (SLICE.replace("  devices:\n", "  devices: {gpu-0: {}}\n"), "expected a list, got a map"),
  "string-for-bool.yaml": (SLICE.replace("nodeName: node-a", "allNodes: \"yes\"") + dev(), "expected true or false, got a string"),
  "int-out-of-range.yaml": (SLICE.replace("generation: 1", "generation: 99999999999999999999") + dev(), "out of range for a 64-bit integer"),
  "missing-driver.yaml": (SLICE.replace("  driver: gpu.nvidia.com\n", "") + dev(), "spec.driver: required field is missing"),
  "required-field-null.yaml": (SLICE.replace("driver: gpu.nvidia.com", "driver: null") + dev(), "spec.driver: required field is missing (its value is null)"),
  "missing-pool.yaml": (SLICE.replace("  pool: {name: node-a, generation: 1, resourceSliceCount: 1}\n", "") + dev(), "spec.pool: required field is missing"),
  "missing-device-name.yaml": (SLICE + "  - attributes: {type: {string: gpu}}\n", "spec.devices[0].name: required field is missing"),
  "missing-object-name.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  labels: {a: b}\n", "metadata.name: required field is missing"),
  "slice-two-node-selections.yaml": (SLICE.replace("nodeName: node-a", "nodeName: node-a\n  allNodes: true") + dev(), "exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection must be set, found 2"),
  "slice-no-node-selection.yaml": (SLICE.replace("  nodeName: node-a\n", "") + dev(), "must be set, found 0"),
  "attribute-two-values.yaml": (SLICE + "  - name: gpu-0\n    attributes:\n      index: {int: 1, string: one}\n", "exactly one of int, bool, string, version must be set, found 2"),
  "attribute-no-value.yaml": (SLICE + "  - name: gpu-0\n    attributes:\n      index: {}\n", "exactly one of int, bool, string, version must be set, found 0"),
  "string-attribute-too-long.yaml": (SLICE + dev() + dev("gpu-1") + dev("gpu-2") + "  - name: gpu-3\n    attributes:\n      gpu.nvidia.com/productName: {string: " + "X" * 65 + "}\n", "value longer than 64 characters"),
  "version-not-semver.yaml": (SLICE + "  - name: gpu-0\n    attributes:\n      driverVersion: {version: \"550.54\"}\n", "is not a semantic version"),
  "duplicate-device-in-slice.yaml": (SLICE + dev() + dev(), "duplicate device name \"gpu-0\""),
  "duplicate-device-in-pool.yaml": (SLICE.replace("resourceSliceCount: 1", "resourceSliceCount: 2") + dev() + "---\n" + SLICE.replace("name: s", "name: s2").replace("resourceSliceCount: 1", "resourceSliceCount: 2") + dev(), "in pool \"node-a\""),
  "too-many-devices.yaml": (SLICE + devices(129), "must have at most 128 entries, has 129"),
  "too-many-devices-with-taints.yaml": (SLICE + devices(65, True), "at most 64 entries when a device has taints or consumes counters, has 65"),
  "too-many-attributes.yaml": (SLICE + "  - name: gpu-0\n    attributes:\n" + "".join(f"      a{i}: {{int: {i}}}\n" for i in range(33)), "at most 32 attributes and capacities combined, has 33"),
  "too-many-counter-sets.yaml": (SLICE.replace("  devices:\n", "  sharedCounters:\n") + "".join(f"  - name: set-{i}\n    counters: {{c: {{value: 1}}}}\n" for i in range(9)), "must have at most 8 entries, has 9"),
  "too-many-taints.yaml": (SLICE + "  - name: gpu-0\n    taints:\n" + "".join(f"    - {{key: k{i}, effect: NoSchedule}}\n" for i in range(17)), "must have at most 16 entries, has 17"),
  "devices-and-counters-in-one-slice.yaml": (SLICE.replace("  devices:\n", "  sharedCounters:\n  - name: gpu-0-counter-set\n    counters: {memory: {value: 80Gi}}\n  devices:\n") + dev(), "devices and sharedCounters may not be in the same ResourceSlice"),
  "counter-set-not-in-pool.yaml": (SLICE + "  - name: gpu-0\n    consumesCounters:\n    - counterSet: gpu-9-counter-set\n      counters: {memory: {value: 1Gi}}\n", "counter set \"gpu-9-counter-set\" is not defined in pool \"node-a\""),
  "bad-quantity-two-dots.yaml": (SLICE + "  - name: gpu-0\n    capacity:\n      memory: {value: 1.5.3Gi}\n", "bad quantity \"1.5.3Gi\""),
  "bad-quantity-suffix.yaml": (SLICE + "  - name: gpu-0\n    capacity:\n      memory: {value: 10Qi}\n", "bad quantity \"10Qi\""),
  "bad-quantity-empty.yaml": (SLICE + "  - name: gpu-0\n    capacity:\n      memory: {value: \"\"}\n", "quantity is empty"),
  "bad-quantity-out-of-range.yaml": (SLICE + "  - name: gpu-0\n    capacity:\n      memory: {value: 9999999999999999999Ei}\n", "quantity out of range"),
  "bad-device-name.yaml": (SLICE + dev("GPU_0"), "\"GPU_0\" is not a DNS label"),
  "bad-attribute-name.yaml": (SLICE + "  - name: gpu-0\n    attributes:\n      gpu.nvidia.com/1bad: {int: 1}\n", "is not a qualified name"),
  "bad-driver-name.yaml": (SLICE.replace("driver: gpu.nvidia.com", "driver: Bad_Driver") + dev(), "is not a DNS subdomain"),
  "bad-taint-effect.yaml": (SLICE + "  - name: gpu-0\n    taints: [{key: k, effect: Sometimes}]\n", "\"Sometimes\" is not a taint effect"),
  "bad-label-value.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {zone: -bad-}\n", "is not a valid label value"),
  "namespace-on-cluster-scoped.yaml": ("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  namespace: default\n", "this kind is cluster-scoped"),
  "duplicate-object.yaml": ("apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n", "duplicate object"),
  "request-exactly-and-first-available.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n      firstAvailable: [{name: a, deviceClassName: gpu.nvidia.com}]\n", "exactly one of exactly, firstAvailable must be set, found 2"),
  "request-neither.yaml": (CLAIM + "    - name: gpu\n", "exactly one of exactly, firstAvailable must be set, found 0"),
  "too-many-requests.yaml": (CLAIM + requests(33), "must have at most 32 entries, has 33"),
  "too-many-subrequests.yaml": (CLAIM + "    - name: gpu\n      firstAvailable:\n" + "".join(f"      - {{name: s{i}, deviceClassName: gpu.nvidia.com}}\n" for i in range(9)), "must have at most 8 entries, has 9"),
  "duplicate-request-name.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}\n", "duplicate request name \"gpu\""),
  "unknown-device-class.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.co}\n", "DeviceClass \"gpu.nvidia.co\" is not defined in the inputs"),
  "bad-allocation-mode.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: Some}\n", "\"Some\" is not ExactCount or All"),
  "count-with-all.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}\n", "must not be set when allocationMode is All"),
  "count-zero.yaml": (CLAIM + "    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com, count: 0}\n", "must be greater than zero"),
  "constraint-match-and-distinct.yaml": (CLAIM + requests(1) + "    constraints:\n    - {matchAttribute: gpu.nvidia.com/a, distinctAttribute: gpu.nvidia.com/b}\n", "exactly one of matchAttribute, distinctAttribute must be set, found 2"),
  "constraint-unknown-request.yaml": (CLAIM + requests(1) + "    constraints:\n    - {requests: [r0, nope], matchAttribute: gpu.nvidia.com/a}\n", "\"nope\" names no request of this claim"),
  "constraint-unqualified-attribute.yaml": (CLAIM + requests(1) + "    constraints:\n    - {matchAttribute: nvlinkDomain}\n", "must include the domain"),
  "cel-too-long.yaml": (CLAIM + "    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        selectors:\n        - cel: {expression: \"" + "true && " * 1280 + "true\"}\n", "CEL expression longer than 10240 bytes"),
  "pod-two-claim-sources.yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  resourceClaims:\n  - {name: gpu, resourceClaimName: a, resourceClaimTemplateName: b}\n  containers: [{name: c}]\n", "exactly one of resourceClaimName, resourceClaimTemplateName must be set, found 2"),
  "pod-no-containers.yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  schedulerName: gpuplane\n", "at least one container is required"),
  "pod-unknown-claim-reference.yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n  - name: c\n    resources:\n      claims: [{name: gpu}]\n", "\"gpu\" is not in spec.resourceClaims"),
  "podgroup-min-member-zero.yaml": ("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: default}\nspec:\n  minMember: 0\n", "must be at least 1"),
  "v1beta1-device-without-basic.yaml": (SLICE.replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1") + "  - name: gpu-0\n", "spec.devices[0].basic: required field is missing"),
  "bad-resource-request.yaml": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n  - name: c\n    resources:\n      requests: {cpu: 2 cores}\n", "bad quantity \"2 cores\""),
}

def main():
    binary = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    ok = True
    for name, (text, fragment) in sorted(CASES.items()):
        path = os.path.join(OUT, name)
        is_json = name.endswith(".json")
        body = text if is_json else "# expect: PLACEHOLDER\n" + text
        with open(path, "w") as f:
            f.write(body)
        rel = os.path.relpath(path, ROOT)
        res = subprocess.run([binary, "validate", "--quiet", rel], cwd=ROOT, capture_output=True, text=True)
        lines = [l for l in res.stdout.splitlines() if fragment in l and "warning:" not in l]
        if res.returncode != 1 or not lines:
            print(f"{name}: fragment not found (exit {res.returncode}):\n{res.stdout}{res.stderr}")
            os.remove(path)
            ok = False
            continue
        expect = lines[0][len(os.path.dirname(rel)) + 1:]
        if is_json:
            with open(path + ".expect", "w") as f:
                f.write(expect + "\n")
        else:
            with open(path, "w") as f:
                f.write(f"# expect: {expect}\n" + text)
    print(f"{len(CASES)} cases")
    sys.exit(0 if ok else 1)

main()
