package node

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseReservation(t *testing.T) {
	got, err := ParseReservation(map[string]string{"cpu": "200m", "memory": "1Gi", "pid": "1000", "ephemeral-storage": "1Gi"})
	if err != nil || len(got) != 4 || got.Cpu().MilliValue() != 200 {
		t.Errorf("%v, %v", got, err)
	}
	for _, bad := range []map[string]string{{"gpu": "1"}, {"cpu": "lots"}, {"memory": "-1Gi"}} {
		if _, err := ParseReservation(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestAllocatable(t *testing.T) {
	q := resource.MustParse
	capacity := v1.ResourceList{v1.ResourceCPU: q("2"), v1.ResourceMemory: q("4Gi"), v1.ResourcePods: q("110")}
	got := Allocatable(capacity, v1.ResourceList{v1.ResourceCPU: q("500m"), ResourcePID: q("100")},
		v1.ResourceList{v1.ResourceCPU: q("2"), v1.ResourceMemory: q("1Gi")})
	if got.Cpu().MilliValue() != 0 || got.Memory().Value() != 3<<30 || got.Pods().Value() != 110 {
		t.Errorf("allocatable = %v; want cpu floored at 0, memory 3Gi, pods untouched", got)
	}
	if _, ok := got[ResourcePID]; ok {
		t.Error("pid appeared in allocatable")
	}
	if capacity.Cpu().MilliValue() != 2000 {
		t.Error("capacity was changed")
	}
}
