package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// featureGates turns on every DRA feature and the Workload API on every component.
const featureGates = "DynamicResourceAllocation=true,DRAPrioritizedList=true,DRAAdminAccess=true," +
	"DRAPartitionableDevices=true,DRAConsumableCapacity=true,DRADeviceTaints=true," +
	"DRADeviceTaintRules=true,DRAExtendedResource=true,DRAResourceClaimDeviceStatus=true," +
	"DRADeviceBindingConditions=true,GenericWorkload=true,GangScheduling=true"

// runtimeConfig serves the alpha Workload API, DeviceTaintRules and the older resource versions.
const runtimeConfig = "scheduling.k8s.io/v1alpha1=true,resource.k8s.io/v1alpha3=true," +
	"resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"

// plane is the supervisor's state: where everything lives and the components it runs.
type plane struct {
	dir                string
	pki                *pki
	token, viewerToken string
	etcdPort, peerPort int
	apiPort            int
	withScheduler      bool
	children           map[string]*exec.Cmd
	exited             chan exitEvent
	self               string
	logger             *log.Logger
}

type exitEvent struct {
	name string
	cmd  *exec.Cmd
	err  error
}

// runUp starts a plane under --dir and supervises it until SIGTERM or SIGINT. SIGUSR1
// restarts kube-apiserver on the same port (for tests of watch resumption).
func runUp(args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	dir := fs.String("dir", "", "folder for the plane's state, logs and kubeconfig (required)")
	withScheduler := fs.Bool("with-kube-scheduler", false, "also run kube-scheduler")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "up: --dir is required")
		return 2
	}
	// Children get SIGTERM when the thread that started them dies: keep them on this thread.
	runtime.LockOSThread()
	p, err := newPlane(*dir, *withScheduler)
	if err != nil {
		fmt.Fprintf(os.Stderr, "up: %v\n", err)
		return 1
	}
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	if err := p.start(); err != nil {
		p.logger.Printf("start failed: %v", err)
		fmt.Fprintf(os.Stderr, "up: %v (logs in %s)\n", err, filepath.Join(p.dir, "logs"))
		p.stopAll()
		return 1
	}
	if err := os.WriteFile(filepath.Join(p.dir, "ready"), []byte(p.url()+"\n"), 0o644); err != nil {
		p.logger.Printf("cannot write ready file: %v", err)
	}
	return p.supervise(sig)
}

