package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/network/cni"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// fakeNetwork is a pod network that hands out 10.244.0.N and remembers
// what is attached.
type fakeNetwork struct {
	mu       sync.Mutex
	next     int
	attached map[string]cni.Pod
	ports    [][]cni.PortMapping
	sysctls  []map[string]string
	gone     map[string]bool
	err      error
	gcLive   map[string]bool
}

func newFakeNetwork() *fakeNetwork {
	return &fakeNetwork{attached: map[string]cni.Pod{}, gone: map[string]bool{}}
}

func (n *fakeNetwork) Setup(_ context.Context, pod cni.Pod) (cni.Attachment, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return cni.Attachment{}, n.err
	}
	n.next++
	netns := fmt.Sprintf("/run/netns/runlet-%d", n.next)
	if pod.NetNSPath != "" {
		netns = pod.NetNSPath
	}
	n.attached[netns] = pod
	n.ports = append(n.ports, pod.Ports)
	n.sysctls = append(n.sysctls, pod.Sysctls)
	return cni.Attachment{NetNS: netns, IPs: []string{fmt.Sprintf("10.244.0.%d", n.next+1)}}, nil
}

func (n *fakeNetwork) Commit(string) {}

func (n *fakeNetwork) NewNetNSPath() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.next++
	return fmt.Sprintf("/run/netns/runlet-%d", n.next)
}

func (n *fakeNetwork) Alive(netns string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.gone[netns]
}

func (n *fakeNetwork) Teardown(_ context.Context, netns string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.attached, netns)
	return nil
}

func (n *fakeNetwork) GC(_ context.Context, live map[string]bool, _ time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gcLive = live
}

func (n *fakeNetwork) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.attached)
}

func newNetworkEnv(t *testing.T) (*env, *fakeNetwork, *record.FakeRecorder) {
	e := newEnv(t)
	n := newFakeNetwork()
	rec := record.NewFakeRecorder(100)
	e.m.network, e.m.rec = n, rec
	return e, n, rec
}

func TestSandboxJoinsThePodNetworkAndKeepsItsAddress(t *testing.T) {
	e, n, _ := newNetworkEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	sb := e.status(pod).Sandbox()
	if sb == nil || sb.NetNS != "/run/netns/runlet-1" || len(sb.IPs) != 1 || sb.IPs[0] != "10.244.0.2" {
		t.Fatalf("sandbox = %+v; want it in the pod network's namespace with its address", sb)
	}
	if len(n.ports) != 1 || len(n.ports[0]) != 1 || n.ports[0][0] != (cni.PortMapping{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}) {
		t.Errorf("ports handed to the network = %+v", n.ports)
	}
	if err := e.m.RemovePod(e.ctx, e.status(pod)); err != nil {
		t.Fatal(err)
	}
	if n.count() != 0 {
		t.Fatalf("%d attachments left after the pod's removal", n.count())
	}
}

func TestHostNetworkPodsNeedNoPodNetwork(t *testing.T) {
	e, n, _ := newNetworkEnv(t)
	n.err = cni.NotReadyError{Err: errors.New("no podCIDR")}
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.HostNetwork = true
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("a host-network pod waited for the pod network: %v", err)
	}
}

func TestNetworkNotReadyIsTheKubeletsEvent(t *testing.T) {
	e, n, rec := newNetworkEnv(t)
	n.err = cni.NotReadyError{Err: errors.New("kubenet does not have netConfig")}
	pod := newPod(v1.RestartPolicyAlways, "c")
	_, err := e.sync(pod)
	if err == nil || !strings.HasPrefix(err.Error(), "network is not ready: container runtime network not ready") {
		t.Fatalf("err = %v", err)
	}
	if ev := events(rec); !strings.Contains(ev, "Warning NetworkNotReady network is not ready") {
		t.Errorf("events = %q", ev)
	}
	if sb := e.status(pod).Sandbox(); sb != nil {
		t.Errorf("a sandbox was created without a network: %+v", sb)
	}
}

func TestFailedAddIsFailedCreatePodSandBoxAndRetried(t *testing.T) {
	e, n, rec := newNetworkEnv(t)
	n.err = errors.New(`plugin type="bridge" failed (add): no IP addresses available in range set`)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err == nil {
		t.Fatal("SyncPod worked without an address")
	}
	if ev := events(rec); !strings.Contains(ev, "Warning FailedCreatePodSandBox") || !strings.Contains(ev, "no IP addresses available") {
		t.Errorf("events = %q", ev)
	}
	n.err = nil
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("the retry failed: %v", err)
	}
	if sb := e.status(pod).Sandbox(); sb == nil || len(sb.IPs) == 0 {
		t.Fatalf("sandbox after the retry = %+v", sb)
	}
}

