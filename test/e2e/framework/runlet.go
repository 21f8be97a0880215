package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/childproc"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// RunletOptions configures StartRunlet. The zero value gives a runlet with a fresh node name, free
// ports on 127.0.0.1, the framework's podman service, and waits until its node is Ready.
type RunletOptions struct {
	NodeName   string // default: derived from the test name, unique
	Binary     string // default: $RUNLET_BIN or `go build ./cmd/runlet` (once per test binary)
	Kubeconfig string // --kubeconfig; default: none, runlet writes <root dir>/kubeconfig
	// BootstrapKubeconfig is --bootstrap-kubeconfig, default Cluster.BootstrapKubeconfig; "-" leaves
	// it out (then Kubeconfig must be a credential of its own).
	BootstrapKubeconfig string
	LogLevel            string        // default: "debug"
	PodmanSocket        string        // default: the framework's podman service (see Podman)
	Runtime             string        // --runtime: default $RUNLET_E2E_RUNTIME, else podman; runc's store gets the test images
	Images              []string      // more of podman's images for a runc runlet's store (podman's runlets share podman's)
	AutoPodman          bool          // pass an empty --podman-socket: runlet finds or starts podman itself
	RootDir             string        // default: a temp dir of the test
	PodManifestPath     string        // --pod-manifest-path (static pods), default none
	ManifestURL         string        // --manifest-url, default none
	MaxPods             int           // --max-pods, default runlet's
	PLEGRelistPeriod    time.Duration // --pleg-relist-period, default runlet's
	// NoClientCAFile leaves out --client-ca-file: runlet then verifies client certificates against
	// the cluster's CA from its kubeconfig, as kubeadm sets up a kubelet.
	NoClientCAFile bool
	ExtraArgs      []string      // appended last
	Env            []string      // added to the environment
	NoWaitReady    bool          // return as soon as the process is started
	ReadyTimeout   time.Duration // default 90s
	StopTimeout    time.Duration // SIGTERM → SIGKILL, default 30s
	KeepPods       bool          // at cleanup, leave the node's pods (API and podman) alone
	// AllowUncleanExit: at cleanup, an exit nobody asked for, or a non-zero exit on SIGTERM, is not
	// reported as a test error.
	AllowUncleanExit bool
	// ServiceCgroup runs runlet in a cgroup of its own, as a service manager runs a service:
	// StopService then ends every process in it.
	ServiceCgroup bool
}

// Runlet is one runlet process serving one virtual node.
type Runlet struct {
	NodeName    string
	Binary      string
	Args        []string
	KubeletPort int    // --kubelet-port on 127.0.0.1
	MetricsAddr string // --metrics-addr, 127.0.0.1:<port>
	RootDir     string
	LogPath     string // stdout+stderr of every start, appended

	t    testing.TB
	opts RunletOptions
	svc  *serviceCgroup // with ServiceCgroup

	mu      sync.Mutex
	cmd     *exec.Cmd
	pid     int
	done    chan struct{} // closed when the current process exited
	state   *os.ProcessState
	stopped bool // Stop/Kill was called for the current process
}

