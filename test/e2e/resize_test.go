package e2e

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInPlaceResize: a resize through the pods/resize subresource changes a
// running container's cgroup (and its pod's) without a restart and is
// reported in its status; one that does not fit beside another pod waits as
// Deferred until that pod goes; one made while runlet is down (SIGKILLed) is
// applied when it is back (the allocation survives the restart). The apiserver
// itself refuses a resize beyond the node's allocatable.
func TestInPlaceResize(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "rs", framework.Sleeper("c"))
	pod.Spec.Containers[0].Resources = resources("100m", "200m", "32Mi", "64Mi")
	framework.CreatePod(t, pod)
	p := framework.WaitForPodReady(t, ns, "rs", 90*time.Second)
	checkStatusResources(t, p, resources("100m", "200m", "32Mi", "64Mi"))
	id := p.Status.ContainerStatuses[0].ContainerID
	expectCgroup(t, ns, "rs", "20000 67108864")

	resize(t, ns, "rs", resources("150m", "300m", "48Mi", "96Mi"))
	p = waitResized(t, ns, "rs", 2)
	checkStatusResources(t, p, resources("150m", "300m", "48Mi", "96Mi"))
	expectCgroup(t, ns, "rs", "30000 100663296")
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("resized in place: container %s restarts %d; want the same %s, 0", cs.ContainerID, cs.RestartCount, id)
	}
	if !hasEvent(t, ns, "rs", "ResizeCompleted", `"generation":2`) {
		t.Error("no ResizeCompleted event for generation 2")
	}

	testInitContainerResize(t, rl.NodeName, ns)
	testPodLevelResize(t, rl.NodeName, ns)

	hog := framework.PodFor(rl.NodeName, ns, "hog", framework.Sleeper("c"))
	hog.Spec.Containers[0].Resources = resources("500m", "500m", "16Mi", "16Mi")
	framework.CreatePod(t, hog)
	framework.WaitForPodReady(t, ns, "hog", 90*time.Second)
	resize(t, ns, "rs", resources("1600m", "1600m", "48Mi", "96Mi"))
	framework.WaitForPod(t, ns, "rs", time.Minute, func(p *v1.Pod) bool {
		c := condition(p, v1.PodResizePending)
		return c != nil && c.Reason == v1.PodReasonDeferred && c.ObservedGeneration == 3 && strings.Contains(c.Message, "cpu")
	})
	if !hasEvent(t, ns, "rs", "ResizeDeferred", "Node didn't have enough resource: cpu") {
		t.Error("no ResizeDeferred event naming the CPU")
	}
	framework.DeletePod(t, ns, "hog", nil)
	p = waitResized(t, ns, "rs", 3) // room once the other pod went
	checkStatusResources(t, p, resources("1600m", "1600m", "48Mi", "96Mi"))
	expectCgroup(t, ns, "rs", "160000 100663296")

	rl.Kill() // a crash: nothing could be written on the way out
	resize(t, ns, "rs", resources("150m", "400m", "48Mi", "128Mi"))
	rl.Start()
	p = waitResized(t, ns, "rs", 4)
	checkStatusResources(t, p, resources("150m", "400m", "48Mi", "128Mi"))
	expectCgroup(t, ns, "rs", "40000 134217728")
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != id {
		t.Errorf("after a restart of runlet the container is %s, want the same %s", cs.ContainerID, id)
	}
}

