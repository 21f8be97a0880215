package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// TestTermination: termination messages, activeDeadlineSeconds and prompt
// deletion, with the default grace period of 30 s.
func TestTermination(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	node := rl.NodeName
	t.Run("TerminationMessage", func(t *testing.T) { t.Parallel(); testTerminationMessage(t, node, ns) })
	t.Run("ActiveDeadline", func(t *testing.T) { t.Parallel(); testActiveDeadline(t, node, ns) })
	t.Run("PromptDeletion", func(t *testing.T) { t.Parallel(); testPromptDeletion(t, node, ns) })
	t.Run("IgnoredSIGTERMGetsFullGrace", func(t *testing.T) { t.Parallel(); testIgnoredSIGTERM(t, node, ns) })
	t.Run("ForcedDeletion", func(t *testing.T) { t.Parallel(); testForcedDeletion(t, node, ns) })
	t.Run("RolloutRestart", func(t *testing.T) { t.Parallel(); testRolloutRestart(t, node, ns) })
}

// testTerminationMessage follows the upstream "Container Runtime blackbox
// test on terminated container" specs, and checks the message stays in
// lastState after a restart.
func testTerminationMessage(t *testing.T, node, ns string) {
	nonRoot := int64(10000)
	cases := []struct {
		name, script, path string
		policy             v1.TerminationMessagePolicy
		user               *int64
		phase              v1.PodPhase
		want               string
	}{
		{"msg-nonroot", "/bin/echo -n DONE > /dev/termination-custom-log", "/dev/termination-custom-log", "", &nonRoot, v1.PodSucceeded, "DONE"},
		{"msg-logs", "/bin/echo -n DONE; /bin/false", "", v1.TerminationMessageFallbackToLogsOnError, nil, v1.PodFailed, "DONE"},
		{"msg-logs-ok", "/bin/echo -n DONE; /bin/true", "", v1.TerminationMessageFallbackToLogsOnError, nil, v1.PodSucceeded, ""},
		{"msg-file-first", "/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true", "", v1.TerminationMessageFallbackToLogsOnError, nil, v1.PodSucceeded, "OK"},
	}
	for _, tc := range cases {
		c := framework.Busybox("c", "/bin/sh", "-c", tc.script)
		c.TerminationMessagePath, c.TerminationMessagePolicy = tc.path, tc.policy
		if tc.user != nil {
			c.SecurityContext = &v1.SecurityContext{RunAsUser: tc.user}
		}
		pod := framework.PodFor(node, ns, tc.name, c)
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		framework.CreatePod(t, pod)
	}
	for _, tc := range cases {
		p := framework.WaitForPodPhase(t, ns, tc.name, tc.phase, 90*time.Second)
		term := p.Status.ContainerStatuses[0].State.Terminated
		if term == nil || term.Message != tc.want {
			t.Errorf("%s: terminated %+v; want message %q", tc.name, term, tc.want)
		}
	}

	pod := framework.PodFor(node, ns, "msg-restart", framework.Busybox("c", "sh", "-c", "echo -n bye > /dev/termination-log; exit 1"))
	framework.CreatePod(t, pod)
	p := framework.WaitForPod(t, ns, pod.Name, 90*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].LastTerminationState.Terminated != nil
	})
	if last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; last.Message != "bye" || last.ExitCode != 1 {
		t.Errorf("last state %+v; want exit 1 with message bye", last)
	}
}

// testActiveDeadline: a pod past its activeDeadlineSeconds fails with
// DeadlineExceeded and its containers are stopped, whether the deadline was
// there from the start or set on the running pod.
func testActiveDeadline(t *testing.T, node, ns string) {
	c := framework.Get(t).Client.CoreV1().Pods(ns)
	five := int64(5)
	fromStart := defaultGrace(framework.PodFor(node, ns, "deadline", framework.Busybox("c", onTerm("sleep 3600")...)))
	fromStart.Spec.ActiveDeadlineSeconds = &five
	created := []*v1.Pod{framework.CreatePod(t, fromStart)}

	updated := defaultGrace(framework.PodFor(node, ns, "deadline-updated", framework.Busybox("c", onTerm("sleep 3600")...)))
	created = append(created, framework.CreatePod(t, updated))
	framework.WaitForPodPhase(t, ns, updated.Name, v1.PodRunning, 90*time.Second)
	patch := []byte(`{"spec":{"activeDeadlineSeconds":5}}`)
	if _, err := c.Patch(context.Background(), updated.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range created {
		got := framework.WaitForPod(t, ns, p.Name, 90*time.Second, func(p *v1.Pod) bool {
			return p.Status.Phase == v1.PodFailed && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Terminated != nil
		})
		if got.Status.Reason != "DeadlineExceeded" || got.Status.Message != "Pod was active on the node longer than the specified deadline" {
			t.Errorf("%s: reason %q message %q", p.Name, got.Status.Reason, got.Status.Message)
		}
		for _, pc := range framework.Containers(t, p.UID) {
			if pc.Running {
				t.Errorf("%s: container %s still running", p.Name, pc.ID)
			}
		}
		framework.Eventually(t, 30*time.Second, "DeadlineExceeded event", func() (bool, error) {
			return hasEvent(t, ns, p.Name, "DeadlineExceeded", "longer than the specified deadline"), nil
		})
	}
}

// graceWindow is well under the default 30 s grace period: an object gone
// within it was removed because its containers stopped, not by the
// framework's timer at the end of the grace period.
const graceWindow = 20 * time.Second

// testPromptDeletion: a container that exits on SIGTERM lets its pod leave
// the API as soon as it stopped, with the default grace period; nothing of
// it is left in podman.
func testPromptDeletion(t *testing.T, node, ns string) {
	pod := defaultGrace(framework.PodFor(node, ns, "prompt", framework.Busybox("c", onTerm("sleep 3600")...)))
	created := framework.CreatePod(t, pod)
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != 30 {
		t.Fatalf("grace period %v; want the default 30 s", g)
	}
	final := watchFinalStatus(t, ns, pod.Name)
	framework.DeletePod(t, ns, pod.Name, nil)
	framework.WaitForPodGone(t, ns, pod.Name, graceWindow)
	assertEnded(t, final(), v1.PodSucceeded, 0)
	framework.Eventually(t, 30*time.Second, "the backend's objects removed", func() (bool, error) {
		return len(framework.Sandboxes(t, created.UID)) == 0 && len(framework.Containers(t, created.UID)) == 0, nil
	})
}

// testIgnoredSIGTERM: a container that ignores SIGTERM (a shell's sleep as
// PID 1) still runs well into the grace period, and is killed at its end.
func testIgnoredSIGTERM(t *testing.T, node, ns string) {
	pod := defaultGrace(framework.PodFor(node, ns, "stubborn", framework.Busybox("c", "sleep", "3600")))
	created := framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	exits := framework.RecordExits(t, created.UID)
	final := watchFinalStatus(t, ns, pod.Name)
	framework.DeletePod(t, ns, pod.Name, nil)
	time.Sleep(graceWindow)
	running := 0
	for _, c := range framework.Containers(t, created.UID) {
		if c.Running {
			running++
		}
	}
	if running != 1 {
		t.Fatalf("%d containers running %v into the grace period; want the one that ignores SIGTERM", running, graceWindow)
	}
	if _, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("pod object gone while its container runs: %v", err)
	}
	framework.WaitForPodGone(t, ns, pod.Name, 60*time.Second)
	if code := exits.Code("c"); code != 137 {
		t.Errorf("container exited %d; want 137 (SIGKILL at the end of the grace period)", code)
	}
	assertEnded(t, final(), v1.PodFailed, 137)
}

