package podman

import (
	"reflect"
	"testing"

	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

func TestSpecRLimits(t *testing.T) {
	if got := specRLimits(podmanservice.Limits{NoFile: 20000, NProc: 32768, CapSysResource: true}); got != nil {
		t.Errorf("with CAP_SYS_RESOURCE: %v; want podman's defaults (nil)", got)
	}
	got := specRLimits(podmanservice.Limits{NoFile: 1 << 30, NProc: 4096})
	want := []libpod.RLimit{{Type: "nofile", Hard: 1 << 20, Soft: 1 << 20}, {Type: "nproc", Hard: 4096, Soft: 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("r_limits = %v; want %v", got, want)
	}
}

func TestChooseOCIRuntime(t *testing.T) {
	var v1, v2 libpod.Info
	v1.Host.CgroupVersion, v1.Host.OCIRuntime.Name = "v1", "crun"
	v2.Host.CgroupVersion, v2.Host.OCIRuntime.Name = "v2", "crun"
	if got := chooseOCIRuntime(v2, "", true); got != "crun" {
		t.Errorf("cgroup v2: %s; want the service default crun", got)
	}
	if got := chooseOCIRuntime(v1, "kata", true); got != "kata" {
		t.Errorf("override: %s", got)
	}
	if got := chooseOCIRuntime(v1, "", true); got != podmanservice.OCIRuntime("v1", "crun") {
		t.Errorf("cgroup v1: %s; want what the host needs", got)
	}
	if got := chooseOCIRuntime(v1, "", false); got != "crun" {
		t.Errorf("remote service: %s; want its own default, whatever this host has installed", got)
	}
}
