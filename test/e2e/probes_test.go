package e2e

import (
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestProbes runs pods with liveness, readiness and startup probes of each
// kind (exec, httpGet, tcpSocket, grpc) on one runlet node, with the
// defaults a user gets. runlet sends the network probes itself; the test
// image has neither curl nor nc in the way.
func TestProbes(t *testing.T) {
	t.Parallel()
	framework.EnsureImages(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	node := rl.NodeName
	for name, test := range map[string]func(*testing.T, string, string){
		"ReadinessExec":    testReadinessExec,
		"ReadinessHTTP":    testReadinessHTTP,
		"LivenessRestarts": testLivenessRestarts,
		"StartupGates":     testStartupGates,
		"StartupFails":     testStartupFails,
		"TCP":              testTCPProbes,
		"GRPC":             testGRPCProbes,
		"Terminating":      testProbesWhileTerminating,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, node, framework.Namespace(t))
		})
	}
}

// testReadinessExec: an exec readiness probe drives the container's ready
// flag and the pod's Ready and ContainersReady conditions, both ways.
func testReadinessExec(t *testing.T, node, ns string) {
	c := framework.Busybox("main", "sleep", "3600")
	c.ReadinessProbe = fastProbe(execProbe("cat", "/tmp/ready"))
	pod := userPod(node, ns, "ready-exec", c)
	framework.CreatePod(t, pod)

	p := framework.WaitForPod(t, ns, pod.Name, 90*time.Second, runningUnready)
	if cs := containerStatus(p, "main"); cs.Ready || condStatus(p, v1.ContainersReady) != v1.ConditionFalse {
		t.Fatalf("running without /tmp/ready: want unready\n%s", framework.DescribePod(ns, pod.Name))
	}
	waitForEvent(t, ns, pod.Name, "Unhealthy", "Readiness probe failed: cat: can't open '/tmp/ready'", 30*time.Second)

	kubectlExec(t, ns, pod.Name, "main", "touch", "/tmp/ready")
	p = framework.WaitForPodReady(t, ns, pod.Name, 30*time.Second)
	if !containerStatus(p, "main").Ready || condStatus(p, v1.ContainersReady) != v1.ConditionTrue {
		t.Fatalf("ready pod with an unready container\n%s", framework.DescribePod(ns, pod.Name))
	}

	kubectlExec(t, ns, pod.Name, "main", "rm", "/tmp/ready")
	framework.WaitForPod(t, ns, pod.Name, 30*time.Second, runningUnready)
	if p := getPod(t, ns, pod.Name); containerStatus(p, "main").RestartCount != 0 {
		t.Fatalf("a readiness failure restarted the container\n%s", framework.DescribePod(ns, pod.Name))
	}
}

// testReadinessHTTP: an httpGet readiness probe on a named port with a
// header; the server sees runlet's kube-probe user agent and the header.
func testReadinessHTTP(t *testing.T, node, ns string) {
	c := testServer("web")
	c.ReadinessProbe = fastProbe(httpProbe("/healthz", intstr.FromString("http")))
	c.ReadinessProbe.HTTPGet.HTTPHeaders = []v1.HTTPHeader{{Name: "X-Probe", Value: "readiness"}}
	pod := userPod(node, ns, "ready-http", c)
	framework.CreatePod(t, pod)

	framework.WaitForPodReady(t, ns, pod.Name, 90*time.Second)
	waitForLog(t, ns, pod.Name, "web", `GET /healthz ua="kube-probe/1.37" x-probe="readiness"`, 30*time.Second)

	kubectlExec(t, ns, pod.Name, "web", "touch", "/tmp/unhealthy")
	framework.WaitForPod(t, ns, pod.Name, 30*time.Second, runningUnready)
	waitForEvent(t, ns, pod.Name, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", 30*time.Second)

	kubectlExec(t, ns, pod.Name, "web", "rm", "/tmp/unhealthy")
	framework.WaitForPodReady(t, ns, pod.Name, 30*time.Second)
}

// testLivenessRestarts: a failing httpGet liveness probe restarts the
// container, with the kubelet's Unhealthy and Killing events.
func testLivenessRestarts(t *testing.T, node, ns string) {
	c := testServer("web", "--unhealthy-after=3s")
	c.LivenessProbe = fastProbe(httpProbe("/healthz", intstr.FromInt32(8080)))
	pod := userPod(node, ns, "liveness", c)
	framework.CreatePod(t, pod)

	framework.WaitForPod(t, ns, pod.Name, 120*time.Second, func(p *v1.Pod) bool {
		cs := containerStatus(p, "web")
		return cs != nil && cs.RestartCount >= 1
	})
	waitForEvent(t, ns, pod.Name, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500", 10*time.Second)
	waitForEvent(t, ns, pod.Name, "Killing", "Container web failed liveness probe, will be restarted", 10*time.Second)
	p := getPod(t, ns, pod.Name)
	if last := containerStatus(p, "web").LastTerminationState.Terminated; last == nil {
		t.Fatalf("no last termination state after a liveness restart\n%s", framework.DescribePod(ns, pod.Name))
	}
}

// testStartupGates: until the startup probe succeeds the container is not
// started, not ready, and its (failing) liveness probe is not run.
func testStartupGates(t *testing.T, node, ns string) {
	c := framework.Busybox("main", "sleep", "3600")
	c.StartupProbe = &v1.Probe{ProbeHandler: execProbe("cat", "/tmp/started"), PeriodSeconds: 1, FailureThreshold: 600}
	c.LivenessProbe = fastProbe(execProbe("cat", "/tmp/alive"))
	pod := userPod(node, ns, "startup-gate", c)
	framework.CreatePod(t, pod)

	p := framework.WaitForPod(t, ns, pod.Name, 90*time.Second, runningUnready)
	if cs := containerStatus(p, "main"); cs.Started == nil || *cs.Started || cs.Ready {
		t.Fatalf("started or ready before the startup probe succeeded\n%s", framework.DescribePod(ns, pod.Name))
	}
	waitForEvent(t, ns, pod.Name, "Unhealthy", "Startup probe failed", 30*time.Second)
	if hasEvent(t, ns, pod.Name, "Unhealthy", "Liveness probe") {
		t.Fatalf("the liveness probe ran before the startup probe succeeded\n%s", framework.DescribePod(ns, pod.Name))
	}

	kubectlExec(t, ns, pod.Name, "main", "touch", "/tmp/alive", "/tmp/started")
	p = framework.WaitForPodReady(t, ns, pod.Name, 30*time.Second)
	if cs := containerStatus(p, "main"); cs.Started == nil || !*cs.Started || cs.RestartCount != 0 {
		t.Fatalf("after the startup probe succeeded\n%s", framework.DescribePod(ns, pod.Name))
	}
}

// testStartupFails: a startup probe that never succeeds restarts the
// container with the kubelet's message.
func testStartupFails(t *testing.T, node, ns string) {
	c := framework.Busybox("main", "sleep", "3600")
	c.StartupProbe = &v1.Probe{ProbeHandler: execProbe("false"), PeriodSeconds: 1, FailureThreshold: 3}
	pod := userPod(node, ns, "startup-fails", c)
	framework.CreatePod(t, pod)

	framework.WaitForPod(t, ns, pod.Name, 120*time.Second, func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.RestartCount >= 1
	})
	waitForEvent(t, ns, pod.Name, "Killing", "Container main failed startup probe, will be restarted", 10*time.Second)
}

// testTCPProbes: a tcpSocket readiness probe on a listening port makes the
// pod ready; one on a closed port keeps another unready.
func testTCPProbes(t *testing.T, node, ns string) {
	ok := testServer("web")
	ok.ReadinessProbe = fastProbe(v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("http")}})
	framework.CreatePod(t, userPod(node, ns, "tcp-open", ok))

	closed := testServer("web")
	closed.ReadinessProbe = fastProbe(v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(9999)}})
	framework.CreatePod(t, userPod(node, ns, "tcp-closed", closed))

	framework.WaitForPodReady(t, ns, "tcp-open", 90*time.Second)
	framework.WaitForPod(t, ns, "tcp-closed", 90*time.Second, runningUnready)
	waitForEvent(t, ns, "tcp-closed", "Unhealthy", "connection refused", 30*time.Second)
}

