package runtimetest

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// logsOf runs cfg in sb to its end and returns its stdout.
func (s *suite) logsOf(t *testing.T, sb runtime.Sandbox, cfg runtime.ContainerConfig) (runtime.Container, string) {
	t.Helper()
	id := s.create(t, sb, cfg)
	if err := s.rt.StartContainer(ctxT(t, time.Minute), id); err != nil {
		t.Fatalf("StartContainer %s: %v", cfg.Name, err)
	}
	c := s.waitState(t, id, runtime.ContainerExited, 30*time.Second)
	var out bytes.Buffer
	if err := s.rt.Logs(ctxT(t, 30*time.Second), id, runtime.LogOptions{TailLines: -1}, &out, io.Discard); err != nil {
		t.Fatalf("Logs: %v", err)
	}
	return c, out.String()
}

func i64(v int64) *int64 { return &v }

// testSecurity: the security config is what the container's process gets.
func (s *suite) testSecurity(t *testing.T) {
	sb := s.sandbox(t, "security")
	_, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "sec", Command: []string{"sh", "-c",
		"id -u; id -g; id -G; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; touch /f 2>/dev/null || echo read-only"},
		Security: runtime.SecurityConfig{RunAsUser: i64(1000), RunAsGroup: i64(2000), SupplementalGroups: []int64{3000},
			CapDrop: []string{"ALL"}, CapAdd: []string{"CAP_NET_ADMIN"}, NoNewPrivs: true, ReadOnlyRootfs: true,
			Seccomp: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}}})
	fields := strings.Fields(out)
	want := []string{"1000", "2000"}
	if len(fields) < 2 || fields[0] != want[0] || fields[1] != want[1] || !strings.Contains(out, "3000") {
		t.Errorf("ids %q; want uid 1000, gid 2000, group 3000", out)
	}
	// A non-root user keeps an added capability in its effective set here
	// only through the runtime; the bounding set is what counts: no others.
	for _, line := range []string{"NoNewPrivs:\t1", "Seccomp:\t0", "read-only"} {
		if !strings.Contains(out, line) {
			t.Errorf("output %q lacks %q", out, line)
		}
	}
	if strings.Contains(out, "CapEff:\t00000000a80425fb") {
		t.Errorf("default capabilities kept: %q", out)
	}
	// Default: /proc/sys read-only, /proc/keys masked; procMount Unmasked: neither.
	mounts := "grep -cE ' /proc/(sys|keys) ' /proc/mounts; exit 0"
	if _, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "masked", Command: []string{"sh", "-c", mounts}}); strings.TrimSpace(out) != "2" {
		t.Errorf("default /proc: %q mounts over /proc/sys and /proc/keys; want 2", out)
	}
	if _, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "unmasked", Command: []string{"sh", "-c", mounts},
		Security: runtime.SecurityConfig{MaskedPaths: []string{}, ReadonlyPaths: []string{}}}); strings.TrimSpace(out) != "0" {
		t.Errorf("unmasked /proc: %q mounts over /proc/sys and /proc/keys; want none", out)
	}
	_, out = s.logsOf(t, sb, runtime.ContainerConfig{Name: "priv", Command: []string{"sh", "-c", "grep CapEff /proc/self/status"},
		Security: runtime.SecurityConfig{Privileged: true}})
	if !strings.Contains(out, "ffff") {
		t.Errorf("privileged CapEff %q; want (nearly) every capability", out)
	}
}

// testImageUser: the suite's image sets no USER.
func (s *suite) testImageUser(t *testing.T) {
	if u, err := s.rt.ImageUser(ctxT(t, 30*time.Second), Image); err != nil || u != "" {
		t.Errorf("ImageUser(%s) = %q, %v; want \"\"", Image, u, err)
	}
	if _, err := s.rt.ImageUser(ctxT(t, 30*time.Second), "localhost/runtimetest/absent:none"); err == nil {
		t.Error("ImageUser of a missing image: no error")
	}
}