// watchFinalStatus watches the pod from now on; the returned func gives the
// object the API held when the pod went, once the pod is gone: how a user
// watching the pod, or its controller, last saw it.
func watchFinalStatus(t *testing.T, ns, name string) func() *v1.Pod {
	w, err := framework.Get(t).Client.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatalf("watch pod: %v", err)
	}
	t.Cleanup(w.Stop)
	gone := make(chan *v1.Pod, 1)
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && ev.Type == watch.Deleted {
				gone <- p
				return
			}
		}
	}()
	return func() *v1.Pod {
		select {
		case p := <-gone:
			return p
		case <-time.After(10 * time.Second): // called once the pod is gone: the event is on its way
			t.Fatalf("no delete event for pod %s", name)
			return nil
		}
	}
}

// assertEnded checks that the pod's last status in the API says how it
// ended, as the kubelet writes it before it deletes the pod: a terminal
// phase, and its one container terminated with code.
func assertEnded(t *testing.T, p *v1.Pod, phase v1.PodPhase, code int32) {
	t.Helper()
	if p.Status.Phase != phase || len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("last status in the API: phase %s, %d container statuses; want %s and 1", p.Status.Phase, len(p.Status.ContainerStatuses), phase)
	}
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != code {
		t.Errorf("last container state in the API %+v; want terminated with exit code %d", p.Status.ContainerStatuses[0].State, code)
	}
}

// testForcedDeletion: a forced deletion (grace 0) still gives a container
// with a SIGTERM handler the kubelet's minimum window, in which its handler
// runs and exits 0; a container whose init cannot receive SIGTERM is
// killed. Both leave nothing in podman.
func testForcedDeletion(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "forced",
		framework.Busybox("handler", onTerm("sleep 3600")...), framework.Busybox("plain", "sleep", "3600"))
	created := framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	exits := framework.RecordExits(t, created.UID)
	zero := int64(0)
	framework.DeletePod(t, ns, pod.Name, &zero)
	if code := exits.Code("handler"); code != 0 {
		t.Errorf("container with a TERM handler exited %d; want 0 from its handler", code)
	}
	if code := exits.Code("plain"); code != 137 {
		t.Errorf("container without a TERM handler exited %d; want 137 (SIGKILL)", code)
	}
	framework.Eventually(t, 30*time.Second, "the backend's objects removed", func() (bool, error) {
		return len(framework.Sandboxes(t, created.UID)) == 0 && len(framework.Containers(t, created.UID)) == 0, nil
	})
}

// testRolloutRestart: `kubectl rollout restart` of a 2-replica Deployment
// whose containers exit on SIGTERM completes, and its old pods leave the
// API without waiting out the grace period.
func testRolloutRestart(t *testing.T, node, ns string) {
	tmpl := defaultGrace(framework.PodFor(node, ns, "roll", framework.Busybox("c", onTerm("sleep 3600")...)))
	replicas := int32(2)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "roll", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels}, Spec: tmpl.Spec},
		},
	}
	c := framework.Get(t).Client
	if _, err := c.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Kubectl(t, "-n", ns, "rollout", "status", "deployment/roll", "--timeout=120s")
	old, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=roll"})
	if err != nil || len(old.Items) != 2 {
		t.Fatalf("pods before the restart: %v %v", old, err)
	}
	start := time.Now()
	framework.Kubectl(t, "-n", ns, "rollout", "restart", "deployment/roll")
	framework.Kubectl(t, "-n", ns, "rollout", "status", "deployment/roll", "--timeout=120s")
	for _, p := range old.Items {
		framework.WaitForPodGone(t, ns, p.Name, graceWindow)
	}
	t.Logf("rollout restart of 2 replicas: done, old pods gone, in %v", time.Since(start).Round(100*time.Millisecond))
	now, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=roll"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range now.Items {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d new pods running; want 2", running)
	}
}
