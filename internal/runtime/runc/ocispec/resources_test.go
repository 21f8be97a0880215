package ocispec

import (
	"encoding/json"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

func TestResources(t *testing.T) {
	r := runtime.Resources{CPUMillis: 1500, CPUShares: 1536, MemoryBytes: 64 << 20, PidsLimit: 50}
	for _, tc := range []struct {
		name      string
		host      Host
		container bool
		want      string
	}{
		{"v1 with swap accounting: no swap", Host{SwapLimit: true}, true,
			`{"memory":{"limit":67108864,"swap":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50}}`},
		{"v1 without swap accounting", Host{}, true,
			`{"memory":{"limit":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50}}`},
		{"v2: the container is OOM-killed whole", Host{CgroupV2: true, SwapLimit: true}, true,
			`{"memory":{"limit":67108864,"swap":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50},"unified":{"memory.oom.group":"1"}}`},
		{"v2 pod cgroup", Host{CgroupV2: true}, false,
			`{"memory":{"limit":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50}}`},
	} {
		if got := jsonOf(t, Resources(r, tc.host, tc.container)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if Resources(runtime.Resources{}, Host{}, true) != nil {
		t.Error("nothing to limit gave resources")
	}
}

// TestMilliCPUToQuota: the kubelet's figures, its 1 ms floor included.
func TestMilliCPUToQuota(t *testing.T) {
	for milli, want := range map[int64]int64{1: 1000, 5: 1000, 10: 1000, 11: 1100, 250: 25000, 1000: 100000, 1500: 150000} {
		if got := milliCPUToQuota(milli); got != want {
			t.Errorf("%dm: quota %d; want %d", milli, got, want)
		}
	}
}

func TestDeviceRules(t *testing.T) {
	in := base()
	in.Host.Devices, _ = devicesIn("/dev")
	s := build(t, in)
	if got := jsonOf(t, s.Linux.Resources.Devices); got != `[{"allow":false,"access":"rwm"}]` {
		t.Errorf("devices %s; want all denied (runc adds its defaults)", got)
	}
	if s.Linux.Devices != nil {
		t.Errorf("an unprivileged container got the host's devices: %v", s.Linux.Devices)
	}
	in.Container.Security.Privileged = true
	s = build(t, in)
	if got := jsonOf(t, s.Linux.Resources.Devices); got != `[{"allow":true,"access":"rwm"}]` {
		t.Errorf("privileged devices %s; want all allowed", got)
	}
	if len(s.Linux.Devices) != len(in.Host.Devices) {
		t.Errorf("privileged: %d devices; want the host's %d", len(s.Linux.Devices), len(in.Host.Devices))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