// testInitContainerResize: a running init container that is no sidecar is
// resized in place, as on the v1.37 kubelet. The node declares the feature
// (InPlacePodVerticalScalingInitContainers), without which the apiserver
// refuses the resize.
func testInitContainerResize(t *testing.T, node, ns string) {
	n, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(n.Status.DeclaredFeatures, "InPlacePodVerticalScalingInitContainers") {
		t.Errorf("node declares %v; want InPlacePodVerticalScalingInitContainers among them", n.Status.DeclaredFeatures)
	}
	pod := framework.PodFor(node, ns, "rsi", framework.Sleeper("main"))
	pod.Spec.InitContainers = []v1.Container{framework.Sleeper("init")}
	pod.Spec.InitContainers[0].Resources = resources("100m", "200m", "32Mi", "64Mi")
	framework.CreatePod(t, pod)
	p := framework.WaitForPod(t, ns, "rsi", 90*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.InitContainerStatuses) == 1 && p.Status.InitContainerStatuses[0].State.Running != nil
	})
	id := p.Status.InitContainerStatuses[0].ContainerID
	want := resources("150m", "300m", "48Mi", "96Mi")
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	p.Spec.InitContainers[0].Resources = want
	if _, err := pods.UpdateResize(context.Background(), "rsi", p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("resize of the init container: %v", err)
	}
	p = framework.WaitForPod(t, ns, "rsi", time.Minute, func(p *v1.Pod) bool {
		return p.Status.ObservedGeneration == 2 && condition(p, v1.PodResizePending) == nil &&
			condition(p, v1.PodResizeInProgress) == nil && len(p.Status.InitContainerStatuses) == 1 &&
			p.Status.InitContainerStatuses[0].Resources != nil &&
			apiequality.Semantic.DeepEqual(p.Status.InitContainerStatuses[0].Resources.Limits, want.Limits)
	})
	if cs := p.Status.InitContainerStatuses[0]; cs.ContainerID != id || cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("init container %s restarts %d running %v; want the same %s still running", cs.ContainerID, cs.RestartCount, cs.State.Running != nil, id)
	}
	framework.Eventually(t, 30*time.Second, "the init container's cgroup at 300m, 96Mi", func() (bool, error) {
		out, err := framework.KubectlE("exec", "-n", ns, "rsi", "-c", "init", "--", "cat", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
		return strings.Join(strings.Fields(out), " ") == "30000 100663296", err
	})
	framework.DeletePod(t, ns, "rsi", nil)
}

func resources(cpuReq, cpuLim, memReq, memLim string) v1.ResourceRequirements {
	return v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuReq), v1.ResourceMemory: resource.MustParse(memReq)},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpuLim), v1.ResourceMemory: resource.MustParse(memLim)},
	}
}

// resize patches the pod's container through the resize subresource.
func resize(t *testing.T, ns, name string, r v1.ResourceRequirements) {
	t.Helper()
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers[0].Resources = r
	if _, err := pods.UpdateResize(context.Background(), name, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("resize %s: %v", name, err)
	}
}

// waitResized waits for the status of generation gen with no resize
// condition left.
func waitResized(t *testing.T, ns, name string, gen int64) *v1.Pod {
	t.Helper()
	return framework.WaitForPod(t, ns, name, time.Minute, func(p *v1.Pod) bool {
		return p.Generation == gen && p.Status.ObservedGeneration == gen && framework.PodReady(p) &&
			condition(p, v1.PodResizePending) == nil && condition(p, v1.PodResizeInProgress) == nil
	})
}

func checkStatusResources(t *testing.T, p *v1.Pod, want v1.ResourceRequirements) {
	t.Helper()
	cs := p.Status.ContainerStatuses[0]
	if cs.Resources == nil || !apiequality.Semantic.DeepEqual(cs.Resources.Requests, want.Requests) || !apiequality.Semantic.DeepEqual(cs.Resources.Limits, want.Limits) {
		t.Errorf("status resources %+v, want %+v", cs.Resources, want)
	}
	if !apiequality.Semantic.DeepEqual(cs.AllocatedResources, want.Requests) {
		t.Errorf("allocatedResources %v, want %v", cs.AllocatedResources, want.Requests)
	}
}

// expectCgroup compares the container's CFS quota and memory limit (cgroup v1).
func expectCgroup(t *testing.T, ns, name, want string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, "cgroup settings "+want, func() (bool, error) {
		out, err := framework.KubectlE("exec", "-n", ns, name, "--", "cat", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
		return strings.Join(strings.Fields(out), " ") == want, err
	})
}

