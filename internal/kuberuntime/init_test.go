package kuberuntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func withInit(pod *v1.Pod, names ...string) *v1.Pod {
	for _, n := range names {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: n, Image: "img:1"})
	}
	return pod
}

// TestInitContainersRunInOrder: one init container at a time, the regular
// containers only once every init container exited 0.
func TestInitContainersRunInOrder(t *testing.T) {
	e := newEnv(t)
	pod := withInit(newPod(v1.RestartPolicyAlways, "main"), "init1", "init2")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	st := e.status(pod)
	if c, _ := st.Latest("init1"); c == nil {
		t.Fatal("init1 not started")
	}
	for _, n := range []string{"init2", "main"} {
		if c, _ := st.Latest(n); c != nil {
			t.Fatalf("%s started before init1 finished", n)
		}
	}
	if err := e.f.Exit(e.latest(pod, "init1").ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.status(pod).Latest("main"); c != nil {
		t.Fatal("main started before init2 finished")
	}
	if err := e.f.Exit(e.latest(pod, "init2").ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	e.latest(pod, "main")
	if n := e.f.Calls("CreateContainer"); n != 3 {
		t.Errorf("%d containers created, want 3 (no init container re-run)", n)
	}
}

// TestInitContainerFailure: under Never the pod ends; otherwise the init
// container is retried and the regular container waits.
func TestInitContainerFailure(t *testing.T) {
	for _, policy := range []v1.RestartPolicy{v1.RestartPolicyNever, v1.RestartPolicyAlways} {
		e := newEnv(t)
		pod := withInit(newPod(policy, "main"), "init")
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		if err := e.f.Exit(e.latest(pod, "init").ID, 2); err != nil {
			t.Fatal(err)
		}
		res, _ := e.sync(pod)
		if got := res.Terminal; got != (policy == v1.RestartPolicyNever) {
			t.Errorf("%s: Terminal = %v", policy, got)
		}
		if c, _ := e.status(pod).Latest("main"); c != nil {
			t.Errorf("%s: main started although init failed", policy)
		}
		if policy == v1.RestartPolicyAlways && e.latest(pod, "init").Attempt != 1 {
			t.Errorf("%s: init container not retried", policy)
		}
	}
}
