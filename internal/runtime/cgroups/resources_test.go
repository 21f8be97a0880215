package cgroups

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// TestResources pins the JSON runc reads in config.json and podman reads as
// resource_limits: the field names and their order are what both get.
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
		{"v2: the container is OOM-killed whole", Host{V2: true, SwapLimit: true}, true,
			`{"memory":{"limit":67108864,"swap":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50},"unified":{"memory.oom.group":"1"}}`},
		{"v2 pod cgroup", Host{V2: true}, false,
			`{"memory":{"limit":67108864},"cpu":{"shares":1536,"quota":150000,"period":100000},"pids":{"limit":50}}`},
	} {
		if got := jsonOf(Resources(r, tc.host, tc.container)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestResourcesPartial: only what is asked for is set, so the runtime's
// defaults stay for the rest.
func TestResourcesPartial(t *testing.T) {
	for _, tc := range []struct {
		name      string
		r         runtime.Resources
		host      Host
		container bool
		want      string
	}{
		{"shares alone: no quota", runtime.Resources{CPUShares: 2}, Host{SwapLimit: true}, true, `{"cpu":{"shares":2}}`},
		{"a limit under 10m: the 1 ms floor", runtime.Resources{CPUMillis: 5}, Host{}, true, `{"cpu":{"quota":1000,"period":100000}}`},
		{"v2 without swap accounting: no swap setting", runtime.Resources{MemoryBytes: 1 << 20}, Host{V2: true}, true,
			`{"memory":{"limit":1048576},"unified":{"memory.oom.group":"1"}}`},
		{"pids alone in a pod cgroup", runtime.Resources{PidsLimit: 3}, Host{V2: true}, false, `{"pids":{"limit":3}}`},
		{"v2 container without limits is still OOM-killed whole", runtime.Resources{}, Host{V2: true}, true, `{"unified":{"memory.oom.group":"1"}}`},
	} {
		if got := jsonOf(Resources(tc.r, tc.host, tc.container)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	if Resources(runtime.Resources{}, Host{SwapLimit: true}, true) != nil {
		t.Error("nothing to limit gave resources")
	}
	if Resources(runtime.Resources{}, Host{V2: true}, false) != nil {
		t.Error("nothing to limit in a v2 pod cgroup gave resources")
	}
}

// TestUpdateResources pins the body of podman's container update: every
// limit stated, -1 where it is lifted, shares at least 2.
func TestUpdateResources(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    runtime.Resources
		host Host
		want string
	}{
		{"limits", runtime.Resources{CPUMillis: 250, CPUShares: 256, MemoryBytes: 64 << 20}, Host{SwapLimit: true},
			`{"memory":{"limit":67108864,"swap":67108864},"cpu":{"shares":256,"quota":25000,"period":100000}}`},
		{"all lifted", runtime.Resources{}, Host{SwapLimit: true},
			`{"memory":{"limit":-1,"swap":-1},"cpu":{"shares":2,"quota":-1,"period":100000}}`},
		{"no swap accounting", runtime.Resources{MemoryBytes: 1 << 20}, Host{V2: true},
			`{"memory":{"limit":1048576},"cpu":{"shares":2,"quota":-1,"period":100000}}`},
	} {
		if got := jsonOf(UpdateResources(tc.r, tc.host)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestMilliCPUToQuota: the kubelet's figures, its 1 ms floor included, and
// no overflow for an absurd limit.
func TestMilliCPUToQuota(t *testing.T) {
	for milli, want := range map[int64]int64{1: 1000, 5: 1000, 9: 1000, 10: 1000, 11: 1100, 250: 25000, 1000: 100000, 1500: 150000} {
		if got := MilliCPUToQuota(milli); got != want {
			t.Errorf("%dm: quota %d; want %d", milli, got, want)
		}
	}
	if got := MilliCPUToQuota(math.MaxInt64); got < MinCFSQuota {
		t.Errorf("the largest limit overflowed to %d", got)
	}
}

// jsonOf is v as JSON; these types always marshal.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