func TestSandboxNotCreatedReleasesItsNetwork(t *testing.T) {
	e, n, _ := newNetworkEnv(t)
	e.f.Fail("CreateSandbox", errors.New("podman said no"))
	if _, err := e.sync(newPod(v1.RestartPolicyAlways, "c")); err == nil {
		t.Fatal("SyncPod worked without a sandbox")
	}
	if n.count() != 0 {
		t.Fatalf("%d attachments left by a sandbox that was never created", n.count())
	}
}

func TestNetworkGCSeesTheLiveSandboxes(t *testing.T) {
	e, n, _ := newNetworkEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	e.m.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n.mu.Lock()
		live := n.gcLive
		n.mu.Unlock()
		if live != nil {
			if !live["/run/netns/runlet-1"] {
				t.Fatalf("GC's live set %v misses the pod's namespace", live)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no network GC ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The pod's net.* sysctls are the network namespace's; the others are not.
func TestNetSysctlsGoToThePodNetwork(t *testing.T) {
	e, n, _ := newNetworkEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{
		{Name: "net.ipv4.ip_unprivileged_port_start", Value: "101"}, {Name: "kernel.shm_rmid_forced", Value: "1"}}}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if len(n.sysctls) != 1 || len(n.sysctls[0]) != 1 || n.sysctls[0]["net.ipv4.ip_unprivileged_port_start"] != "101" {
		t.Fatalf("sysctls handed to the network = %v; want the net.* one only", n.sysctls)
	}
}

// A sandbox whose network namespace went (its create failed after podman
// made the pod, and the namespace was released) is made anew.
func TestSandboxWithoutItsNetworkIsRecreated(t *testing.T) {
	e, n, rec := newNetworkEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	first := e.status(pod).Sandbox()
	n.mu.Lock()
	n.gone[first.NetNS] = true
	n.mu.Unlock()
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	sb := e.status(pod).Sandbox()
	if sb == nil || sb.ID == first.ID || sb.NetNS == first.NetNS {
		t.Fatalf("sandbox %+v; want a new one with a new namespace instead of %s", sb, first.ID)
	}
	if ev := events(rec); !strings.Contains(ev, "SandboxChanged") {
		t.Errorf("events = %q; want SandboxChanged", ev)
	}
}

// newBesideEnv is a network env whose backend makes a sandbox while the
// pod network is set up (Capabilities.NetworkBeside).
func newBesideEnv(t *testing.T) (*env, *fakeNetwork, *record.FakeRecorder) {
	e, n, rec := newNetworkEnv(t)
	e.m.caps.NetworkBeside = true
	return e, n, rec
}

// Beside the sandbox, the set-up pins the namespace the core named before
// the sandbox was made, and the sandbox reports that network's address.
func TestNetworkBesideTheSandbox(t *testing.T) {
	e, n, rec := newBesideEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	sb := e.status(pod).Sandbox()
	if sb == nil || sb.NetNS != "/run/netns/runlet-1" || len(sb.IPs) != 1 || sb.IPs[0] != "10.244.0.3" {
		t.Fatalf("sandbox = %+v; want it in the namespace named before it, with the network's address", sb)
	}
	if p, ok := n.attached[sb.NetNS]; !ok || p.NetNSPath != sb.NetNS || p.NetNSSource != "" {
		t.Errorf("attachments = %+v; want a new namespace pinned at the sandbox's", n.attached)
	}
	if ev := events(rec); strings.Contains(ev, "Warning") {
		t.Errorf("events = %q", ev)
	}
}

// A network that fails beside the sandbox fails the sync as one that
// fails before it: the kubelet's reason, once, and no sandbox.
func TestNetworkBesideNotReady(t *testing.T) {
	e, n, rec := newBesideEnv(t)
	n.err = cni.NotReadyError{Err: errors.New("kubenet does not have netConfig")}
	pod := newPod(v1.RestartPolicyAlways, "c")
	_, err := e.sync(pod)
	if err == nil || !strings.HasPrefix(err.Error(), "network is not ready: container runtime network not ready") {
		t.Fatalf("err = %v", err)
	}
	ev := events(rec)
	if !strings.Contains(ev, "Warning NetworkNotReady network is not ready") || strings.Contains(ev, "FailedCreatePodSandBox") {
		t.Errorf("events = %q; want NetworkNotReady alone", ev)
	}
	if sb := e.status(pod).Sandbox(); sb != nil {
		t.Errorf("a sandbox was created without a network: %+v", sb)
	}
}

// A sandbox that is not made waits for the set-up begun beside it, then
// releases that network.
func TestNetworkBesideReleasedWithoutASandbox(t *testing.T) {
	e, n, _ := newBesideEnv(t)
	e.f.Fail("CreateSandbox", errors.New("runc said no"))
	if _, err := e.sync(newPod(v1.RestartPolicyAlways, "c")); err == nil || !strings.Contains(err.Error(), "runc said no") {
		t.Fatalf("SyncPod: %v; want the backend's failure", err)
	}
	if n.count() != 0 {
		t.Fatalf("%d attachments left by a sandbox that was never created", n.count())
	}
}
