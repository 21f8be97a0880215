package podmanservice

import (
	"reflect"
	"strings"
	"testing"
)

func TestContainersConf(t *testing.T) {
	c := Config{OCIRuntime: "runc", RLimits: []RLimit{{"nofile", 20000, 20000}, {"nproc", 32768, 32768}}, ConmonOutsidePods: true}.ContainersConf()
	for _, want := range []string{"[containers]\ndefault_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\ncgroups = \"no-conmon\"\n", "[engine]\nruntime = \"runc\""} {
		if !strings.Contains(c, want) {
			t.Errorf("containers.conf:\n%s\nlacks %q", c, want)
		}
	}
}

func TestImposed(t *testing.T) {
	without := Limits{NoFile: 20000, NProc: 32768}
	got := Imposed(without, "runc", "crun")
	want := Config{OCIRuntime: "runc", RLimits: without.RLimits(), ConmonOutsidePods: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Imposed = %+v; want %+v", got, want)
	}
	if got := Imposed(Limits{CapSysResource: true}, "crun", "crun"); !got.Empty() {
		t.Errorf("with CAP_SYS_RESOURCE and the default runtime: %+v; want nothing imposed", got)
	}
}

func TestOCIRuntime(t *testing.T) {
	if got := OCIRuntime("v2", "crun"); got != "crun" {
		t.Errorf("cgroup v2: %s; want the service default crun", got)
	}
	want := "crun"
	if haveBinary("runc") {
		want = "runc"
	}
	if got := OCIRuntime("v1", "crun"); got != want {
		t.Errorf("cgroup v1: %s; want %s", got, want)
	}
}
