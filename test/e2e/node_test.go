package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeRegistersReady checks the node object runlet registers and that
// its lease keeps being renewed.
func TestNodeRegistersReady(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true})
	n := framework.WaitForNodeReady(t, rl.NodeName, 90*time.Second)

	for k, want := range map[string]string{
		"type": "virtual-kubelet", "kubernetes.io/os": "linux",
		"kubernetes.io/hostname": rl.NodeName,
	} {
		if got := n.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	if n.Labels["kubernetes.io/arch"] == "" {
		t.Error("label kubernetes.io/arch missing")
	}
	if !hasTaint(n, "virtual-kubelet.io/provider", "runlet", v1.TaintEffectNoSchedule) {
		t.Errorf("taint virtual-kubelet.io/provider=runlet:NoSchedule missing: %v", n.Spec.Taints)
	}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage} {
		if q := n.Status.Capacity[r]; q.Sign() <= 0 {
			t.Errorf("capacity %s = %v, want > 0", r, q.String())
		}
		if q := n.Status.Allocatable[r]; q.Sign() <= 0 {
			t.Errorf("allocatable %s = %v, want > 0", r, q.String())
		}
	}
	if q := n.Status.Capacity[v1.ResourcePods]; q.Value() != 110 {
		t.Errorf("capacity pods = %d, want the --max-pods default 110", q.Value())
	}
	if got, want := n.Status.NodeInfo.ContainerRuntimeVersion, framework.RuntimePrefix(); !strings.HasPrefix(got, want) || len(got) <= len(want) {
		t.Errorf("containerRuntimeVersion = %q, want %s<version>", got, want)
	}
	if n.Status.NodeInfo.KernelVersion == "" || n.Status.NodeInfo.OperatingSystem != "linux" {
		t.Errorf("nodeInfo incomplete: %+v", n.Status.NodeInfo)
	}
	if got := n.Status.DaemonEndpoints.KubeletEndpoint.Port; int(got) != rl.KubeletPort {
		t.Errorf("kubelet endpoint port = %d, want %d", got, rl.KubeletPort)
	}
	if !hasAddress(n, v1.NodeInternalIP, "127.0.0.1") {
		t.Errorf("InternalIP 127.0.0.1 missing: %v", n.Status.Addresses)
	}
	testDeclaredFeatures(t, n)

	leases := c.Client.CoordinationV1().Leases("kube-node-lease")
	first, err := leases.Get(context.Background(), rl.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node lease: %v", err)
	}
	framework.Eventually(t, 60*time.Second, "lease renewal", func() (bool, error) {
		l, err := leases.Get(context.Background(), rl.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return l.Spec.RenewTime.After(first.Spec.RenewTime.Time), nil
	})
}

// TestNodeRegistersUntaintedWithLabels: --register-with-taints= registers
// the node with no taint at all, --node-labels adds to runlet's labels, and
// the scheduler then places a pod with no toleration there by those labels.
func TestNodeRegistersUntaintedWithLabels(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	name := framework.UniqueName(t, "node")
	rl := framework.StartRunlet(t, framework.RunletOptions{NodeName: name, ExtraArgs: []string{
		"--register-with-taints=", "--node-labels=runlet.example.com/untainted=" + name + ",zone=z1",
	}})
	n := framework.WaitForNodeReady(t, rl.NodeName, 90*time.Second)
	// the node lifecycle controller taints a new node not-ready until it sees it Ready: wait that out
	framework.Eventually(t, 60*time.Second, "no taints on node "+name, func() (bool, error) {
		var err error
		n, err = c.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && len(n.Spec.Taints) > 0 {
			err = fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return err == nil, err
	})
	for k, want := range map[string]string{
		"runlet.example.com/untainted": name, "zone": "z1", "type": "virtual-kubelet", "kubernetes.io/hostname": name,
	} {
		if got := n.Labels[k]; got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}

	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "no-toleration", framework.Busybox("c", "sleep", "3600"))
	pod.Spec.Tolerations = nil
	pod.Spec.NodeSelector = map[string]string{"runlet.example.com/untainted": name}
	framework.CreatePod(t, pod)
	got := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	if got.Spec.NodeName != name {
		t.Errorf("pod scheduled to %q, want %q", got.Spec.NodeName, name)
	}
}

func hasTaint(n *v1.Node, key, value string, effect v1.TaintEffect) bool {
	for _, tt := range n.Spec.Taints {
		if tt.Key == key && tt.Value == value && tt.Effect == effect {
			return true
		}
	}
	return false
}

func hasAddress(n *v1.Node, typ v1.NodeAddressType, addr string) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == typ && a.Address == addr {
			return true
		}
	}
	return false
}

// TestSIGTERMStopsCleanly checks runlet exits 0 on SIGTERM and leaves the
// pods' containers running: a restart of runlet never restarts a workload.
func TestSIGTERMStopsCleanly(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true, AllowUncleanExit: false})
	ns := framework.Namespace(t)
	pod := framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "survivor", framework.Busybox("c", "sleep", "3600")))
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)

	code, err := rl.Stop()
	if err != nil {
		t.Fatalf("stop runlet: %v", err)
	}
	if code != 0 {
		t.Fatalf("runlet exited %d on SIGTERM, want 0", code)
	}
	running := 0
	for _, c := range framework.Containers(t, pod.UID) {
		if c.Running {
			running++
		}
	}
	if running != 1 {
		t.Fatalf("after runlet stopped, %d containers of the pod run in the backend, want 1", running)
	}
}

// testDeclaredFeatures: the node declares the features runlet implements,
// which the scheduler and the apiserver match pods and pod updates against.
func testDeclaredFeatures(t *testing.T, n *v1.Node) {
	want := []string{"InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}
	if !slices.Equal(n.Status.DeclaredFeatures, want) {
		t.Errorf("declaredFeatures %v; want %v", n.Status.DeclaredFeatures, want)
	}
}