func newPlane(dir string, withScheduler bool) (*plane, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, sub := range []string{"logs", "pids"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o755); err != nil {
			return nil, err
		}
	}
	_ = os.Remove(filepath.Join(abs, "ready"))
	if err := os.RemoveAll(filepath.Join(abs, "etcd")); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(abs, "logs", "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	p := &plane{dir: abs, pki: newPKI(filepath.Join(abs, "pki")), token: randomToken(),
		viewerToken: randomToken(), etcdPort: ports[0], peerPort: ports[1], apiPort: ports[2],
		withScheduler: withScheduler, children: map[string]*exec.Cmd{},
		exited: make(chan exitEvent, 8), self: self,
		logger: log.New(logFile, "", log.LstdFlags|log.Lmicroseconds)}
	if err := p.pki.generate(); err != nil {
		return nil, fmt.Errorf("generating the plane's certificates in %s: %w", p.pki.dir, err)
	}
	// An admin (system:masters) and a user with no permissions, for RBAC tests.
	tokens := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n%s,viewer,viewer\n", p.token, p.viewerToken)
	if err := os.WriteFile(filepath.Join(p.pki.dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *plane) url() string { return fmt.Sprintf("https://127.0.0.1:%d", p.apiPort) }

func (p *plane) start() error {
	if err := p.spawn("etcd", "--data-dir", filepath.Join(p.dir, "etcd"),
		"--client-port", strconv.Itoa(p.etcdPort), "--peer-port", strconv.Itoa(p.peerPort)); err != nil {
		return err
	}
	etcdHealth := fmt.Sprintf("http://127.0.0.1:%d/health", p.etcdPort)
	if err := p.waitHTTP("etcd", http.DefaultClient, etcdHealth, "", 60*time.Second); err != nil {
		return err
	}
	if err := p.startAPIServer(); err != nil {
		return err
	}
	if err := p.writeKubeconfigs(); err != nil {
		return err
	}
	kubeconfig := filepath.Join(p.dir, "kubeconfig")
	if err := p.spawn("kube-controller-manager", "--kubeconfig", kubeconfig,
		"--controllers=resourceclaim-controller,garbage-collector-controller",
		"--leader-elect=false", "--secure-port=0", "--feature-gates="+featureGates,
		"--kube-api-qps=1000", "--kube-api-burst=2000"); err != nil {
		return err
	}
	if p.withScheduler {
		// Client rate limits raised on every component: benchmarks measure schedulers, not
		// client-side throttling.
		if err := p.spawn("kube-scheduler", "--kubeconfig", kubeconfig, "--leader-elect=false",
			"--secure-port=0", "--feature-gates="+featureGates,
			"--kube-api-qps=1000", "--kube-api-burst=2000"); err != nil {
			return err
		}
	}
	return nil
}

func (p *plane) startAPIServer() error {
	k := p.pki
	if err := p.spawn("kube-apiserver",
		"--etcd-servers="+fmt.Sprintf("http://127.0.0.1:%d", p.etcdPort),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(p.apiPort), "--cert-dir="+k.dir,
		"--tls-cert-file="+k.serverCert, "--tls-private-key-file="+k.serverKey,
		"--client-ca-file="+k.caCert,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+k.saPublic,
		"--service-account-signing-key-file="+k.saPrivate,
		"--token-auth-file="+filepath.Join(k.dir, "tokens.csv"),
		"--authorization-mode=RBAC", "--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000",
		"--feature-gates="+featureGates, "--runtime-config="+runtimeConfig); err != nil {
		return err
	}
	client, err := p.httpsClient()
	if err != nil {
		return err
	}
	return p.waitHTTP("kube-apiserver", client, p.url()+"/readyz", p.token, 180*time.Second)
}

// spawn starts this binary's subcommand name as a child with its output in logs/NAME.log.
func (p *plane) spawn(name string, args ...string) error {
	out, err := os.OpenFile(filepath.Join(p.dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.self, append([]string{name}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p.children[name] = cmd
	pidFile := filepath.Join(p.dir, "pids", name+".pid")
	_ = os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	p.logger.Printf("started %s pid %d", name, cmd.Process.Pid)
	go func() {
		err := cmd.Wait()
		out.Close()
		p.exited <- exitEvent{name, cmd, err}
	}()
	return nil
}

// waitHTTP polls url until it answers 200, a child exits, or the timeout passes.
func (p *plane) waitHTTP(name string, client *http.Client, url, token string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case ev := <-p.exited:
			return fmt.Errorf("%s exited while waiting for %s: %v (see logs/%s.log)", ev.name, name, ev.err, ev.name)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				cancel()
				p.logger.Printf("%s ready", name)
				return nil
			}
		}
		cancel()
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready at %s after %s (see logs/%s.log)", name, url, timeout, name)
}

func (p *plane) httpsClient() (*http.Client, error) {
	pem, err := os.ReadFile(p.pki.caCert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in " + p.pki.caCert)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

// supervise waits for signals and child exits. A core component (etcd, kube-apiserver)
// exiting on its own stops the plane with status 1.
func (p *plane) supervise(sig chan os.Signal) int {
	for {
		select {
		case s := <-sig:
			if s == syscall.SIGUSR1 {
				if err := p.restartAPIServer(); err != nil {
					p.logger.Printf("restarting kube-apiserver failed: %v", err)
					p.stopAll()
					return 1
				}
				continue
			}
			p.logger.Printf("%v: stopping", s)
			p.stopAll()
			return 0
		case ev := <-p.exited:
			if p.children[ev.name] != ev.cmd {
				continue // an exit we caused
			}
			delete(p.children, ev.name)
			p.logger.Printf("%s exited on its own: %v", ev.name, ev.err)
			if ev.name == "etcd" || ev.name == "kube-apiserver" {
				p.stopAll()
				return 1
			}
		}
	}
}

func (p *plane) restartAPIServer() error {
	p.logger.Printf("restarting kube-apiserver")
	_ = os.Remove(filepath.Join(p.dir, "ready"))
	p.stop("kube-apiserver", 5*time.Second)
	if err := p.startAPIServer(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.dir, "ready"), []byte(p.url()+"\n"), 0o644)
}

// stopAll stops the components in the reverse order of their start.
func (p *plane) stopAll() {
	for _, name := range []string{"kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		p.stop(name, 15*time.Second)
	}
	_ = os.Remove(filepath.Join(p.dir, "ready"))
}

// stop sends SIGTERM to a child and waits up to grace, then kills it.
func (p *plane) stop(name string, grace time.Duration) {
	cmd, ok := p.children[name]
	if !ok {
		return
	}
	delete(p.children, name)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	timeout := time.After(grace)
	for {
		select {
		case ev := <-p.exited:
			if ev.cmd == cmd {
				_ = os.Remove(filepath.Join(p.dir, "pids", name+".pid"))
				p.logger.Printf("stopped %s", name)
				return
			}
			if p.children[ev.name] == ev.cmd {
				delete(p.children, ev.name)
			}
		case <-timeout:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			timeout = time.After(5 * time.Second)
		}
	}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// writeKubeconfigs writes DIR/kubeconfig (admin bearer token), DIR/kubeconfig-cert (admin
// client certificate) and DIR/kubeconfig-viewer (a user without permissions).
func (p *plane) writeKubeconfigs() error {
	users := map[string]string{
		"kubeconfig":        fmt.Sprintf("    token: %s\n", p.token),
		"kubeconfig-viewer": fmt.Sprintf("    token: %s\n", p.viewerToken),
		"kubeconfig-cert": fmt.Sprintf("    client-certificate: %s\n    client-key: %s\n",
			p.pki.adminCert, p.pki.adminKey),
	}
	for file, user := range users {
		text := strings.Join([]string{
			"apiVersion: v1", "kind: Config", "clusters:", "- name: gpuplane-test", "  cluster:",
			"    server: " + p.url(), "    certificate-authority: " + p.pki.caCert,
			"users:", "- name: user", "  user:", strings.TrimSuffix(user, "\n"),
			"contexts:", "- name: gpuplane-test", "  context:", "    cluster: gpuplane-test",
			"    user: user", "current-context: gpuplane-test", ""}, "\n")
		if err := os.WriteFile(filepath.Join(p.dir, file), []byte(text), 0o600); err != nil {
			return err
		}
	}
	return nil
}
