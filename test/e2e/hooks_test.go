package e2e

import (
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestLifecycleHooks runs postStart and preStop hooks of each kind (exec,
// httpGet, sleep) on one runlet node, with the default grace period. HTTP
// hooks and exec hooks that call out land in a test server pod's log.
func TestLifecycleHooks(t *testing.T) {
	t.Parallel()
	framework.EnsureImages(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	node := rl.NodeName
	tgt := hookTarget{ns: framework.Namespace(t)}
	framework.CreatePod(t, userPod(node, tgt.ns, "hook-target", testServer("web")))
	tgt.ip = framework.WaitForPodReady(t, tgt.ns, "hook-target", 90*time.Second).Status.PodIP

	for name, test := range map[string]func(*testing.T, string, string, hookTarget){
		"PostStartExec":       testPostStartExec,
		"HTTPHooks":           testHTTPHooks,
		"PreStopExec":         testPreStopExec,
		"PreStopSleep":        testPreStopSleep,
		"PreStopSleepCut":     testPreStopSleepCut,
		"FailedPostStartHook": testFailedPostStart,
		"FailedPreStopHook":   testFailedPreStop,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, node, framework.Namespace(t), tgt)
		})
	}
}

// hookTarget is the test server pod hooks call: its namespace and IP.
type hookTarget struct{ ns, ip string }

// waitForHit waits until the target server logged a request containing text.
func (h hookTarget) waitForHit(t *testing.T, text string) {
	t.Helper()
	waitForLog(t, h.ns, "hook-target", "web", text, 30*time.Second)
}

// testPostStartExec: the postStart exec hook runs in the container once it
// has started; the container's command waits for the hook's file.
func testPostStartExec(t *testing.T, node, ns string, _ hookTarget) {
	c := framework.Busybox("main", "sh", "-c", "until [ -f /tmp/hook ]; do sleep 0.1; done; cat /tmp/hook; sleep 3600")
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "echo from-poststart >/tmp/hook"}}}}
	framework.CreatePod(t, userPod(node, ns, "poststart-exec", c))
	waitForLog(t, ns, "poststart-exec", "main", "from-poststart", 90*time.Second)
}

// testHTTPHooks: postStart and preStop httpGet hooks with a host reach the
// target server, in that order, with runlet's lifecycle user agent.
func testHTTPHooks(t *testing.T, node, ns string, tgt hookTarget) {
	get := func(msg string) *v1.LifecycleHandler {
		return &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Host: tgt.ip, Port: intstr.FromInt32(8080), Path: "/echo?msg=" + msg}}
	}
	c := sigtermSleeper("main")
	c.Lifecycle = &v1.Lifecycle{PostStart: get("poststart-" + ns), PreStop: get("prestop-" + ns)}
	framework.CreatePod(t, userPod(node, ns, "http-hooks", c))
	framework.WaitForPodReady(t, ns, "http-hooks", 90*time.Second)
	tgt.waitForHit(t, `GET /echo?msg=poststart-`+ns+` ua="kube-lifecycle/1.37"`)

	framework.DeletePod(t, ns, "http-hooks", nil)
	tgt.waitForHit(t, "GET /echo?msg=prestop-"+ns)
	framework.WaitForPodGone(t, ns, "http-hooks", 60*time.Second)
}

// testPreStopExec: the preStop exec hook runs in the container before it is
// stopped (it calls the target server with busybox wget).
func testPreStopExec(t *testing.T, node, ns string, tgt hookTarget) {
	c := sigtermSleeper("main")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{
		Command: []string{"wget", "-q", "-O-", "http://" + tgt.ip + ":8080/echo?msg=prestop-exec-" + ns}}}}
	framework.CreatePod(t, userPod(node, ns, "prestop-exec", c))
	framework.WaitForPodReady(t, ns, "prestop-exec", 90*time.Second)
	framework.DeletePod(t, ns, "prestop-exec", nil)
	tgt.waitForHit(t, "GET /echo?msg=prestop-exec-"+ns)
	framework.WaitForPodGone(t, ns, "prestop-exec", 60*time.Second)
}