// testSandboxSysctlsAndPids: pod-level sysctls reach the containers, and
// the pod's processes are capped.
func (s *suite) testSandboxSysctlsAndPids(t *testing.T) {
	sb := s.sandboxOn(t, s.rt, s.owner, "sysctls", func(cfg *runtime.SandboxConfig) {
		cfg.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_unprivileged_port_start": "77"}
		cfg.Resources = runtime.Resources{PidsLimit: 20}
	})
	_, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "sysctl", Command: []string{"sh", "-c",
		"cat /proc/sys/kernel/shm_rmid_forced /proc/sys/net/ipv4/ip_unprivileged_port_start; " +
			"i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i+1)); done 2>&1"}})
	if !strings.HasPrefix(out, "1\n77\n") || !strings.Contains(out, "can't fork") {
		t.Errorf("output %q; want the sysctls 1 and 77, then forks refused past 20 processes", out)
	}
}

// testResources: the limits are the container's cgroup's.
func (s *suite) testResources(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.shares"); err != nil {
		t.Skip("checks the cgroup v1 files; this host has cgroup v2")
	}
	sb := s.sandbox(t, "resources")
	_, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "limits", Command: []string{"cat",
		"/sys/fs/cgroup/cpu/cpu.shares", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		Resources: runtime.Resources{CPUShares: 256, CPUMillis: 5, MemoryBytes: 32 << 20}})
	if got, want := strings.Join(strings.Fields(out), " "), "256 1000 33554432"; got != want {
		t.Errorf("shares, quota, memory limit = %s; want %s (5m is the 1 ms minimum quota)", got, want)
	}
}

// testUpdateResources: a running container takes new CPU and memory
// settings in place, a limit added where there was none and one lifted.
func (s *suite) testUpdateResources(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.shares"); err != nil {
		t.Skip("checks the cgroup v1 files; this host has cgroup v2")
	}
	sb := s.sandbox(t, "update")
	id := s.containerWith(t, sb, runtime.ContainerConfig{Name: "target", Command: []string{"sleep", "3600"},
		Resources: runtime.Resources{CPUShares: 256, MemoryBytes: 32 << 20}})
	s.waitState(t, id, runtime.ContainerRunning, 10*time.Second)
	read := func() string {
		var out bytes.Buffer
		code, err := s.rt.Exec(ctxT(t, 30*time.Second), id, []string{"cat", "/sys/fs/cgroup/cpu/cpu.shares",
			"/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}, runtime.StreamIO{Stdout: &out})
		if err != nil || code != 0 {
			t.Fatalf("reading the cgroup files: %d, %v", code, err)
		}
		return strings.Join(strings.Fields(out.String()), " ")
	}
	if got, want := read(), "256 -1 33554432"; got != want {
		t.Fatalf("before the update: shares, quota, memory limit = %s; want %s", got, want)
	}
	if err := s.rt.UpdateContainerResources(ctxT(t, 30*time.Second), id, runtime.Resources{CPUShares: 512, CPUMillis: 250, MemoryBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	if got, want := read(), "512 25000 67108864"; got != want {
		t.Errorf("after raising: shares, quota, memory limit = %s; want %s", got, want)
	}
	if err := s.rt.UpdateContainerResources(ctxT(t, 30*time.Second), id, runtime.Resources{CPUShares: 128}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(read()); len(got) != 3 || got[0] != "128" || got[1] != "-1" || len(got[2]) < 15 {
		t.Errorf("after lifting the limits: shares, quota, memory limit = %v; want 128, -1 and no memory limit", got)
	}
}

// testOOMKilled: a container killed at its memory limit is reported
// OOM-killed, by its exit and by later listings.
func (s *suite) testOOMKilled(t *testing.T) {
	sb := s.sandbox(t, "oom")
	c, _ := s.logsOf(t, sb, runtime.ContainerConfig{Name: "hog", Command: []string{"sh", "-c", "x=0123456789abcdef; while true; do x=$x$x; done"},
		Resources: runtime.Resources{MemoryBytes: 32 << 20}})
	if c.ExitCode != 137 || !c.OOMKilled {
		t.Errorf("listed %+v; want exit code 137, OOM-killed", c)
	}
	in, err := s.rt.InspectContainer(ctxT(t, 30*time.Second), c.ID)
	if err != nil || !in.OOMKilled {
		t.Errorf("inspected OOMKilled %v, %v; want true", in.OOMKilled, err)
	}
}
