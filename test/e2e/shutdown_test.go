package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/nodeshutdown/logind/logindtest"
	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const shutdownMessage = "Pod was terminated in response to imminent node shutdown."

// TestGracefulNodeShutdown: with shutdownGracePeriod 20s, 10s of it for
// critical pods, a SIGTERM restart of runlet leaves every pod running;
// `runlet shutdown` then stops the regular pods, the one that ignores
// SIGTERM within its group's 10 s and not its own 300 s, and only then
// the critical pod. It returns once they have stopped: each pod is
// terminal with the kubelet's reason, message and DisruptionTarget
// condition (Failed; Succeeded where its containers exited 0 on SIGTERM, as
// the kubelet's phase rule has it), no container runs, the node is NotReady as the kubelet's and refuses a new
// pod. After the reboot's restart the node is Ready and the pods stay Failed.
func TestGracefulNodeShutdown(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{"--config", shutdownConfig(t)}})
	ns := framework.Namespace(t)
	c := framework.Get(t)
	ctx := context.Background()

	// regular takes 2 s to stop; critical stops at once: were they stopped
	// together, critical would finish first.
	regular := framework.PodFor(rl.NodeName, ns, "regular", framework.Busybox("c", "sh", "-c", "trap 'sleep 2; exit 0' TERM; sleep 3600 & wait"))
	stubborn := framework.PodFor(rl.NodeName, ns, "stubborn", framework.Busybox("c", "sleep", "3600"))
	stubborn.Spec.TerminationGracePeriodSeconds = ptr.To[int64](300)
	pods := []*v1.Pod{regular, stubborn, criticalPod(rl.NodeName, ns)}
	for _, p := range pods {
		framework.CreatePod(t, p)
	}
	for _, p := range pods {
		framework.WaitForPodPhase(t, ns, p.Name, v1.PodRunning, 90*time.Second)
	}

	// A restart is not a shutdown.
	if code, err := rl.Stop(); err != nil || code != 0 {
		t.Fatalf("SIGTERM: exit %d, %v", code, err)
	}
	for _, p := range pods {
		if n := runningContainers(t, ns, p.Name); n != 1 {
			t.Fatalf("after SIGTERM, %s has %d running containers; want 1", p.Name, n)
		}
	}
	rl.Start()

	out, err := exec.Command(rl.Binary, "shutdown", "--root-dir", rl.RootDir).CombinedOutput()
	if err != nil {
		t.Fatalf("runlet shutdown: %v\n%s\n--- runlet:\n%s", err, out, rl.LogTail(40))
	}
	t.Logf("runlet shutdown: %s", strings.TrimSpace(string(out)))
	for _, p := range pods {
		if n := runningContainers(t, ns, p.Name); n != 0 {
			t.Errorf("after runlet shutdown returned, %s has %d running containers; want 0", p.Name, n)
		}
	}
	final := map[string]*v1.Pod{}
	for name, phase := range map[string]v1.PodPhase{"regular": v1.PodSucceeded, "stubborn": v1.PodFailed, "critical": v1.PodSucceeded} {
		final[name] = framework.WaitForPod(t, ns, name, 30*time.Second, func(p *v1.Pod) bool { return podTerminal(p) })
		if final[name].Status.Phase != phase {
			t.Errorf("%s is %s; want %s", name, final[name].Status.Phase, phase)
		}
		checkShutdownStatus(t, final[name])
	}
	regularEnd, criticalEnd := finishedAt(t, final["regular"]), finishedAt(t, final["critical"])
	if criticalEnd.Before(regularEnd) {
		t.Errorf("critical pod stopped at %v, before the regular one at %v", criticalEnd, regularEnd)
	}
	if cs := final["stubborn"].Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 137 {
		t.Errorf("stubborn's container %+v; want killed (137) at the end of its group's grace period", cs)
	}

	waitNodeReady(t, rl.NodeName, v1.ConditionFalse, "KubeletNotReady", "node is shutting down")
	late := framework.PodFor(rl.NodeName, ns, "late", framework.Sleeper("c"))
	late.Spec.NodeName, late.Spec.NodeSelector = rl.NodeName, nil // the scheduler places nothing on a NotReady node
	framework.CreatePod(t, late)
	refused := framework.WaitForPod(t, ns, "late", 60*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	if refused.Status.Reason != "NodeShutdown" || refused.Status.Message != "Pod was rejected: Pod was rejected as the node is shutting down." {
		t.Errorf("a pod created during the shutdown: %s %q; want NodeShutdown", refused.Status.Reason, refused.Status.Message)
	}

	// The reboot: the pods the shutdown stopped do not come back.
	rl.Restart()
	for _, p := range pods {
		got, err := c.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != final[p.Name].Status.Phase || runningContainers(t, ns, p.Name) != 0 {
			t.Errorf("after the restart, %s is %s with %d running containers; want %s, none", p.Name, got.Status.Phase, runningContainers(t, ns, p.Name), final[p.Name].Status.Phase)
		}
	}
}