// testGRPCProbes: a grpc readiness probe on a serving health server makes
// the pod ready; a liveness probe on a NOT_SERVING service restarts.
func testGRPCProbes(t *testing.T, node, ns string) {
	ok := testServer("web")
	ok.ReadinessProbe = fastProbe(v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 5000}})
	framework.CreatePod(t, userPod(node, ns, "grpc-serving", ok))

	down := testServer("web")
	service := "down"
	down.LivenessProbe = fastProbe(v1.ProbeHandler{GRPC: &v1.GRPCAction{Port: 5000, Service: &service}})
	framework.CreatePod(t, userPod(node, ns, "grpc-down", down))

	framework.WaitForPodReady(t, ns, "grpc-serving", 90*time.Second)
	framework.WaitForPod(t, ns, "grpc-down", 120*time.Second, func(p *v1.Pod) bool {
		cs := containerStatus(p, "web")
		return cs != nil && cs.RestartCount >= 1
	})
	waitForEvent(t, ns, "grpc-down", "Unhealthy", `Liveness probe failed: service unhealthy (responded with "NOT_SERVING")`, 10*time.Second)
	if p := getPod(t, ns, "grpc-serving"); containerStatus(p, "web").RestartCount != 0 {
		t.Fatalf("a serving gRPC server was restarted\n%s", framework.DescribePod(ns, "grpc-serving"))
	}
}

// testProbesWhileTerminating: a pod that is being deleted turns unready when
// its readiness probe says so (its container stays reachable while it winds
// down), and its liveness probe no longer runs: no restart, no Killing for
// a failed liveness probe.
func testProbesWhileTerminating(t *testing.T, node, ns string) {
	c := framework.Busybox("main", "sh", "-c",
		"trap 'rm -f /tmp/ready /tmp/alive; sleep 20; exit 0' TERM; touch /tmp/ready /tmp/alive; sleep 3600 & wait")
	c.ReadinessProbe = fastProbe(execProbe("cat", "/tmp/ready"))
	c.LivenessProbe = fastProbe(execProbe("cat", "/tmp/alive"))
	pod := userPod(node, ns, "terminating", c)
	framework.CreatePod(t, pod)
	framework.WaitForPodReady(t, ns, pod.Name, 90*time.Second)

	framework.DeletePod(t, ns, pod.Name, nil)
	framework.WaitForPod(t, ns, pod.Name, 20*time.Second, func(p *v1.Pod) bool {
		return p.DeletionTimestamp != nil && condStatus(p, v1.PodReady) == v1.ConditionFalse
	})
	framework.WaitForPodGone(t, ns, pod.Name, 90*time.Second)
	if hasEvent(t, ns, pod.Name, "Killing", "failed liveness probe") {
		t.Fatalf("a terminating pod was killed for its liveness probe\n%s", framework.DescribePod(ns, pod.Name))
	}
}