var (
	runletsMu sync.Mutex
	runlets   = map[*Runlet]struct{}{}

	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// RunletBinary returns the runlet binary under test: $RUNLET_BIN, or `go build ./cmd/runlet
// ./cmd/runlet-pause` done once per test binary into the framework's state dir.
func RunletBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("RUNLET_BIN"); p != "" {
		return p
	}
	c := Get(t)
	buildOnce.Do(func() {
		t0 := time.Now()
		buildBin = filepath.Join(c.Dir, "bin", "runlet")
		// runlet-pause beside it, where the runc backend looks for it
		cmd := exec.Command("go", "build", "-o", filepath.Dir(buildBin)+"/", "./cmd/runlet", "./cmd/runlet-pause")
		cmd.Dir = c.RepoRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/runlet ./cmd/runlet-pause: %v\n%s", err, out)
			return
		}
		logf("built runlet in %.1fs", time.Since(t0).Seconds())
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// StartRunlet starts a runlet for a new virtual node and, unless opts.NoWaitReady, waits until the node
// is Ready. At the end of the test it deletes the node's pods (while runlet still runs), stops runlet
// with SIGTERM (an unclean exit is a test error), on failure logs the tail of runlet's log, removes
// what is left in podman under the node's owner label, and deletes the Node object. KeepPods skips the
// pod and podman parts.
func StartRunlet(t testing.TB, opts RunletOptions) *Runlet {
	t.Helper()
	c := Get(t)
	if opts.NodeName == "" {
		opts.NodeName = UniqueName(t, "node")
	}
	if opts.Binary == "" {
		opts.Binary = RunletBinary(t)
	}
	if opts.BootstrapKubeconfig == "" {
		opts.BootstrapKubeconfig = c.BootstrapKubeconfig
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "debug"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 90 * time.Second
	}
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 30 * time.Second
	}
	if opts.Runtime == "" {
		opts.Runtime = os.Getenv(RuntimeEnv)
	}
	dir := t.TempDir()
	if opts.RootDir == "" {
		opts.RootDir = filepath.Join(dir, "root")
	}
	podmanSocket := ""
	if !opts.AutoPodman {
		podmanSocket = opts.PodmanSocket
		if podmanSocket == "" {
			podmanSocket = Podman(t).Socket
		}
	}
	r := &Runlet{
		NodeName: opts.NodeName, Binary: opts.Binary, RootDir: opts.RootDir,
		KubeletPort: FreePort(t), MetricsAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t)),
		LogPath: filepath.Join(dir, "runlet.log"), t: t, opts: opts,
	}
	r.Args = []string{
		"--nodename", r.NodeName,
		"--address", "127.0.0.1", "--node-ip", "127.0.0.1", "--kubelet-port", strconv.Itoa(r.KubeletPort),
		"--tls-cert-file", c.ServingCert, "--tls-private-key-file", c.ServingKey,
		"--podman-socket", podmanSocket, "--root-dir", r.RootDir, "--metrics-addr", r.MetricsAddr,
		"--log-level", opts.LogLevel,
	}
	if opts.BootstrapKubeconfig != "-" {
		r.Args = append(r.Args, "--bootstrap-kubeconfig", opts.BootstrapKubeconfig)
	}
	if opts.Kubeconfig != "" {
		r.Args = append(r.Args, "--kubeconfig", opts.Kubeconfig)
	}
	if !opts.NoClientCAFile {
		r.Args = append(r.Args, "--client-ca-file", c.CACert)
	}
	if opts.PodManifestPath != "" {
		r.Args = append(r.Args, "--pod-manifest-path", opts.PodManifestPath)
	}
	if opts.ManifestURL != "" {
		r.Args = append(r.Args, "--manifest-url", opts.ManifestURL)
	}
	if opts.MaxPods > 0 {
		r.Args = append(r.Args, "--max-pods", strconv.Itoa(opts.MaxPods))
	}
	if opts.PLEGRelistPeriod > 0 {
		r.Args = append(r.Args, "--pleg-relist-period", opts.PLEGRelistPeriod.String())
	}
	if opts.Runtime != "" {
		r.Args = append(r.Args, "--runtime", opts.Runtime)
	}
	r.Args = append(r.Args, opts.ExtraArgs...)
	if err := os.MkdirAll(r.RootDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if opts.Runtime == RuntimeRunc {
		loadRuncImages(t, r)
	}

	if opts.ServiceCgroup {
		r.svc = newServiceCgroup(t, r.NodeName)
	}
	runletsMu.Lock()
	runlets[r] = struct{}{}
	runletsMu.Unlock()
	t.Cleanup(r.cleanup)

	if err := r.start(); err != nil {
		t.Fatalf("start runlet: %v", err)
	}
	if !opts.NoWaitReady {
		r.WaitReady(opts.ReadyTimeout)
	}
	return r
}