// shutdownConfig is a configuration file of 20 s of graceful node
// shutdown, 10 s of it for critical pods.
func shutdownConfig(t *testing.T) string {
	t.Helper()
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+
		"shutdownGracePeriod: 20s\nshutdownGracePeriodCriticalPods: 10s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

// criticalPod is a system-node-critical pod that stops at once on SIGTERM.
func criticalPod(node, ns string) *v1.Pod {
	p := framework.PodFor(node, ns, "critical", framework.Sleeper("c"))
	p.Spec.PriorityClassName = "system-node-critical"
	return p
}

// waitNodeReady waits for the node's Ready condition to be status, with
// reason and message when it is False.
func waitNodeReady(t *testing.T, node string, status v1.ConditionStatus, reason, message string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "node Ready "+string(status), func() (bool, error) {
		n, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r := nodeCondition(n, v1.NodeReady)
		return r.Status == status && (status == v1.ConditionTrue || r.Reason == reason && r.Message == message), nil
	})
}

// checkShutdownStatus checks the kubelet's status of a pod stopped by a
// node shutdown.
func checkShutdownStatus(t *testing.T, p *v1.Pod) {
	t.Helper()
	if p.Status.Reason != "Terminated" || p.Status.Message != shutdownMessage {
		t.Errorf("%s: %s/%s %q; want Terminated %q", p.Name, p.Status.Phase, p.Status.Reason, p.Status.Message, shutdownMessage)
	}
	cond := podCondition(p, v1.DisruptionTarget)
	if cond == nil || cond.Status != v1.ConditionTrue || cond.Reason != v1.PodReasonTerminationByKubelet || cond.Message != shutdownMessage {
		t.Errorf("%s: DisruptionTarget %+v; want True, TerminationByKubelet, %q", p.Name, cond, shutdownMessage)
	}
}

func podTerminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded
}

// finishedAt is when the pod's one container ended.
func finishedAt(t *testing.T, p *v1.Pod) time.Time {
	t.Helper()
	cs := p.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Terminated == nil {
		t.Fatalf("%s: container %+v; want terminated", p.Name, cs)
	}
	return cs[0].State.Terminated.FinishedAt.Time
}

// runningContainers counts the pod's containers running in the backend.
func runningContainers(t *testing.T, ns, name string) int {
	t.Helper()
	p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range framework.Containers(t, p.UID) {
		if c.Running {
			n++
		}
	}
	return n
}

// TestGracefulNodeShutdownOnLogind: where the system bus has logind (here a
// private bus and a fake logind), runlet holds a delay inhibitor lock and
// releases it on PrepareForShutdown(true) only once its pods have stopped,
// regular before critical, with the kubelet's statuses and the node
// NotReady; PrepareForShutdown(false) makes the node Ready again and runlet
// takes a new lock.
func TestGracefulNodeShutdownOnLogind(t *testing.T) {
	t.Parallel()
	addr := logindtest.StartBus(t)
	// logind already waits longer than the grace period: runlet writes no
	// logind drop-in on this host.
	fake := logindtest.Start(t, addr, time.Minute, filepath.Join(t.TempDir(), "unused.conf"))
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{"--config", shutdownConfig(t)},
		Env: []string{"DBUS_SYSTEM_BUS_ADDRESS=" + addr}})
	ns := framework.Namespace(t)
	regular := framework.PodFor(rl.NodeName, ns, "regular", framework.Busybox("c", "sh", "-c", "trap 'sleep 2; exit 0' TERM; sleep 3600 & wait"))
	pods := []*v1.Pod{regular, criticalPod(rl.NodeName, ns)}
	for _, p := range pods {
		framework.CreatePod(t, p)
	}
	for _, p := range pods {
		framework.WaitForPodPhase(t, ns, p.Name, v1.PodRunning, 90*time.Second)
	}
	framework.Eventually(t, 30*time.Second, "runlet holding logind's lock", func() (bool, error) {
		return strings.Contains(rl.Log(), "logind: holding the host's shutdown back"), nil
	})
	fake.Handed()
	if inhibits, _ := fake.Calls(); len(inhibits) != 1 || inhibits[0] != "shutdown runlet delay" {
		t.Fatalf("Inhibit calls %q; want one delay lock on shutdown", inhibits)
	}

	if err := fake.PrepareForShutdown(true); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, "logind's lock released", func() (bool, error) {
		held, err := fake.Held()
		return !held, err
	})
	for _, p := range pods {
		if n := runningContainers(t, ns, p.Name); n != 0 {
			t.Errorf("lock released while %s has %d running containers", p.Name, n)
		}
	}
	final := map[string]*v1.Pod{}
	for _, p := range pods {
		final[p.Name] = framework.WaitForPod(t, ns, p.Name, 30*time.Second, podTerminal)
		checkShutdownStatus(t, final[p.Name])
	}
	if r, c := finishedAt(t, final["regular"]), finishedAt(t, final["critical"]); c.Before(r) {
		t.Errorf("critical pod stopped at %v, before the regular one at %v", c, r)
	}
	waitNodeReady(t, rl.NodeName, v1.ConditionFalse, "KubeletNotReady", "node is shutting down")

	if err := fake.PrepareForShutdown(false); err != nil {
		t.Fatal(err)
	}
	waitNodeReady(t, rl.NodeName, v1.ConditionTrue, "", "")
	framework.Eventually(t, 30*time.Second, "a new lock", func() (bool, error) {
		inhibits, _ := fake.Calls()
		return len(inhibits) == 2, nil
	})
}
