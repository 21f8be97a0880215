package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runc"
	"github.com/runlet/runlet/test/e2e/framework"
)

// benchRuncCIDR is the raw runc pods' kubenet range, apart from raw podman's.
const benchRuncCIDR = "10.99.1.0/24"

// saveTestImage writes the busybox image from podman's storage to a
// docker-archive, for the raw backend's store.
func saveTestImage(t *testing.T) string {
	tar := filepath.Join(t.TempDir(), "busybox.tar")
	if out, err := exec.Command("podman", "save", "--format", "docker-archive", "-o", tar, framework.BusyboxImage).CombinedOutput(); err != nil {
		t.Fatalf("podman save: %v: %s", err, out)
	}
	return tar
}

// benchRawRunc measures raw runc + CNI: the runc backend driven in this
// process on runlet's kubenet network, as runlet's core drives it.
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