func (r *Runlet) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.state == nil {
		return errors.New("runlet is already running")
	}
	f, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "=== %s framework: %s %s\n", time.Now().Format(time.RFC3339Nano), r.Binary, strings.Join(r.Args, " "))
	cmd := exec.Command(r.Binary, r.Args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), r.opts.Env...)
	if r.svc != nil {
		path, args, env := r.svc.wrap(append([]string{r.Binary}, r.Args...))
		cmd.Path, cmd.Args, cmd.Env = path, append([]string{path}, args...), append(cmd.Env, env...)
	}
	// Own process group (a terminal ^C goes to the test, which stops runlet itself); killed if the test dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited, err := childproc.Start(cmd, syscall.SIGKILL)
	if err != nil {
		return err
	}
	r.cmd, r.pid, r.state, r.stopped = cmd, cmd.Process.Pid, nil, false
	done := make(chan struct{})
	r.done = done
	go func() {
		<-exited
		r.mu.Lock()
		r.state = cmd.ProcessState
		r.mu.Unlock()
		close(done)
	}()
	return nil
}

// exitedUnasked returns how the current process ended and whether Stop or
// Kill ended it; nil while it runs.
func (r *Runlet) exitedUnasked() (*os.ProcessState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state, r.stopped
}

// PID of the current (or last) runlet process.
func (r *Runlet) PID() int { r.mu.Lock(); defer r.mu.Unlock(); return r.pid }

// Cmd of the current (or last) runlet process.
func (r *Runlet) Cmd() *exec.Cmd { r.mu.Lock(); defer r.mu.Unlock(); return r.cmd }

// Running tells whether the runlet process is alive.
func (r *Runlet) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd != nil && r.state == nil
}

// Exited is closed when the current runlet process exits.
func (r *Runlet) Exited() <-chan struct{} { r.mu.Lock(); defer r.mu.Unlock(); return r.done }

// ExitCode of the last process: -1 while running or when it was ended by a signal.
func (r *Runlet) ExitCode() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		return -1
	}
	return r.state.ExitCode()
}

// ProcessState of the last process, nil while it runs.
func (r *Runlet) ProcessState() *os.ProcessState { r.mu.Lock(); defer r.mu.Unlock(); return r.state }

// Signal sends sig to the runlet process.
func (r *Runlet) Signal(sig os.Signal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil || r.state != nil {
		return errors.New("runlet is not running")
	}
	return r.cmd.Process.Signal(sig)
}

// Stop sends SIGTERM and waits for the exit (StopTimeout, then SIGKILL and an error). It returns the
// exit code: 0 is a clean stop, -1 means it was ended by a signal.
func (r *Runlet) Stop() (int, error) {
	r.mu.Lock()
	if r.cmd == nil || r.state != nil {
		r.mu.Unlock()
		return r.ExitCode(), errors.New("runlet is not running")
	}
	r.stopped = true
	p, done := r.cmd.Process, r.done
	r.mu.Unlock()
	if !SignalAndWait(p, syscall.SIGTERM, done, r.opts.StopTimeout) {
		return r.ExitCode(), fmt.Errorf("runlet (pid %d) did not exit within %v of SIGTERM: killed", p.Pid, r.opts.StopTimeout)
	}
	st := r.ProcessState()
	if code := st.ExitCode(); code != 0 {
		return code, fmt.Errorf("runlet (pid %d) exited uncleanly on SIGTERM: %v", p.Pid, st)
	}
	return 0, nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (r *Runlet) Kill() {
	r.mu.Lock()
	if r.cmd == nil || r.state != nil {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	p, done := r.cmd.Process, r.done
	r.mu.Unlock()
	_ = p.Kill()
	<-done
}

// StopService stops runlet as a service manager stops a service (systemd's KillMode=control-group):
// SIGTERM to every process in its ServiceCgroup, SIGKILL to those left after StopTimeout. It reports
// whether SIGTERM was enough.
func (r *Runlet) StopService() bool {
	r.mu.Lock()
	if r.svc == nil {
		r.mu.Unlock()
		r.t.Fatal("StopService: runlet was not started with ServiceCgroup")
	}
	r.stopped = true
	done := r.done
	r.mu.Unlock()
	clean := r.svc.stop(r.opts.StopTimeout)
	<-done
	return clean
}

// Restart stops runlet (SIGTERM; an unclean exit fails the test) and starts it again with the same
// node name, ports, root dir and flags, then waits for the node to be Ready unless NoWaitReady.
func (r *Runlet) Restart() {
	r.t.Helper()
	if r.Running() {
		if _, err := r.Stop(); err != nil {
			r.t.Errorf("restart: %v", err)
		}
	}
	r.Start()
}

// Start starts a stopped or killed runlet again (same flags), waiting for Ready unless NoWaitReady.
func (r *Runlet) Start() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatalf("start runlet: %v", err)
	}
	if !r.opts.NoWaitReady {
		r.WaitReady(r.opts.ReadyTimeout)
	}
}