// testPodLevelResize: a resize of pod-level resources moves the pod's
// cgroup, and the limits of a container that has none of its own, in place;
// the pod's status reports its allocated requests and what is in force. A
// memory limit below what the pod uses is refused with the kubelet's
// reason, and the pod keeps running until the resize is taken back.
func testPodLevelResize(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "plr", framework.Sleeper("c"))
	first := resources("100m", "200m", "32Mi", "64Mi")
	pod.Spec.Resources = &first
	framework.CreatePod(t, pod)
	p := framework.WaitForPodReady(t, ns, "plr", 90*time.Second)
	checkPodStatusResources(t, p, first)
	id := p.Status.ContainerStatuses[0].ContainerID
	expectCgroup(t, ns, "plr", "20000 67108864")
	expectPodCgroup(t, p, "20000 67108864")

	second := resources("150m", "300m", "48Mi", "96Mi")
	resizePod(t, ns, "plr", second)
	p = waitResized(t, ns, "plr", 2)
	checkPodStatusResources(t, p, second)
	expectCgroup(t, ns, "plr", "30000 100663296")
	expectPodCgroup(t, p, "30000 100663296")
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("resized in place: container %s restarts %d; want the same %s, 0", cs.ContainerID, cs.RestartCount, id)
	}
	if !hasEvent(t, ns, "plr", "ResizeCompleted", `"generation":2`) {
		t.Error("no ResizeCompleted event for generation 2")
	}

	tiny := resources("150m", "300m", "10Ki", "10Ki")
	resizePod(t, ns, "plr", tiny)
	framework.WaitForPod(t, ns, "plr", time.Minute, func(p *v1.Pod) bool {
		c := condition(p, v1.PodResizeInProgress)
		return c != nil && c.Reason == v1.PodReasonError && strings.Contains(c.Message, "below current usage")
	})
	resizePod(t, ns, "plr", second)
	p = waitResized(t, ns, "plr", 4)
	checkPodStatusResources(t, p, second)
	expectPodCgroup(t, p, "30000 100663296")
	if cs := p.Status.ContainerStatuses[0]; cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("after a refused resize: container %s restarts %d; want the same %s, 0", cs.ContainerID, cs.RestartCount, id)
	}
	framework.DeletePod(t, ns, "plr", nil)
}

// resizePod sets the pod's own resources through the resize subresource.
func resizePod(t *testing.T, ns, name string, r v1.ResourceRequirements) {
	t.Helper()
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Resources = &r
	if _, err := pods.UpdateResize(context.Background(), name, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("resize of %s's pod-level resources: %v", name, err)
	}
}

func checkPodStatusResources(t *testing.T, p *v1.Pod, want v1.ResourceRequirements) {
	t.Helper()
	if r := p.Status.Resources; r == nil || !apiequality.Semantic.DeepEqual(r.Requests, want.Requests) || !apiequality.Semantic.DeepEqual(r.Limits, want.Limits) {
		t.Errorf("pod status resources %+v, want %+v", r, want)
	}
	if !apiequality.Semantic.DeepEqual(p.Status.AllocatedResources, want.Requests) {
		t.Errorf("pod allocatedResources %v, want %v", p.Status.AllocatedResources, want.Requests)
	}
}

// expectPodCgroup compares the CFS quota and memory limit of the pod's
// cgroup (cgroup v1) on the host: the ancestor of its running container's
// cgroup named after the pod's UID, as the kubelet names it and the
// upstream specs look for it.
func expectPodCgroup(t *testing.T, p *v1.Pod, want string) {
	t.Helper()
	var pid int
	for _, c := range framework.Containers(t, p.UID) {
		if c.Running {
			pid = c.PID
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if pid == 0 || err != nil {
		t.Fatalf("the cgroups of pod %s's container (pid %d): %v", p.Name, pid, err)
	}
	paths := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.SplitN(line, ":", 3); len(f) == 3 {
			for _, c := range strings.Split(f[1], ",") {
				paths[c] = framework.PodCgroupAbove(f[2], p.UID)
			}
		}
	}
	if paths["cpu"] == "" || paths["memory"] == "" {
		t.Fatalf("pod %s: no cgroup named after its UID above its container's (%s)", p.Name, b)
	}
	files := []string{path.Join("/sys/fs/cgroup/cpu", paths["cpu"], "cpu.cfs_quota_us"), path.Join("/sys/fs/cgroup/memory", paths["memory"], "memory.limit_in_bytes")}
	framework.Eventually(t, 30*time.Second, "pod cgroup settings "+want, func() (bool, error) {
		var got []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return false, err
			}
			got = append(got, strings.TrimSpace(string(b)))
		}
		return strings.Join(got, " ") == want, nil
	})
}
