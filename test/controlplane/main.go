// Command controlplane is a real Kubernetes control plane for gpuplane's tests, built from
// Kubernetes' own Go packages: one multi-call binary whose subcommands are embedded etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler (the upstream cobra commands),
// plus `up`, a supervisor that generates the plane's PKI, starts each component as its own
// process (they share process-wide globals), waits for /readyz and writes a kubeconfig, and
// `dryrun`, which sends manifests to the API server with server-side dry run.
//
// scripts/controlplane.sh is the user-facing entry point; see README.md.
package main

import (
	"fmt"
	"os"

	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = `usage: controlplane COMMAND [FLAGS]

commands:
  up --dir DIR [--with-kube-scheduler]   start a plane whose state lives in DIR; stays in the
                                         foreground and stops every component on SIGTERM
  etcd --data-dir D --client-port P --peer-port Q
  kube-apiserver FLAGS...                the upstream command
  kube-controller-manager FLAGS...       the upstream command
  kube-scheduler FLAGS...                the upstream command
  dryrun --kubeconfig K FILE...          create each object in FILE with dryRun=All and
                                         print one JSON line per object: accepted or the error
  validate --kubeconfig K --gpuplane BIN [--known FILE] [--crds DIR] PATH...
                                         compare gpuplane validate with the API server's
                                         dry run, file by file
  bench --kubeconfig K [--scheduler-name N] [--nodes 1000] [--gpus-per-node 8] [--pods 10000]
        [--run-duration D] [--timeout 10m]
                                         pods bound per second and creation-to-binding
                                         latency of the named scheduler
  version                                the Kubernetes version built in
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	switch cmd {
	case "up":
		os.Exit(runUp(args))
	case "etcd":
		os.Exit(runEtcd(args))
	case "dryrun":
		os.Exit(runDryRun(args))
	case "validate":
		os.Exit(runValidate(args))
	case "bench":
		os.Exit(runBench(args))
	case "version":
		fmt.Println(kubernetesVersion)
		os.Exit(0)
	case "kube-apiserver":
		os.Exit(runCobra(apiserver.NewAPIServerCommand(), args))
	case "kube-controller-manager":
		os.Exit(runCobra(controllermanager.NewControllerManagerCommand(), args))
	case "kube-scheduler":
		os.Exit(runCobra(scheduler.NewSchedulerCommand(), args))
	case "-h", "--help", "help":
		fmt.Print(usage)
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "controlplane: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
}

// kubernetesVersion is the version of k8s.io/kubernetes in go.mod; the build stamps it into
// component-base too (see scripts/controlplane.sh), so /version agrees.
const kubernetesVersion = "v1.35.4"
