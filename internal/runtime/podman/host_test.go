package podman

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"golang.org/x/sys/unix"
)

func TestHardField(t *testing.T) {
	for line, want := range map[string]uint64{
		"Max processes             32768                32768                processes ": 32768,
		"Max open files            1024                 20000                files     ": 20000,
		"Max cpu time              unlimited            unlimited            seconds   ": unix.RLIM_INFINITY,
	} {
		if got := hardField(line); got != want {
			t.Errorf("hardField(%q) = %d; want %d", line, got, want)
		}
	}
}

func TestProcLimitsOfSelf(t *testing.T) {
	l, err := procLimits(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var r unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NPROC, &r)
	if l.NProc != r.Max {
		t.Errorf("NProc = %d; getrlimit says %d", l.NProc, r.Max)
	}
}

func TestRLimitsClamp(t *testing.T) {
	if got := (hostLimits{NoFile: 20000, NProc: 32768, CapSysResource: true}).rlimits(); got != nil {
		t.Errorf("with CAP_SYS_RESOURCE: %v; want podman's defaults (nil)", got)
	}
	got := hostLimits{NoFile: unix.RLIM_INFINITY, NProc: 4096}.rlimits()
	want := []libpod.RLimit{{Type: "nofile", Hard: 1 << 20, Soft: 1 << 20}, {Type: "nproc", Hard: 4096, Soft: 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rlimits = %v; want %v", got, want)
	}
}

func TestContainersConf(t *testing.T) {
	c := serviceConfig{OCIRuntime: "runc", RLimits: []libpod.RLimit{{Type: "nofile", Hard: 20000, Soft: 20000}, {Type: "nproc", Hard: 32768, Soft: 32768}}}.containersConf()
	for _, want := range []string{"[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]", "[engine]\nruntime = \"runc\""} {
		if !strings.Contains(c, want) {
			t.Errorf("containers.conf:\n%s\nlacks %q", c, want)
		}
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
	if haveBinary("runc") {
		if got := chooseOCIRuntime(v1, "", true); got != "runc" {
			t.Errorf("cgroup v1 with runc installed: %s; want runc", got)
		}
	}
	if got := chooseOCIRuntime(v1, "", false); got != "crun" {
		t.Errorf("remote service: %s; want its own default, whatever this host has installed", got)
	}
}
