package admission

import (
	"testing"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/sysctl"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func pod(name string, req v1.ResourceList) *v1.Pod {
	return podtest.New(name, podtest.Namespace("ns"),
		podtest.Containers(v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}))
}

// TestFit: the kubelet's arithmetic and messages, resource by resource in
// the scheduler's order.
func TestFit(t *testing.T) {
	alloc := rl("cpu", "2", "memory", "1Gi", "ephemeral-storage", "10Gi", "pods", "3")
	others := []*v1.Pod{pod("a", rl("cpu", "1500m", "memory", "512Mi")), pod("b", nil)}
	a := New(Config{Allocatable: alloc})
	cases := []struct {
		name        string
		req         v1.ResourceList
		reason, msg string
	}{
		{"fits", rl("cpu", "500m", "memory", "512Mi"), "", ""},
		{"no requests fit anywhere", nil, "", ""},
		{"cpu", rl("cpu", "501m"), "OutOfcpu", "Node didn't have enough resource: cpu, requested: 501, used: 1500, capacity: 2000"},
		{"memory", rl("memory", "513Mi"), "OutOfmemory", "Node didn't have enough resource: memory, requested: 537919488, used: 536870912, capacity: 1073741824"},
		{"cpu is reported before memory", rl("cpu", "3", "memory", "2Gi"), "OutOfcpu", "Node didn't have enough resource: cpu, requested: 3000, used: 1500, capacity: 2000"},
		{"ephemeral storage", rl("ephemeral-storage", "11Gi"), "OutOfephemeral-storage", "Node didn't have enough resource: ephemeral-storage, requested: 11811160064, used: 0, capacity: 10737418240"},
		{"hugepages the node lacks", rl("hugepages-2Mi", "2Mi"), "OutOfhugepages-2Mi", "Node didn't have enough resource: hugepages-2Mi, requested: 2097152, used: 0, capacity: 0"},
		{"unknown extended resources are ignored", rl("example.com/gpu", "1"), "", ""},
	}
	for _, tc := range cases {
		r := a.Admit(pod("new", tc.req), others)
		if r.Admit != (tc.reason == "") || r.Reason != tc.reason || r.Message != tc.msg {
			t.Errorf("%s: %+v; want reason %q message %q", tc.name, r, tc.reason, tc.msg)
		}
	}
	r := a.Admit(pod("new", nil), append(others, pod("c", nil)))
	if r.Reason != "OutOfpods" || r.Message != "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" {
		t.Errorf("a fourth pod: %+v", r)
	}
}

// TestFitInitContainers: the effective request is the larger of the init
// containers' and the sum of the others', plus the overhead.
func TestFitInitContainers(t *testing.T) {
	p := pod("new", rl("cpu", "100m"))
	p.Spec.InitContainers = []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: rl("cpu", "1")}}}
	p.Spec.Overhead = rl("cpu", "50m")
	r := New(Config{Allocatable: rl("cpu", "1")}).Admit(p, nil)
	if r.Reason != "OutOfcpu" || r.Message != "Node didn't have enough resource: cpu, requested: 1050, used: 0, capacity: 1000" {
		t.Errorf("%+v", r)
	}
}

func TestSysctlAdmission(t *testing.T) {
	allow, err := sysctl.NewAllowlist("6.1.0", []string{"kernel.msg*"})
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{Sysctls: allow})
	for _, tc := range []struct {
		sysctl      string
		hostNetwork bool
		msg         string
	}{
		{"kernel.shm_rmid_forced", false, ""},
		{"kernel/shm_rmid_forced", false, ""},
		{"net.ipv4.ip_unprivileged_port_start", false, ""},
		{"kernel.msgmax", false, ""}, // allowed by the flag's pattern
		{"kernel.shmmax", false, `forbidden sysctl: "kernel.shmmax" not allowlisted`},
		{"net.ipv4.ping_group_range", true, `forbidden sysctl: "net.ipv4.ping_group_range" not allowed with host Net enabled`},
	} {
		p := pod("s", nil)
		p.Spec.HostNetwork = tc.hostNetwork
		p.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: tc.sysctl, Value: "1"}}}
		r := a.Admit(p, nil)
		if tc.msg == "" && !r.Admit || tc.msg != "" && (r.Reason != "SysctlForbidden" || r.Message != tc.msg) {
			t.Errorf("%s: %+v; want %q", tc.sysctl, r, tc.msg)
		}
	}
	if _, err := sysctl.NewAllowlist("6.1.0", []string{"vm.swappiness"}); err == nil {
		t.Error("a sysctl that is not namespaced was accepted as allowed")
	}
}

func TestSupplementalGroupsPolicyAndAppArmor(t *testing.T) {
	a := New(Config{})
	p := pod("s", nil)
	strict := v1.SupplementalGroupsPolicyStrict
	p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroupsPolicy: &strict}
	if r := a.Admit(p, nil); r.Reason != "SupplementalGroupsPolicyNotSupported" || r.Message != "SupplementalGroupsPolicy=Strict is not supported in this node" {
		t.Errorf("Strict: %+v", r)
	}
	merge := v1.SupplementalGroupsPolicyMerge
	p.Spec.SecurityContext.SupplementalGroupsPolicy = &merge
	if r := a.Admit(p, nil); !r.Admit {
		t.Errorf("Merge: %+v", r)
	}
	p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}
	if r := a.Admit(p, nil); r.Reason != "AppArmor" || r.Message != "Cannot enforce AppArmor: AppArmor is not enabled on the host" {
		t.Errorf("AppArmor without AppArmor: %+v", r)
	}
	p.Spec.Containers[0].SecurityContext.AppArmorProfile.Type = v1.AppArmorProfileTypeUnconfined
	if r := a.Admit(p, nil); !r.Admit {
		t.Errorf("Unconfined needs nothing: %+v", r)
	}
	if r := New(Config{AppArmor: true}).Admit(p, nil); !r.Admit {
		t.Errorf("with AppArmor: %+v", r)
	}
}