// StartProcess starts a stopped or killed runlet again (same flags) and returns at once: the node
// may not become Ready (an apiserver that does not answer).
func (r *Runlet) StartProcess() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatalf("start runlet: %v", err)
	}
}

// WaitReady waits until this runlet process serves its kubelet port and the node is Ready, failing
// early if runlet exits. (After a restart the node may still be Ready from before; the port tells
// that the new process is up.)
func (r *Runlet) WaitReady(timeout time.Duration) *v1.Node {
	r.t.Helper()
	var node *v1.Node
	r.eventually(timeout, "node "+r.NodeName+" Ready", func() (bool, error) {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.KubeletPort), time.Second)
		if err != nil {
			return false, err
		}
		conn.Close()
		n, err := Get(r.t).Client.CoreV1().Nodes().Get(context.Background(), r.NodeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil // not registered yet
		}
		if err != nil {
			return false, err
		}
		node = n
		return NodeReady(n), nil
	})
	return node
}

// eventually is Eventually that also fails as soon as the runlet process exits.
func (r *Runlet) eventually(timeout time.Duration, what string, cond func() (bool, error)) {
	r.t.Helper()
	var exited error
	err := poll(timeout, func() (bool, error) {
		if !r.Running() {
			exited = fmt.Errorf("runlet exited (%v) while waiting for %s", r.ProcessState(), what)
			return true, nil
		}
		return cond()
	}, false)
	if exited != nil {
		err = exited
	}
	if err != nil {
		r.t.Fatalf("%s: %v\n--- tail of %s:\n%s", what, err, r.LogPath, tail(r.LogPath, 40))
	}
}

// KubeletURL is the base URL of runlet's kubelet HTTPS endpoint.
func (r *Runlet) KubeletURL() string { return fmt.Sprintf("https://127.0.0.1:%d", r.KubeletPort) }

// MetricsURL is the base URL of runlet's metrics endpoint.
func (r *Runlet) MetricsURL() string { return "http://" + r.MetricsAddr }

// Log returns runlet's whole log (all starts).
func (r *Runlet) Log() string {
	b, _ := os.ReadFile(r.LogPath)
	return string(b)
}

// LogTail returns the last n lines of runlet's log.
func (r *Runlet) LogTail(n int) string { return tail(r.LogPath, n) }

func (r *Runlet) cleanup() {
	t, c := r.t, cluster
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if c != nil && !r.opts.KeepPods {
		r.deleteNodePods(ctx, c)
	}
	if st, stopped := r.exitedUnasked(); st != nil && !stopped && !r.opts.AllowUncleanExit {
		t.Errorf("runlet %s (pid %d) exited with nobody stopping it: %v", r.NodeName, r.PID(), st)
	}
	if r.Running() {
		if code, err := r.Stop(); err != nil {
			if r.opts.AllowUncleanExit {
				t.Logf("runlet %s: %v", r.NodeName, err)
			} else {
				t.Errorf("runlet %s: %v (exit code %d)", r.NodeName, err, code)
			}
		}
	}
	if t.Failed() {
		t.Logf("--- tail of runlet log %s (node %s):\n%s", r.LogPath, r.NodeName, tail(r.LogPath, 80))
	}
	r.unmountLeftovers()
	if !r.opts.KeepPods {
		if n := RemoveRuncLeftovers(r.RootDir); n > 0 {
			t.Logf("runlet %s left %d runc containers or pause processes behind after its pods were deleted; removed them", r.NodeName, n)
		}
		if n := removePodmanObjects("label=" + LabelOwner + "=" + r.NodeName); n > 0 {
			t.Logf("runlet %s left %d podman pods/containers behind after its pods were deleted; removed them", r.NodeName, n)
		}
		// The script names each kind of leftover; namespaces mean pods whose network runlet did not
		// tear down, the bridge and NAT rule are there for every node.
		if out, err := RemoveNodeNetwork(r.RootDir, r.NodeName); err != nil {
			t.Logf("runlet %s: %v", r.NodeName, err)
		} else if strings.Contains(out, "pod network namespaces") || strings.Contains(out, "hostPort rules") {
			t.Logf("runlet %s left pod network namespaces behind after its pods were deleted: %s", r.NodeName, out)
		}
		// A killed runlet's pods, removed above without it, leave their cgroups.
		if _, err := RemovePodCgroups(r.RootDir, r.NodeName); err != nil {
			t.Logf("runlet %s: %v", r.NodeName, err)
		}
	}
	if c != nil {
		err := c.Client.CoreV1().Nodes().Delete(ctx, r.NodeName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete node %s: %v", r.NodeName, err)
		}
	}
	runletsMu.Lock()
	delete(runlets, r)
	runletsMu.Unlock()
}

