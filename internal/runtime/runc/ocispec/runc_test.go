package ocispec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
	"golang.org/x/sys/unix"
)

// TestRuncRun runs a busybox container with a built spec under the real
// runc, in namespaces a stand-in pause process holds, and checks from
// inside what the spec asked for. It needs root, runc and a static busybox
// (Debian's busybox-static); it cleans up its container, cgroups and
// holder.
func TestRuncRun(t *testing.T) {
	runc := needRunc(t)
	dir := t.TempDir()
	rootfs := busyboxRootfs(t, dir)
	holder := pauseHolder(t)
	data := filepath.Join(dir, "data")
	_ = os.MkdirAll(data, 0o755)
	_ = os.WriteFile(filepath.Join(data, "f"), []byte("from-the-host\n"), 0o644)

	id := fmt.Sprintf("runlet-ocispec-%d", os.Getpid())
	parent := "/" + id + "-pod"
	t.Cleanup(func() { removeCgroups(parent) })
	ns := func(typ string) string { return fmt.Sprintf("/proc/%d/ns/%s", holder, typ) }
	in := Input{
		ID: id,
		Pod: Pod{
			Config: runtime.SandboxConfig{Hostname: "runc-pod", Sysctls: map[string]string{"kernel.shm_rmid_forced": "1"},
				ShareProcessNamespace: true},
			Net: ns("net"), IPC: ns("ipc"), UTS: ns("uts"), PID: ns("pid"), CgroupParent: parent,
		},
		Container: runtime.ContainerConfig{
			Name: "probe", Args: []string{probeScript}, Env: []string{"FROM_POD=1"},
			Mounts: []runtime.Mount{{HostPath: data, ContainerPath: "/data", ReadOnly: true}},
			Resources: runtime.Resources{CPUMillis: 250, MemoryBytes: 64 << 20, PidsLimit: 50, CPUShares: 256,
				OOMScoreAdj: intPtr(-997)},
			Security: runtime.SecurityConfig{SupplementalGroups: []int64{3000}, CapDrop: []string{"CAP_KILL"},
				NoNewPrivs: true, ReadOnlyRootfs: true},
		},
		Image:  ImageConfig{User: "app", Entrypoint: []string{"/bin/sh", "-c"}, Cmd: []string{"echo image cmd"}, WorkingDir: "/home/app"},
		Rootfs: rootfs,
		Host:   thisHost(t),
	}
	spec, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	writeBundle(t, dir, spec)
	out := runcRun(t, runc, dir, id)
	t.Logf("the container printed:\n%s", out)
	for _, want := range probeWants(in.Host) {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the container's output lacks %q:\n%s", want, out)
		}
	}
}

// probeScript prints what the checks read; each line is "name=value".
const probeScript = `
echo uid=$(id -u) gid=$(id -g) groups="$(id -G)"
echo host=$(hostname) env=$HOSTNAME pod=$FROM_POD cwd=$(pwd)
echo shm_rmid_forced=$(cat /proc/sys/kernel/shm_rmid_forced)
echo nofile=$(ulimit -Hn)
echo oom=$(cat /proc/self/oom_score_adj)
grep -E '^(Seccomp|NoNewPrivs|CapBnd):' /proc/self/status | tr -d '\t' | tr ':' '='
echo data=$(cat /data/f)
touch /x 2>/dev/null || echo rootfs=read-only
touch /data/y 2>/dev/null || echo data=read-only
echo pid1=$(cat /proc/1/comm)
grep -c ' /proc/keys ' /proc/mounts | sed 's/^/masked=/'
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
  echo cpu=$(cat /sys/fs/cgroup/cpu.max) mem=$(cat /sys/fs/cgroup/memory.max) pids=$(cat /sys/fs/cgroup/pids.max)
else
  echo cpu=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes) pids=$(cat /sys/fs/cgroup/pids/pids.max)
fi
`

