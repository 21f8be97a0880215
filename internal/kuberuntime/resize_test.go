package kuberuntime

import (
	"testing"

	"github.com/runlet/runlet/internal/allocation"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func limits(cpu, mem string) v1.ResourceRequirements {
	l := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	return v1.ResourceRequirements{Requests: l, Limits: l.DeepCopy()}
}

// A running container takes a resize in place, its pod cgroup first widened
// then settled; with a RestartContainer policy for the resource it is
// restarted instead.
func TestResizeInPlaceAndByRestart(t *testing.T) {
	for _, restart := range []bool{false, true} {
		e, _ := newResizeEnv(t)
		pod := newPod(v1.RestartPolicyAlways, "c")
		pod.Spec.Containers[0].Resources = limits("100m", "64Mi")
		if restart {
			pod.Spec.Containers[0].ResizePolicy = []v1.ContainerResizePolicy{{ResourceName: v1.ResourceMemory, RestartPolicy: v1.RestartContainer}}
		}
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		before := e.latest(pod, "c")
		if before.State != runtime.ContainerRunning {
			e.sync(pod) //nolint:errcheck // starts what the first sync created
		}
		pod.Spec.Containers[0].Resources = limits("200m", "128Mi")
		if !e.m.ResizeInProgress(pod, e.status(pod)) {
			t.Fatal("a running container short of its allocation is not a resize in progress")
		}
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		cur := e.latest(pod, "c")
		cfg, _ := e.f.Config(cur.ID)
		switch {
		case restart && e.f.Calls("UpdateContainerResources") != 0:
			t.Error("a RestartContainer policy resized in place")
		case restart && len(e.f.Stops()) == 0:
			t.Error("a RestartContainer policy did not stop the container")
		case !restart && (cur.ID != before.ID || cfg.Resources.MemoryBytes != 128<<20 || cfg.Resources.CPUMillis != 200):
			t.Errorf("in place: container %s (was %s), resources %+v; want the same container with 200m, 128Mi", cur.ID, before.ID, cfg.Resources)
		case !restart && e.f.Calls("UpdateSandboxResources") != 2:
			t.Errorf("pod cgroup updated %d times, want 2 (widened, then settled)", e.f.Calls("UpdateSandboxResources"))
		case !restart && e.m.ResizeInProgress(pod, e.status(pod)):
			t.Error("still in progress after the resize")
		}
	}
}

func TestChangedResources(t *testing.T) {
	if got := changedResources(limits("100m", "64Mi"), limits("0.1", "64Mi")); len(got) != 0 {
		t.Errorf("100m and 0.1 CPU differ: %v", got)
	}
	if got := changedResources(limits("100m", "64Mi"), v1.ResourceRequirements{}); len(got) != 2 {
		t.Errorf("limits lifted: changed %v, want cpu and memory", got)
	}
}

// A running init container that is no sidecar takes a resize in place too,
// as on the v1.37 kubelet, and the regular containers still wait for it.
func TestRunningInitContainerResizedInPlace(t *testing.T) {
	e, _ := newResizeEnv(t)
	pod := withInit(newPod(v1.RestartPolicyAlways, "main"), "init")
	pod.Spec.InitContainers[0].Resources = limits("100m", "64Mi")
	for range 2 {
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
	}
	before := e.latest(pod, "init")
	if before.State != runtime.ContainerRunning {
		t.Fatalf("init container %s; want it running", before.State)
	}
	pod.Spec.InitContainers[0].Resources = limits("200m", "128Mi")
	e.resizeInPlace(t, pod, before, 200, 128<<20)
	if c, _ := e.status(pod).Latest("main"); c != nil {
		t.Error("main started while the init container runs")
	}
}

// A pod-level resize moves the pod cgroup and, in place, the limits of the
// containers that inherit the pod's, and is recorded as in force once done.
func TestPodLevelResizeInPlace(t *testing.T) {
	e, rec := newResizeEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}
	plr := limits("1", "128Mi")
	pod.Spec.Resources = &plr
	if err := rec.Admit(pod); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
	}
	before := e.latest(pod, "c")
	if cfg, _ := e.f.Config(before.ID); cfg.Resources.MemoryBytes != 128<<20 || cfg.Resources.CPUMillis != 1000 {
		t.Fatalf("container resources %+v; want the pod's limits, 1 CPU and 128Mi", cfg.Resources)
	}
	if e.m.ResizeInProgress(pod, e.status(pod)) {
		t.Fatal("a pod that has its allocation is a resize in progress")
	}
	resized := pod.DeepCopy()
	bigger := limits("2", "256Mi")
	resized.Spec.Resources = &bigger
	if err := rec.SetAllocated(resized); err != nil {
		t.Fatal(err)
	}
	e.resizeInPlace(t, resized, before, 2000, 256<<20)
	sb, _ := e.f.SandboxConfig(e.status(resized).Sandbox().ID)
	if sb.Resources.MemoryBytes != 256<<20 || sb.Resources.CPUMillis != 2000 || e.f.Calls("UpdateSandboxResources") != 2 {
		t.Errorf("pod cgroup %+v after %d updates; want 2 CPU, 256Mi, widened then settled", sb.Resources, e.f.Calls("UpdateSandboxResources"))
	}
	if got := e.m.PodCgroup(resized); got.MemoryBytes != 256<<20 {
		t.Errorf("pod cgroup in force %+v; want 256Mi", got)
	}
}

// resizeInPlace syncs a pod that is a resize in progress, and checks that
// the container before runs on with cpu millicores and mem bytes, and the
// resize is done.
func (e *env) resizeInPlace(t *testing.T, pod *v1.Pod, before *runtime.Container, cpu, mem int64) {
	t.Helper()
	if !e.m.ResizeInProgress(pod, e.status(pod)) {
		t.Fatal("a pod short of its allocation is not a resize in progress")
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	name := before.Labels[runtime.LabelContainerName]
	cur := e.latest(pod, name)
	cfg, _ := e.f.Config(cur.ID)
	if cur.ID != before.ID || cfg.Resources.MemoryBytes != mem || cfg.Resources.CPUMillis != cpu {
		t.Errorf("container %s %s (was %s), resources %+v; want the same container with %dm, %d bytes", name, cur.ID, before.ID, cfg.Resources, cpu, mem)
	}
	if e.m.ResizeInProgress(pod, e.status(pod)) {
		t.Error("still in progress after the resize")
	}
}

// newResizeEnv is an env whose manager keeps its resource records.
func newResizeEnv(t *testing.T) (*env, *allocation.Manager) {
	t.Helper()
	e := newEnv(t)
	rec, err := allocation.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.m.resources = rec
	return e, rec
}
