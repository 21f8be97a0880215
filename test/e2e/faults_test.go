package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// The fault suite: what runlet survives, each fault against the real control
// plane and podman (README "What runlet survives").

// TestFaultSIGKILLWith50Pods kills runlet (SIGKILL) with 50 pods running and
// one container killed while it is down: after the restart no other
// container restarted, no pod is lost, and the killed one's restart reaches
// the API once the node is back.
func TestFaultSIGKILLWith50Pods(t *testing.T) {
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	before := runningPods(t, rl.NodeName, ns, 50)
	victim := before["p07"]
	delete(before, "p07")

	rl.Kill()
	framework.KillContainer(t, victim.id)
	rl.Start()

	framework.WaitForPod(t, ns, "p07", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.LastTerminationState.Terminated != nil && cs.State.Running != nil
	})
	assertUnchanged(t, ns, before)
	assertOneSandboxEach(t, ns)
}

// TestFaultPodmanKilledDuringBurst kills the podman service (SIGKILL) in the
// middle of a burst of 30 pod creations and starts it again: every pod ends
// Running, none has two podman pods, none was ever reported Failed.
func TestFaultPodmanKilledDuringBurst(t *testing.T) {
	svc := framework.Podman(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	failed := watchFailed(t, ns)
	for i := 0; i < 30; i++ {
		framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, fmt.Sprintf("p%02d", i), framework.Busybox("main", "sleep", "3600")))
	}
	framework.Eventually(t, 60*time.Second, "the burst under way", func() (bool, error) {
		out, err := framework.PodmanCLIE("pod", "ps", "-q", "--filter", "label="+framework.LabelOwner+"="+rl.NodeName)
		return err == nil && strings.TrimSpace(out) != "", nil
	})
	if err := svc.Kill(); err != nil {
		t.Fatalf("kill the podman service: %v", err)
	}
	time.Sleep(3 * time.Second)
	if err := svc.Start(); err != nil {
		t.Fatalf("start the podman service again: %v", err)
	}
	snapshotPods(t, ns, 30)
	assertOneSandboxEach(t, ns)
	if names := failed(); len(names) > 0 {
		t.Errorf("pods reported Failed on the way: %v", names)
	}
}

// TestFaultAPIServerStopped60s stops the kube-apiserver (SIGSTOP) for 60 s
// while pods run and one container exits: workloads keep running, runlet
// keeps its state (same process), the status lost in transit is written
// once the apiserver is back, and the node's lease is renewed again.
func TestFaultAPIServerStopped60s(t *testing.T) {
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	before := runningPods(t, rl.NodeName, ns, 5)
	victim := before["p02"]
	delete(before, "p02")
	pid := rl.PID()

	resume := framework.PauseAPIServer(t)
	time.Sleep(10 * time.Second)
	framework.KillContainer(t, victim.id)
	time.Sleep(50 * time.Second)
	resume()
	back := time.Now()

	// The exit and restart happened while the apiserver was away: the status
	// that says so reaches it afterwards (how fast is make bench's business).
	framework.WaitForPod(t, ns, "p02", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount >= 1 && cs.LastTerminationState.Terminated != nil
	})
	if rl.PID() != pid || !rl.Running() {
		t.Fatal("runlet restarted or stopped during the outage")
	}
	assertUnchanged(t, ns, before)
	c := framework.Get(t).Client
	framework.Eventually(t, 60*time.Second, "the node's lease renewed after the outage", func() (bool, error) {
		l, err := c.CoordinationV1().Leases("kube-node-lease").Get(context.Background(), rl.NodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Time.After(back), nil
	})
	framework.WaitForNodeReady(t, rl.NodeName, 60*time.Second)
}

// assertOneSandboxEach checks every pod of ns has exactly one sandbox in
// the backend.
func assertOneSandboxEach(t *testing.T, ns string) {
	t.Helper()
	pods, err := framework.Get(t).Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if n := len(framework.Sandboxes(t, p.UID)); n != 1 {
			t.Errorf("pod %s has %d sandboxes in the backend; want 1", p.Name, n)
		}
	}
}

// watchFailed notes every pod of ns the API ever shows as Failed.
func watchFailed(t *testing.T, ns string) func() []string {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := framework.Get(t).Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.Everything().String()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && p.Status.Phase == v1.PodFailed {
				mu.Lock()
				seen[p.Name] = true
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for n := range seen {
			out = append(out, n)
		}
		return out
	}
}
