// Package framework is runlet's end-to-end test harness: a real control plane (hack/cp-up.sh, built from
// Go modules by hack/cp-build.sh), a podman service owned by the test process, and runlet processes
// started per test.
//
// Use it from a test package's TestMain:
//
//	func TestMain(m *testing.M) { framework.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := framework.Get(t)               // the control plane (client, kubeconfigs, kubectl)
//		r := framework.StartRunlet(t, framework.RunletOptions{}) // waits for node Ready; stopped at cleanup
//		ns := framework.Namespace(t)
//		pod := framework.CreatePod(t, framework.PodFor(r.NodeName, ns, "p", framework.Busybox("c", "sleep", "3600")))
//		framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, time.Minute)
//		_ = c.Client
//	}
//
// Every process the framework starts is stopped by its PID: runlets at the end of their test, the podman
// service and the control plane when Main returns (a watchdog stops the control plane if the test
// binary dies). Each test package gets its own control plane on its own ports (PORT_BASE 27000, 28000, …,
// claimed with a lock file), so packages may run in parallel.
//
// Environment knobs: RUNLET_E2E_PORT_BASE (fixed port base), RUNLET_BIN (a prebuilt runlet instead of
// `go build ./cmd/runlet`), RUNLET_E2E_KEEP=1 (keep the state dir: logs, PKI), RUNLET_CACHE / CP_BIN_DIR
// (where the control-plane binaries are, see hack/lib.sh).
package framework

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework/audit"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Names shared with runlet and hack/ (kept here so the harness does not depend on packages under test).
const (
	// BusyboxImage is built by hack/images.sh from busybox-static; no registry is needed.
	BusyboxImage = "localhost/runlet/busybox:latest"
	// NodeSelectorKey/Value and the taint are what every runlet node carries.
	NodeSelectorKey   = "type"
	NodeSelectorValue = "virtual-kubelet"
	TaintKey          = "virtual-kubelet.io/provider"
	TaintValue        = "runlet"
	// Labels runlet stamps on its backend objects (internal/runtime); LabelOwner is the node name.
	LabelPodUID        = "io.runlet.pod.uid"
	LabelManaged       = "io.runlet.managed"
	LabelOwner         = "io.runlet.owner"
	LabelContainerName = "io.runlet.container.name"
	// LabelContainerAttempt is the container's restart attempt.
	LabelContainerAttempt = "io.runlet.container.attempt"
	// DefaultPortBase is the first port base tried for the test control plane (`make run` uses 26000).
	DefaultPortBase = 27000
)

// Cluster is the control plane started by Main for one test binary.
type Cluster struct {
	RepoRoot string // the runlet checkout
	Dir      string // state dir: cp/ (pki, etcd, logs, pids), runlet builds, podman socket
	CPDir    string // CP_DIR given to hack/cp-up.sh
	PKIDir   string
	PortBase int
	Server   string // https://127.0.0.1:<PortBase+443>

	BinDir  string // control-plane binaries (etcd, kube-*, kubectl, helm)
	Kubectl string // path of the kubectl binary
	Helm    string // path of the helm binary

	AdminKubeconfig string // cluster-admin
	// BootstrapKubeconfig is runlet's bootstrap token (hack/cp-pki.sh), which may only create
	// node-client CSRs: each runlet bootstraps system:node:<its node> from it.
	BootstrapKubeconfig string
	CACert              string // cluster CA: also the --client-ca-file of runlet's kubelet endpoint
	ServingCert         string // serving cert for runlet's kubelet endpoint (IP:127.0.0.1)
	ServingKey          string

	Config *rest.Config          // admin, QPS 100, burst 200
	Client *kubernetes.Clientset // built from Config
}

var (
	cluster      *Cluster
	setupSkipped string // why Main did not start a control plane (e.g. -short)
	teardownOnce sync.Once
	portLock     *os.File
)

// Main sets up the control plane, runs the tests and tears everything down. Call it from TestMain;
// it does not return. With -short no control plane is started and every test using Get is skipped.
func Main(m *testing.M) {
	os.Exit(mainCode(m))
}

func mainCode(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		setupSkipped = "e2e tests need a control plane: skipped with -short"
		return m.Run()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		logf("got %v: tearing down", s)
		teardown(1)
		os.Exit(2)
	}()
	c, err := setup()
	if err != nil {
		logf("setup failed: %v", err)
		teardown(1)
		return 1
	}
	cluster = c
	code := m.Run()
	if code == 0 && !nodeDenials(c) {
		code = 1
	}
	teardown(code)
	return code
}

// nodeDenials reports what the apiserver refused runlet's node identity during the run, from its audit
// log: a request the Node authorizer or NodeRestriction refuses is a bug in runlet, not a right to
// grant. It returns false when there was one.
func nodeDenials(c *Cluster) bool {
	s, err := audit.Runlet(filepath.Join(c.CPDir, "logs"))
	if err != nil {
		logf("runlet's node identity: %v", err)
		return false
	}
	logf("runlet's node identity: %d requests, %d refused, %d refused at first and then allowed", s.Requests, len(s.Denials), len(s.Transient))
	for _, d := range s.Denials {
		logf("refused: %s", d)
	}
	for _, d := range s.Transient {
		logf("refused, then allowed: %s", d)
	}
	return len(s.Denials) == 0
}

