package podman

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/netns"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"golang.org/x/sys/unix"
)

// A pod in the core's network namespace makes no start call of its own: its
// sandbox is ready, with the network's address, while its infra is only
// created; the first container's start starts the infra, and the container's
// cgroup is known at once for the OOM recorder.
func TestSandboxInCoreNetnsStartsWithFirstContainer(t *testing.T) {
	b := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := netnsSandbox(ctx, t, b, "netns-first-start", "10.250.0.7", nil)
	if sb.State != runtime.SandboxReady || len(sb.IPs) != 1 || sb.IPs[0] != "10.250.0.7" {
		t.Fatalf("CreateSandbox = %s %v; want ready with the network's address", sb.State, sb.IPs)
	}
	if s := infraState(t, b, sb.ID); mapState(s) != runtime.ContainerCreated {
		t.Fatalf("infra is %q after CreateSandbox; want created, not started", s)
	}
	listed, _, err := b.List(ctx, runtime.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := findSandbox(listed, sb.ID); got == nil || got.State != runtime.SandboxReady || len(got.IPs) != 1 {
		t.Fatalf("listed sandbox %+v; want ready with its address before any container starts", got)
	}

	id, err := b.CreateContainer(ctx, sb.ID, testContainer(sb, "c", "sleep", "600"))
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	if err := b.StartContainer(ctx, id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	if s := infraState(t, b, sb.ID); mapState(s) != runtime.ContainerRunning {
		t.Errorf("infra is %q after the first container started; want running", s)
	}
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	learned := b.ooms.Cgroup(id)
	if learned == "" || learned != ic.State.CgroupPath {
		t.Errorf("OOM recorder learned cgroup %q at start; the container's is %q", learned, ic.State.CgroupPath)
	}
}

// When the infra cannot start (a pod sysctl the kernel does not have), the
// first container's start says so as the sandbox's failure, with the
// runtime's reason, which its container start alone does not give.
func TestFirstStartReportsTheSandboxFailure(t *testing.T) {
	b := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := netnsSandbox(ctx, t, b, "netns-bad-sysctl", "10.250.0.8", func(cfg *runtime.SandboxConfig) {
		cfg.Sysctls = map[string]string{"net.ipv4.runlet_no_such_sysctl": "1"}
	})
	id, err := b.CreateContainer(ctx, sb.ID, testContainer(sb, "c", "sleep", "600"))
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	err = b.StartContainer(ctx, id)
	if !errors.Is(err, runtime.ErrSandboxStart) || !strings.Contains(err.Error(), "runlet_no_such_sysctl") {
		t.Errorf("StartContainer = %v; want ErrSandboxStart with the runtime's refusal", err)
	}
}

// A pod cgroup too small for anything is refused when the sandbox is made,
// with the kernel's answer, and leaves no pod behind.
func TestTinyPodCgroupRefused(t *testing.T) {
	b := realBackend(t)
	if !b.podCgroups {
		t.Skip("podman makes the pod cgroups here: its infra start refuses the limit")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testSandbox("0f6c2f1e-netns-tiny-cgroup", "netns-tiny-cgroup")
	cfg.NetNS, cfg.IPs, cfg.Resources = pinnedNetns(t), []string{"10.250.0.9"}, runtime.Resources{MemoryBytes: 1024}
	_, err := b.CreateSandbox(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "cgroup") {
		t.Fatalf("CreateSandbox = %v; want the pod cgroup's refusal", err)
	}
	listed, _, err := b.List(ctx, runtime.ListFilter{PodUID: cfg.PodUID})
	if err != nil || len(listed) != 0 {
		t.Errorf("after the refusal: %d sandboxes of the pod listed (%v); want none", len(listed), err)
	}
	if _, err := os.Stat(filepath.Join(cgroups.Root, "memory", cgroups.PodCgroupPath(cfg.PodUID))); !os.IsNotExist(err) {
		t.Errorf("the pod cgroup is left behind (%v)", err)
	}
}

// netnsSandbox creates a sandbox named name in a network namespace pinned
// for the test, with the address the core's network would have given it,
// and removes it at the end.
func netnsSandbox(ctx context.Context, t *testing.T, b *Backend, name, ip string, mod func(*runtime.SandboxConfig)) runtime.Sandbox {
	t.Helper()
	cfg := testSandbox("0f6c2f1e-"+name, name)
	cfg.Hostname, cfg.NetNS, cfg.IPs = name, pinnedNetns(t), []string{ip}
	if mod != nil {
		mod(&cfg)
	}
	sb, err := b.CreateSandbox(ctx, cfg)
	if err != nil {
		t.Fatalf("CreateSandbox: %v", err)
	}
	t.Cleanup(func() { _ = b.RemoveSandbox(context.Background(), sb.ID) })
	return sb
}

// pinnedNetns is a network namespace pinned for the test, as the core's
// pod network pins one per pod.
func pinnedNetns(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(shortTempDir(t), "netns")
	if err := netns.EnsureSharedDir(dir); err != nil {
		t.Fatal(err)
	}
	// Before the temporary directory goes: a mount would keep it.
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	path := filepath.Join(dir, "pod")
	if err := netns.Pin(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.Remove(path) })
	return path
}

func infraState(t *testing.T, b *Backend, podID string) string {
	t.Helper()
	pod, err := b.client.InspectPod(context.Background(), podID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pod.Containers {
		if m.ID == pod.InfraContainerID {
			return m.State
		}
	}
	t.Fatalf("pod %s has no infra container", podID)
	return ""
}

func findSandbox(list []runtime.Sandbox, id string) *runtime.Sandbox {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}