// testPreStopSleep: a preStop sleep holds off SIGTERM for its duration
// (the container logs when SIGTERM came); a zero sleep holds off nothing.
func testPreStopSleep(t *testing.T, node, ns string, _ hookTarget) {
	c := framework.Busybox("main", "sh", "-c", "trap 'echo TERM; exit 0' TERM; sleep 3600 & wait")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 5}}}
	framework.CreatePod(t, userPod(node, ns, "prestop-sleep", c))
	framework.WaitForPodReady(t, ns, "prestop-sleep", 90*time.Second)
	deleted := time.Now()
	framework.DeletePod(t, ns, "prestop-sleep", nil)
	framework.WaitForPodGone(t, ns, "prestop-sleep", 60*time.Second)
	// A lower bound only: the container exits on SIGTERM and the pod leaves
	// the API once it stopped, so the sleep must have run before SIGTERM.
	if gone := time.Since(deleted); gone < 4*time.Second {
		t.Fatalf("pod gone %s after the delete; the 5 s preStop sleep did not run first", gone)
	}

	zero := framework.Busybox("main", "sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")
	zero.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 0}}}
	framework.CreatePod(t, userPod(node, ns, "prestop-sleep-zero", zero))
	framework.WaitForPodReady(t, ns, "prestop-sleep-zero", 90*time.Second)
	framework.DeletePod(t, ns, "prestop-sleep-zero", nil)
	framework.WaitForPodGone(t, ns, "prestop-sleep-zero", 60*time.Second)
}

// testPreStopSleepCut: a delete with a shorter grace period while a preStop
// sleep runs cuts the sleep (a 250 s sleep within a 300 s grace, then a
// delete with 5 s: the pod is gone long before either would end).
func testPreStopSleepCut(t *testing.T, node, ns string, _ hookTarget) {
	c := sigtermSleeper("main")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 250}}}
	pod := userPod(node, ns, "prestop-cut", c)
	long := int64(300)
	pod.Spec.TerminationGracePeriodSeconds = &long
	framework.CreatePod(t, pod)
	framework.WaitForPodReady(t, ns, pod.Name, 90*time.Second)
	framework.DeletePod(t, ns, pod.Name, nil)
	// The pod is terminating: its container is still running its preStop.
	framework.WaitForPod(t, ns, pod.Name, 30*time.Second, func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	waitForEvent(t, ns, pod.Name, "Killing", "Stopping container main", 30*time.Second)
	short := int64(5)
	framework.DeletePod(t, ns, pod.Name, &short)
	framework.WaitForPodGone(t, ns, pod.Name, 90*time.Second)
}

// testFailedPostStart: a failing postStart hook kills the container, with
// the kubelet's events, and the container is restarted per its policy.
func testFailedPostStart(t *testing.T, node, ns string, _ hookTarget) {
	c := sigtermSleeper("main")
	c.Lifecycle = &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}}}
	framework.CreatePod(t, userPod(node, ns, "poststart-fails", c))
	waitForEvent(t, ns, "poststart-fails", "FailedPostStartHook", "PostStartHook failed", 90*time.Second)
	waitForEvent(t, ns, "poststart-fails", "Killing", "FailedPostStartHook", 30*time.Second)
	framework.WaitForPod(t, ns, "poststart-fails", 120*time.Second, func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
}

// testFailedPreStop: a failing preStop hook gives FailedPreStopHook and the
// container is stopped anyway.
func testFailedPreStop(t *testing.T, node, ns string, _ hookTarget) {
	c := sigtermSleeper("main")
	c.Lifecycle = &v1.Lifecycle{PreStop: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"sh", "-c", "exit 3"}}}}
	framework.CreatePod(t, userPod(node, ns, "prestop-fails", c))
	framework.WaitForPodReady(t, ns, "prestop-fails", 90*time.Second)
	framework.DeletePod(t, ns, "prestop-fails", nil)
	waitForEvent(t, ns, "prestop-fails", "FailedPreStopHook", "PreStopHook failed", 30*time.Second)
	framework.WaitForPodGone(t, ns, "prestop-fails", 60*time.Second)
}