// Get returns the control plane started by Main; it skips the test when Main started none (-short)
// and fails it when the package's TestMain does not call Main.
func Get(t testing.TB) *Cluster {
	t.Helper()
	if cluster == nil {
		if setupSkipped != "" {
			t.Skip(setupSkipped)
		}
		t.Fatal("framework: no control plane; the package's TestMain must call framework.Main(m)")
	}
	return cluster
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[e2e framework %s] %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func setup() (*Cluster, error) {
	t0 := time.Now()
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	// hack/cp-build.sh is quick when the binaries are cached; it prints their dir last on stdout.
	out, err := runScript(root, nil, os.Stderr, "hack/cp-build.sh")
	if err != nil {
		return nil, fmt.Errorf("hack/cp-build.sh: %w", err)
	}
	binDir := lastLine(out)
	base, err := allocPortBase()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "runlet-e2e-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		RepoRoot: root, Dir: dir, CPDir: filepath.Join(dir, "cp"), PortBase: base,
		Server: fmt.Sprintf("https://127.0.0.1:%d", base+443),
		BinDir: binDir, Kubectl: filepath.Join(binDir, "kubectl"), Helm: filepath.Join(binDir, "helm"),
	}
	c.PKIDir = filepath.Join(c.CPDir, "pki")
	c.AdminKubeconfig = filepath.Join(c.PKIDir, "admin.kubeconfig")
	c.BootstrapKubeconfig = filepath.Join(c.PKIDir, "bootstrap.kubeconfig")
	c.CACert = filepath.Join(c.PKIDir, "ca.crt")
	c.ServingCert = filepath.Join(c.PKIDir, "runlet-serving.crt")
	c.ServingKey = filepath.Join(c.PKIDir, "runlet-serving.key")
	cluster = c // so that teardown stops a half-started control plane

	logf("starting control plane in %s (PORT_BASE=%d)", c.CPDir, base)
	env := []string{
		"CP_DIR=" + c.CPDir, "PORT_BASE=" + strconv.Itoa(base), "CP_BIN_DIR=" + binDir,
		"CP_WATCH_PID=" + strconv.Itoa(os.Getpid()),
	}
	if _, err := runScript(root, env, os.Stderr, "hack/cp-up.sh"); err != nil {
		return c, fmt.Errorf("hack/cp-up.sh: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		return c, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "runlet-e2e"
	c.Config = cfg
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return c, err
	}
	logf("control plane up in %.1fs: %s", time.Since(t0).Seconds(), c.Server)
	return c, nil
}

// teardown stops every runlet still running, the podman service and the control plane, by PID.
func teardown(code int) {
	teardownOnce.Do(func() {
		stopAllRunlets()
		stopPodmanService()
		c := cluster
		if c == nil {
			return
		}
		env := []string{"CP_DIR=" + c.CPDir}
		if _, err := runScript(c.RepoRoot, env, os.Stderr, "hack/cp-down.sh"); err != nil {
			logf("hack/cp-down.sh: %v", err)
		}
		if os.Getenv("RUNLET_E2E_KEEP") == "1" || code != 0 {
			logf("state kept in %s (logs: %s/logs)", c.Dir, c.CPDir)
		} else {
			_ = os.RemoveAll(c.Dir)
		}
		if portLock != nil {
			_ = portLock.Close()
		}
	})
}

// runScript runs `bash <repo>/<script>` with extra env, stderr to errw, and returns stdout.
func runScript(root string, env []string, errw io.Writer, script string, args ...string) (string, error) {
	cmd := exec.Command("bash", append([]string{filepath.Join(root, script)}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = errw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal ^C reaches us, not the children
	err := cmd.Run()
	return out.String(), err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// repoRoot walks up from the working directory to runlet's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			s := bufio.NewScanner(f)
			isRunlet := s.Scan() && strings.TrimSpace(s.Text()) == "module github.com/runlet/runlet"
			f.Close()
			if isRunlet {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("framework: not inside the runlet repository (no go.mod of github.com/runlet/runlet above the working directory)")
		}
		dir = parent
	}
}

// allocPortBase claims a port base (27000, 28000, … 31000) with a lock file held for the life of the
// process, so test packages running in parallel each get their own control plane ports.
func allocPortBase() (int, error) {
	if v := os.Getenv("RUNLET_E2E_PORT_BASE"); v != "" {
		return strconv.Atoi(v)
	}
	for base := DefaultPortBase; base <= DefaultPortBase+4000; base += 1000 {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("runlet-e2e-ports-%d.lock", base)), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return 0, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close()
			continue
		}
		if !portsFree(base, 257, 259, 379, 380, 443) {
			f.Close()
			continue
		}
		portLock = f
		return base, nil
	}
	return 0, errors.New("framework: no free port base between 27000 and 31000")
}

func portsFree(base int, offsets ...int) bool {
	for _, o := range offsets {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+o))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
