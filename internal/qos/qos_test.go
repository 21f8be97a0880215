package qos

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func req(r, l map[v1.ResourceName]string) v1.ResourceRequirements {
	conv := func(m map[v1.ResourceName]string) v1.ResourceList {
		out := v1.ResourceList{}
		for k, v := range m {
			out[k] = resource.MustParse(v)
		}
		return out
	}
	return v1.ResourceRequirements{Requests: conv(r), Limits: conv(l)}
}

func TestComputePodQOS(t *testing.T) {
	full := map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}
	cases := []struct {
		name string
		rs   []v1.ResourceRequirements
		want v1.PodQOSClass
	}{
		{"nothing", []v1.ResourceRequirements{{}}, v1.PodQOSBestEffort},
		{"equal requests and limits", []v1.ResourceRequirements{req(full, full)}, v1.PodQOSGuaranteed},
		{"cpu only", []v1.ResourceRequirements{req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}, map[v1.ResourceName]string{v1.ResourceCPU: "1"})}, v1.PodQOSBurstable},
		{"one guaranteed, one best effort", []v1.ResourceRequirements{req(full, full), {}}, v1.PodQOSBurstable},
		{"request below limit", []v1.ResourceRequirements{req(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "512Mi"}, full)}, v1.PodQOSBurstable},
	}
	for _, tc := range cases {
		pod := &v1.Pod{}
		for _, r := range tc.rs {
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Resources: r})
		}
		if got := ComputePodQOS(pod); got != tc.want {
			t.Errorf("%s: %s; want %s", tc.name, got, tc.want)
		}
	}
	pod := &v1.Pod{Status: v1.PodStatus{QOSClass: v1.PodQOSGuaranteed}}
	if GetPodQOS(pod) != v1.PodQOSGuaranteed {
		t.Error("the stored class was not kept")
	}
	r := req(full, full)
	pod = &v1.Pod{Spec: v1.PodSpec{Resources: &r, Containers: []v1.Container{{}}}}
	if got := ComputePodQOS(pod); got != v1.PodQOSGuaranteed {
		t.Errorf("pod-level resources: %s; want Guaranteed", got)
	}
}