// probeWants are the lines the spec should make the probe print.
func probeWants(h Host) []string {
	cgroups := "cpu=25000 mem=67108864 pids=50"
	if h.Cgroups.V2 {
		cgroups = "cpu=25000 100000 mem=67108864 pids=50"
	}
	// The default capabilities less CAP_KILL (bit 5): 0x800405db.
	return []string{
		"uid=1000 gid=1000 groups=1000 2500 3000",
		"host=runc-pod env=runc-pod pod=1 cwd=/home/app",
		"shm_rmid_forced=1",
		fmt.Sprintf("nofile=%d", min(podmanRlimit, h.NoFileHard)),
		fmt.Sprintf("oom=%d", max(-997, h.OOMScoreAdj)),
		"Seccomp=2", "NoNewPrivs=1", "CapBnd=00000000800405db",
		"data=from-the-host", "rootfs=read-only", "data=read-only",
		"pid1=sleep", "masked=1", cgroups,
	}
}

func needRunc(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs a container with runc: needs root")
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/runc"); serr != nil {
			t.Skip("runs a container with runc: runc is not installed")
		}
		runc = "/usr/sbin/runc"
	}
	return runc
}

// busyboxRootfs is a root filesystem of a static busybox, with a user
// "app" (1000:1000) who is a member of group "extra" (2500).
func busyboxRootfs(t *testing.T, dir string) string {
	t.Helper()
	bb, err := runtimetest.StaticBusybox()
	if err != nil {
		t.Skip("needs a statically linked busybox (Debian's busybox-static)")
	}
	root := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "etc", "home/app", "proc", "sys", "dev", "data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, bb, filepath.Join(root, "bin/busybox"))
	for _, applet := range []string{"sh", "id", "cat", "echo", "grep", "hostname", "pwd", "touch", "tr", "sed", "sleep"} {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", applet)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\n")
	write("etc/group", "root:x:0:\napp:x:1000:\nextra:x:2500:app\n")
	return root
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// pauseHolder starts a process in new network, IPC, UTS and PID namespaces,
// as a pod's pause process holds them, and returns its PID.
func pauseHolder(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWPID}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the namespaces' holder: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// thisHost reads the host facts as a runc backend would.
func thisHost(t *testing.T) Host {
	t.Helper()
	var h Host
	var r unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil {
		h.NoFileHard = r.Max
	}
	if unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil {
		h.NProcHard = r.Max
	}
	caps, err := BoundingSet()
	if err != nil {
		t.Fatal(err)
	}
	h.Capabilities = caps
	for _, c := range caps {
		h.CapSysResource = h.CapSysResource || c == "CAP_SYS_RESOURCE"
	}
	if b, err := os.ReadFile("/proc/self/oom_score_adj"); err == nil {
		_, _ = fmt.Sscan(string(b), &h.OOMScoreAdj)
	}
	h.Cgroups = cgroups.Detect(cgroups.Unified())
	return h
}

func writeBundle(t *testing.T, dir string, spec any) {
	t.Helper()
	b, err := json.MarshalIndent(spec, "", "\t")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// runcRun runs the bundle in dir to its end with runc's state kept in dir,
// and returns the process's output; the container is killed and deleted
// whatever happens.
func runcRun(t *testing.T, runc, dir, id string) string {
	t.Helper()
	state := filepath.Join(dir, "state")
	t.Cleanup(func() {
		_ = exec.Command(runc, "--root", state, "kill", id, "KILL").Run()
		_ = exec.Command(runc, "--root", state, "delete", "--force", id).Run()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, runc, "--root", state, "run", "--bundle", dir, id)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("runc run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	return out.String()
}

// removeCgroups removes the pod's cgroup runc made in each hierarchy (runc
// removes only the container's).
func removeCgroups(parent string) {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*" + parent)
	if _, err := os.Stat("/sys/fs/cgroup" + parent); err == nil {
		dirs = append(dirs, "/sys/fs/cgroup"+parent)
	}
	for _, d := range dirs {
		_ = os.Remove(d)
	}
}

func intPtr(v int) *int { return &v }