// deleteNodePods deletes (grace 0) every pod bound to the node while runlet still runs and gives runlet
// up to 30s to remove their podman objects.
func (r *Runlet) deleteNodePods(ctx context.Context, c *Cluster) {
	pods, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", r.NodeName).String(),
	})
	if err != nil {
		r.t.Logf("list pods of node %s: %v", r.NodeName, err)
		return
	}
	var uids []types.UID
	zero := int64(0)
	for _, p := range pods.Items {
		uids = append(uids, p.UID)
		if m := p.Annotations["kubernetes.io/config.mirror"]; m != "" {
			uids = append(uids, types.UID(m)) // a static pod's containers carry its config UID
		}
		err := c.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if err != nil && !apierrors.IsNotFound(err) {
			r.t.Logf("delete pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
	if len(uids) > 0 && r.Running() {
		err := poll(30*time.Second, func() (bool, error) {
			for _, u := range uids {
				if ctrs, err := podmanContainers("label=" + LabelPodUID + "=" + string(u)); err != nil || len(ctrs) > 0 {
					return false, err
				}
			}
			return true, nil
		}, false)
		if err != nil {
			return // some pod still runs (a static pod whose manifest is still there)
		}
		// And their volumes (tmpfs mounts under the root dir) and directories.
		_ = poll(30*time.Second, func() (bool, error) {
			for _, u := range uids {
				if _, err := os.Stat(filepath.Join(r.RootDir, "pods", string(u))); err == nil {
					return false, nil
				}
			}
			return true, nil
		}, false)
	}
}

// unmountLeftovers unmounts what a stopped runlet left mounted below its
// root dir (pods' tmpfs and subPath mounts stay while runlet is down, as a
// kubelet's do), so that the test's temp dir can be removed.
func (r *Runlet) unmountLeftovers() {
	// The runc backend mounts the containers of pods with hostUsers: false
	// in directories of theirs outside the root (their records name them).
	dirs := append([]string{r.RootDir}, runcMountDirs(r.RootDir)...)
	UnmountUnder(dirs...)
	for _, d := range dirs[1:] {
		_ = os.RemoveAll(d)
	}
}

func stopAllRunlets() {
	runletsMu.Lock()
	rs := make([]*Runlet, 0, len(runlets))
	for r := range runlets {
		rs = append(rs, r)
	}
	runletsMu.Unlock()
	for _, r := range rs {
		if r.Running() {
			logf("stopping leftover runlet %s (pid %d)", r.NodeName, r.PID())
			if _, err := r.Stop(); err != nil {
				logf("%v", err)
			}
		}
	}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// UniqueName returns a DNS-1123 label made of prefix, the test name and a random suffix (≤ 50 chars).
func UniqueName(t testing.TB, prefix string) string {
	name := nonDNS.ReplaceAllString(strings.ToLower(prefix+"-"+strings.TrimPrefix(t.Name(), "Test")), "-")
	name = strings.Trim(name, "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}
