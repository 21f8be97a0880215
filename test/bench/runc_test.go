package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runc"
	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// benchRuncCIDR is the raw runc pods' kubenet range, apart from raw podman's.
const benchRuncCIDR = "10.99.1.0/24"

// benchRunc measures the runc backend: raw runc + CNI (the backend driven
// in this process on runlet's kubenet network, as runlet's core drives it),
// then runlet --runtime=runc on the same host: sequential starts, the first
// burst, and runlet's memory with that burst's pods at rest.
func benchRunc(t *testing.T, ctx context.Context, cfg config, r *results) {
	images := saveTestImage(t)
	benchRawRunc(t, ctx, cfg, images, r)
	benchRuncRunlet(t, ctx, cfg, r)
}

// saveTestImage writes the busybox image from podman's storage to a
// docker-archive, for the raw backend's store.
func saveTestImage(t *testing.T) string {
	tar := filepath.Join(t.TempDir(), "busybox.tar")
	if out, err := exec.Command("podman", "save", "--format", "docker-archive", "-o", tar, framework.BusyboxImage).CombinedOutput(); err != nil {
		t.Fatalf("podman save: %v: %s", err, out)
	}
	return tar
}

func benchRawRunc(t *testing.T, ctx context.Context, cfg config, images string, r *results) {
	run := runID()
	be, err := runc.Open(ctx, runc.Options{Root: filepath.Join(t.TempDir(), "runc"), Owner: "bench-raw-runc-" + run})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = be.Close() }()
	f, err := os.Open(images)
	if err != nil {
		t.Fatal(err)
	}
	_, err = be.LoadImage(ctx, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	net := benchNetwork(t, "bench-runc-"+run, benchRuncCIDR)
	var sandboxes []string
	defer func() {
		for _, id := range sandboxes {
			// it kills and removes the sandbox's containers too
			if err := be.RemoveSandbox(context.Background(), id); err != nil {
				progress("raw runc cleanup: %v", err)
			}
		}
	}()
	var seq atomic.Int64
	start := func() error {
		name := fmt.Sprintf("bench-runc-%s-%d", run, seq.Add(1))
		a, err := net.attach(ctx, name)
		if err != nil {
			return err
		}
		// A BestEffort pod's cgroup, as runlet's core sets it.
		sb, err := be.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: name, Namespace: "bench", Name: name, Hostname: name,
			NetNS: a.NetNS, IPs: a.IPs, Labels: map[string]string{framework.LabelPodUID: name}, Resources: runtime.Resources{CPUShares: 2}})
		if err != nil {
			return err
		}
		sandboxes = append(sandboxes, sb.ID)
		// Unconfined, as runlet's core asks for a container without a
		// seccompProfile (the kubelet's default, --seccomp-default off).
		id, err := be.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: framework.BusyboxImage,
			Command: []string{"sleep", "3600"}, Labels: map[string]string{framework.LabelPodUID: name},
			Security: runtime.SecurityConfig{Seccomp: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}}})
		if err != nil {
			return err
		}
		return be.StartContainer(ctx, id)
	}
	r.runcRawStart = timeStarts(t, cfg.n, "raw runc + CNI", start)
}

// benchNet is a kubenet pod network of the bench's own, for raw pods.
type benchNet struct {
	m        *cni.Manager
	attached []string
}

// benchNetwork makes one, torn down with its pods at the test's end.
func benchNetwork(t *testing.T, node, cidr string) *benchNet {
	m, err := cni.New(cni.Config{Mode: cni.ModeKubenet, BinDirs: []string{"/opt/cni/bin", "/usr/lib/cni"},
		StateDir: filepath.Join(t.TempDir(), "network"), NetNSDir: framework.NetNSDir, Node: node})
	if err != nil {
		t.Fatal(err)
	}
	m.SetPodCIDRs([]string{cidr})
	if err := m.Status(); err != nil {
		t.Fatal(err)
	}
	n := &benchNet{m: m}
	t.Cleanup(n.remove)
	return n
}

// attach makes a pod's namespace and runs CNI ADD in it.
func (n *benchNet) attach(ctx context.Context, name string) (cni.Attachment, error) {
	a, err := n.m.Setup(ctx, cni.Pod{UID: name, Namespace: "bench", Name: name})
	if err != nil {
		return a, err
	}
	n.attached = append(n.attached, a.NetNS)
	n.m.Commit(a.NetNS)
	return a, nil
}

func (n *benchNet) remove() {
	for _, ns := range n.attached {
		if err := n.m.Teardown(context.Background(), ns); err != nil {
			progress("cni cleanup: %v", err)
		}
	}
	if err := n.m.Remove(); err != nil {
		progress("cni cleanup: %v", err)
	}
}

// benchRuncRunlet: runlet --runtime=runc with the defaults a user gets.
func benchRuncRunlet(t *testing.T, ctx context.Context, cfg config, r *results) {
	rl := framework.StartRunlet(t, framework.RunletOptions{Runtime: framework.RuntimeRunc, LogLevel: "info",
		MaxPods: cfg.bursts[0] + cfg.n + 10})
	ns := framework.Namespace(t)
	n := &node{t: t, ctx: ctx, cfg: cfg, rl: rl, ns: ns, api: framework.Get(t).Client.CoreV1().Pods(ns), w: watchPods(t, ns)}
	progress("runlet on runc %s (pid %d) is Ready; settling %v", rl.NodeName, rl.PID(), cfg.settle)
	time.Sleep(cfg.settle)
	_, warm := n.create("warm-up")
	n.wait("running", warm.Name, 2*time.Minute)
	progress("runlet on runc: %d sequential pod starts", cfg.n)
	pods := []*v1.Pod{warm}
	for i := range cfg.n {
		t0, p := n.create(fmt.Sprintf("s-%d", i))
		r.runcStart = append(r.runcStart, n.wait("running", p.Name, 2*time.Minute).Sub(t0))
		pods = append(pods, p)
	}
	n.goneRunc(pods)

	size := cfg.bursts[0]
	progress("runlet on runc: burst of %d pods, %d clients", size, cfg.clients)
	t0, burst := n.createMany(fmt.Sprintf("b%d", size), size)
	r.runcBurst = float64(size) / n.waitAll("running", burst, 10*time.Minute).Sub(t0).Seconds()
	progress("runlet on runc: burst of %d: %.2f pods/s; settling %v", size, r.runcBurst, cfg.settle)
	time.Sleep(cfg.settle)
	r.runcMem = readMem(t, rl.PID(), rl.MetricsURL())
	progress("runlet on runc: %d pods at rest: RSS %.1f MiB (%s); deleting them", size, r.runcMem.rss, r.runcMem)
	n.goneRunc(burst)
}

// goneRunc deletes pods (grace 0) and waits until the API and the runc
// backend have forgotten them.
func (n *node) goneRunc(pods []*v1.Pod) {
	for _, p := range pods {
		deletePod(n.t, n.ctx, n.api, p.Name)
	}
	deadline := time.Now().Add(2*time.Minute + time.Duration(len(pods))*time.Second)
	for _, p := range pods {
		n.wait("gone", p.Name, time.Until(deadline))
		for len(framework.Sandboxes(n.t, p.UID)) > 0 {
			if time.Now().After(deadline) {
				n.t.Fatalf("the runc sandbox of %s is still there", p.Name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
