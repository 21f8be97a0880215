package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEphemeralContainers: containers added through the ephemeralcontainers
// subresource run in the pod's sandbox next to its containers (which keep
// running), report ephemeralContainerStatuses, serve exec and logs, and are
// never restarted once they exit.
func TestEphemeralContainers(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "target", framework.Busybox("main", "sleep", "3600"))
	pod.Spec.TerminationGracePeriodSeconds = nil
	framework.CreatePod(t, pod)
	before := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)

	// one that exits at once, then a long-running one with stdin and a tty
	addEphemeral(t, ns, pod.Name, v1.EphemeralContainerCommon{Name: "once",
		Image: framework.BusyboxImage, Command: []string{"sh", "-c", "exit 3"}})
	framework.WaitForPod(t, ns, pod.Name, 60*time.Second, func(p *v1.Pod) bool {
		cs := ephemeralStatus(p, "once")
		return cs != nil && cs.State.Terminated != nil
	})
	addEphemeral(t, ns, pod.Name, v1.EphemeralContainerCommon{Name: "debugger", Image: framework.BusyboxImage,
		Command: []string{"sh", "-c", "while true; do echo polo; sleep 1; done"}, Stdin: true, TTY: true})
	p := framework.WaitForPod(t, ns, pod.Name, 60*time.Second, func(p *v1.Pod) bool {
		cs := ephemeralStatus(p, "debugger")
		return cs != nil && cs.State.Running != nil
	})

	once := ephemeralStatus(p, "once")
	if once.State.Terminated == nil || once.State.Terminated.ExitCode != 3 || once.RestartCount != 0 {
		t.Errorf("ephemeral container once: %+v, want terminated with 3 and never restarted", once)
	}
	n := 0
	for _, c := range framework.Containers(t, p.UID) {
		if c.Name() == "once" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d backend containers for ephemeral container once, want 1 (never restarted)", n)
	}
	if dbg := ephemeralStatus(p, "debugger"); dbg.Ready || !strings.HasPrefix(dbg.ContainerID, framework.RuntimePrefix()) {
		t.Errorf("ephemeral container debugger: %+v, want a %s container, not ready", dbg, framework.RuntimePrefix())
	}
	if got, was := p.Status.ContainerStatuses[0], before.Status.ContainerStatuses[0]; got.ContainerID != was.ContainerID || got.RestartCount != 0 {
		t.Errorf("main container changed: %s (restarts %d), was %s", got.ContainerID, got.RestartCount, was.ContainerID)
	}
	if p.Status.Phase != v1.PodRunning || !conditionTrue(p, v1.PodReady) {
		t.Errorf("pod phase %s, Ready %v: ephemeral containers must leave them alone", p.Status.Phase, conditionTrue(p, v1.PodReady))
	}

	if out := framework.Kubectl(t, "exec", "-n", ns, pod.Name, "-c", "debugger", "--", "echo", "marco"); !strings.Contains(out, "marco") {
		t.Errorf("exec in the ephemeral container: %q", out)
	}
	framework.Eventually(t, 30*time.Second, "logs of the ephemeral container", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, pod.Name, "-c", "debugger")
		return strings.Contains(out, "polo"), err
	})
}

func addEphemeral(t *testing.T, ns, name string, ec v1.EphemeralContainerCommon) {
	t.Helper()
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, v1.EphemeralContainer{EphemeralContainerCommon: ec})
	if _, err := pods.UpdateEphemeralContainers(context.Background(), name, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("add ephemeral container %s: %v", ec.Name, err)
	}
}

func ephemeralStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}
