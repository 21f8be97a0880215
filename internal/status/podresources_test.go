package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPodLevelResources: a pod with pod-level resources reports its
// allocated requests and, while it runs, what is in force; its container
// without resources of its own shows none, though its cgroup holds the
// pod's limits, as on the kubelet.
func TestPodLevelResources(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "c")
	l := v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")}
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: l, Limits: l}
	inForce := &v1.ResourceRequirements{Requests: l, Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m"), v1.ResourceMemory: resource.MustParse("64Mi")}}
	in := Input{Pod: pod, Runtime: podStatus(running("id1", "c", 0)), RuntimeName: "podman", PodInForce: func() *v1.ResourceRequirements { return inForce },
		Actuated: func(string) (v1.ResourceRequirements, bool) { return v1.ResourceRequirements{Limits: l}, true }}
	st := Generate(in)
	if !apiequality.Semantic.DeepEqual(st.AllocatedResources, l) {
		t.Errorf("allocatedResources %v; want the pod-level requests %v", st.AllocatedResources, l)
	}
	if st.Resources == nil || !apiequality.Semantic.DeepEqual(st.Resources.Limits, inForce.Limits) {
		t.Errorf("resources of the running pod %+v; want what is in force %+v", st.Resources, inForce)
	}
	if r := st.ContainerStatuses[0].Resources; r == nil || r.Limits != nil || r.Requests != nil {
		t.Errorf("container status resources %+v; want none, as the container declares none", r)
	}

	in.Runtime = podStatus()
	st = Generate(in)
	if st.Phase == v1.PodRunning || st.Resources == nil || !apiequality.Semantic.DeepEqual(st.Resources.Limits, l) {
		t.Errorf("phase %s, resources %+v; want a pending pod's allocated limits %v", st.Phase, st.Resources, l)
	}
}
