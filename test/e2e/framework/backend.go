package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/conmon"

	"k8s.io/apimachinery/pkg/types"
)

// --- the backend's ground truth, whichever backend the runlets use ---

// BackendSandbox is a pod sandbox as the backend holds it: a podman pod, or
// a runc backend's sandbox record.
type BackendSandbox struct {
	ID     string
	Labels map[string]string
	// CgroupParent is the pod's cgroup, relative to a hierarchy's root.
	CgroupParent string
	// Running: its infra (podman) or pause (runc) process is alive.
	Running bool
}

// BackendContainer is one of a pod's containers (never the infra) as the
// backend holds it.
type BackendContainer struct {
	ID     string
	Labels map[string]string
	// Running: its process is alive (also while a stop waits out the grace
	// period).
	Running   bool
	StartedAt time.Time
	// PID is its process's on the host, while it runs.
	PID int
}

// Name is the pod's container it runs.
func (c BackendContainer) Name() string { return c.Labels[LabelContainerName] }

// Sandboxes lists the sandboxes of a pod UID in the backend of every
// runlet this test binary started (podman's are shared).
func Sandboxes(t testing.TB, uid types.UID) []BackendSandbox {
	t.Helper()
	out, err := sandboxes(uid)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Containers lists the containers of a pod UID, running or not.
func Containers(t testing.TB, uid types.UID) []BackendContainer {
	t.Helper()
	out, err := containers(uid)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// RuncContainers lists the containers of a pod UID that the runc runlet
// whose --root-dir is rootDir keeps, running or not: that of a runlet the
// framework did not start (one in a pod).
func RuncContainers(t testing.TB, rootDir string, uid types.UID) []BackendContainer {
	t.Helper()
	out, err := runcContainers(filepath.Join(rootDir, "runc"), uid)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// RuncSandboxes lists the sandboxes of a pod UID that the runc runlet whose --root-dir is rootDir
// keeps: one backend's alone, read from its records without asking podman.
func RuncSandboxes(t testing.TB, rootDir string, uid types.UID) []BackendSandbox {
	t.Helper()
	out, err := runcSandboxes(filepath.Join(rootDir, "runc"), uid)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// RuncNodeSandboxes and RuncNodeContainers list every sandbox and container that the runc runlet
// whose --root-dir is rootDir keeps, of all its pods.
func RuncNodeSandboxes(rootDir string) ([]BackendSandbox, error) {
	return runcSandboxes(filepath.Join(rootDir, "runc"), "")
}

func RuncNodeContainers(rootDir string) ([]BackendContainer, error) {
	return runcContainers(filepath.Join(rootDir, "runc"), "")
}

func sandboxes(uid types.UID) ([]BackendSandbox, error) {
	var out []BackendSandbox
	for _, root := range runcRoots() {
		sbs, err := runcSandboxes(root, uid)
		if err != nil {
			return nil, err
		}
		out = append(out, sbs...)
	}
	if !podmanInUse() {
		return out, nil
	}
	pods, err := podmanPods("label=" + LabelPodUID + "=" + string(uid))
	for _, p := range pods {
		cg, _ := PodmanCLIE("pod", "inspect", "--format", "{{.CgroupPath}}", p.ID)
		cg = strings.TrimSpace(cg)
		// Where runlet owns pod cgroups, podman's own sits below runlet's.
		if own := PodCgroupAbove(cg, uid); own != "" {
			cg = own
		}
		out = append(out, BackendSandbox{ID: p.ID, Labels: p.Labels, CgroupParent: cg, Running: p.InfraRunning()})
	}
	return out, err
}

func containers(uid types.UID) ([]BackendContainer, error) {
	var out []BackendContainer
	for _, root := range runcRoots() {
		cs, err := runcContainers(root, uid)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	if !podmanInUse() {
		return out, nil
	}
	cs, err := podmanContainers("label=" + LabelPodUID + "=" + string(uid))
	for _, c := range cs {
		if c.IsInfra {
			continue
		}
		// podman says "stopping" while its stop waits out the grace period.
		running := c.State == "running" || c.State == "stopping"
		out = append(out, BackendContainer{ID: c.ID, Labels: c.Labels, Running: running, StartedAt: time.Unix(c.StartedAt, 0), PID: c.Pid})
	}
	return out, err
}

// podmanInUse: some runlet of this binary runs on podman, or none was
// started with a backend named (the helm tests' runlets run in podman).
func podmanInUse() bool {
	return os.Getenv(RuntimeEnv) != RuntimeRunc || podmanRunletStarted()
}

func podmanRunletStarted() bool {
	runletsMu.Lock()
	defer runletsMu.Unlock()
	for r := range runlets {
		if r.opts.Runtime != RuntimeRunc {
			return true
		}
	}
	return false
}

// runcRoots are the runc backends' roots of the runlets started so far.
func runcRoots() []string {
	runletsMu.Lock()
	defer runletsMu.Unlock()
	seen := map[string]bool{}
	var roots []string
	for r := range runlets {
		if root := filepath.Join(r.RootDir, "runc"); r.opts.Runtime == RuntimeRunc && !seen[root] {
			seen[root] = true
			roots = append(roots, root)
		}
	}
	return roots
}

// runcSandboxes reads the sandbox records under a runc backend's root: a pod's, or all ("").
func runcSandboxes(root string, uid types.UID) ([]BackendSandbox, error) {
	var out []BackendSandbox
	for _, path := range glob(filepath.Join(root, "s", "*", "sandbox.json")) {
		var rec struct {
			ID     string `json:"id"`
			Config struct {
				PodUID string            `json:"PodUID"`
				Labels map[string]string `json:"Labels"`
			} `json:"config"`
			CgroupParent string `json:"cgroupParent"`
		}
		if found, err := readRecord(path, &rec); err != nil {
			return nil, err
		} else if found && (uid == "" || rec.Config.PodUID == string(uid)) {
			out = append(out, BackendSandbox{ID: rec.ID, Labels: rec.Config.Labels, CgroupParent: rec.CgroupParent, Running: pausePID(path) > 0})
		}
	}
	return out, nil
}

// runcContainers reads the container records under a runc backend's root: a pod's, or all ("").
func runcContainers(root string, uid types.UID) ([]BackendContainer, error) {
	var out []BackendContainer
	for _, path := range glob(filepath.Join(root, "c", "*", "container.json")) {
		var rec struct {
			ID     string `json:"id"`
			PodUID string `json:"podUID"`
			Config struct {
				Labels map[string]string `json:"Labels"`
			} `json:"config"`
			StartedAt time.Time `json:"startedAt"`
		}
		found, err := readRecord(path, &rec)
		if err != nil {
			return nil, err
		}
		if !found || (uid != "" && rec.PodUID != string(uid)) {
			continue
		}
		c := BackendContainer{ID: rec.ID, Labels: rec.Config.Labels, StartedAt: rec.StartedAt}
		c.Running, c.PID = runcState(root, rec.ID)
		out = append(out, c)
	}
	return out, nil
}

// runcState asks runc itself, as `podman ps` would be asked.
func runcState(root, id string) (running bool, pid int) {
	out, err := exec.Command("runc", "--root", filepath.Join(root, "state"), "state", id).Output()
	var st struct {
		Status string `json:"status"`
		PID    int    `json:"pid"`
	}
	if err != nil || json.Unmarshal(out, &st) != nil || st.Status != "running" {
		return false, 0
	}
	return true, st.PID
}

// readRecord decodes a record; one removed meanwhile is not found.
func readRecord(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		return false, fmt.Errorf("reading the backend record %s: %w", path, err)
	}
	return true, nil
}

func glob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// Runtime is the backend of the runlets whose options name none: podman,
// or runc in the backend matrix's second column.
func Runtime() string {
	if os.Getenv(RuntimeEnv) == RuntimeRunc {
		return RuntimeRunc
	}
	return "podman"
}

// RuntimePrefix is what those runlets put before container IDs and their
// runtime version ("podman://", "runc://").
func RuntimePrefix() string { return Runtime() + "://" }

// describeBackend adds what the backend and the kernel say of a pod's
// containers to a failure message: a status that disagrees with them, or
// a process stuck in the kernel, then shows.
func describeBackend(b *strings.Builder, uid types.UID) {
	cs, err := containers(uid)
	if err != nil {
		fmt.Fprintf(b, "  backend: %v\n", err)
	}
	for _, c := range cs {
		fmt.Fprintf(b, "  backend container %s %.12s running=%v pid=%d%s\n", c.Name(), c.ID, c.Running, c.PID, describeProcess(c.PID))
	}
}

// describeProcess is a process's kernel state, where it waits, and its
// memory cgroup's usage, limit, failures and OOM state.
func describeProcess(pid int) string {
	if pid <= 0 {
		return ""
	}
	read := func(path string) string {
		data, _ := os.ReadFile(path)
		return strings.Join(strings.Fields(string(data)), " ")
	}
	var out strings.Builder
	stat := read(fmt.Sprintf("/proc/%d/stat", pid))
	if i := strings.LastIndexByte(stat, ')'); i > 0 && i+3 < len(stat) {
		fmt.Fprintf(&out, " state=%c", stat[i+2])
	}
	fmt.Fprintf(&out, " wchan=%s", read(fmt.Sprintf("/proc/%d/wchan", pid)))
	for _, line := range strings.Split(read(fmt.Sprintf("/proc/%d/cgroup", pid)), " ") {
		// cgroup v1: "N:memory:/path"; v2: "0::/path".
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || (f[1] != "memory" && f[1] != "") {
			continue
		}
		dir := filepath.Join("/sys/fs/cgroup", f[2])
		if f[1] == "memory" {
			dir = filepath.Join("/sys/fs/cgroup/memory", f[2])
		}
		for _, file := range []string{"memory.usage_in_bytes", "memory.limit_in_bytes", "memory.failcnt", "memory.oom_control", "memory.current", "memory.max", "memory.events"} {
			if v := read(filepath.Join(dir, file)); v != "" {
				fmt.Fprintf(&out, " %s=[%s]", file, v)
			}
		}
	}
	return out.String()
}

// KillContainer SIGKILLs a container behind runlet's back: podman kill, or
// runc kill. id is the pod status's containerID (with its runtime prefix).
func KillContainer(t testing.TB, id string) {
	t.Helper()
	id = id[strings.Index(id, "://")+3:]
	for _, root := range runcRoots() {
		state := filepath.Join(root, "state")
		if fileExists(filepath.Join(state, id)) {
			if out, err := exec.Command("runc", "--root", state, "kill", id, "KILL").CombinedOutput(); err != nil {
				t.Fatalf("runc kill %s: %v: %s", id, err, out)
			}
			return
		}
	}
	PodmanCLI(t, "kill", id)
}

// ContainerLogPath is where the backend writes a container's log (CRI
// format): podman's log path, or ctr.log in runc's bundle. id is the pod
// status's containerID.
func ContainerLogPath(t testing.TB, id string) string {
	t.Helper()
	id = id[strings.Index(id, "://")+3:]
	for _, root := range runcRoots() {
		if path := filepath.Join(root, "c", id, "ctr.log"); fileExists(path) {
			return path
		}
	}
	return strings.TrimSpace(PodmanCLI(t, "inspect", "--format", "{{.HostConfig.LogConfig.Path}}", id))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ContainerRun is one run of a pod's container as the backend recorded it,
// to the nanosecond.
type ContainerRun struct {
	ID                    string
	StartedAt, FinishedAt time.Time // FinishedAt is zero while it runs
	ExitCode              int
}

// NewestRuns gives the newest run of each of a pod's containers, by name:
// podman's inspect, or runc's records and conmon's exit files.
func NewestRuns(t testing.TB, uid types.UID) map[string]ContainerRun {
	t.Helper()
	out := map[string]ContainerRun{}
	keep := func(name string, r ContainerRun) {
		if cur, ok := out[name]; name != "" && (!ok || r.StartedAt.After(cur.StartedAt)) {
			out[name] = r
		}
	}
	roots := runcRoots()
	for _, c := range Containers(t, uid) {
		r := ContainerRun{ID: c.ID, StartedAt: c.StartedAt}
		if runcRoot(roots, c.ID) == "" {
			in := InspectContainer(t, c.ID)
			r.StartedAt, r.FinishedAt, r.ExitCode = in.State.StartedAt, in.State.FinishedAt, in.State.ExitCode
			if in.State.Running {
				r.FinishedAt = time.Time{}
			}
		} else if exit, err := conmon.ReadExit(filepath.Join(runcRoot(roots, c.ID), "exits", c.ID)); err == nil {
			r.FinishedAt, r.ExitCode = exit.FinishedAt, exit.Code
		}
		keep(c.Name(), r)
	}
	return out
}

// runcRoot is the runc root that holds container id, or "".
func runcRoot(roots []string, id string) string {
	for _, root := range roots {
		if fileExists(filepath.Join(root, "c", id, "container.json")) {
			return root
		}
	}
	return ""
}

// PodCgroupAbove is cgroup itself or its ancestor named "pod<uid>" (dashes
// as underscores, cgroupfs style), or "".
func PodCgroupAbove(cgroup string, uid types.UID) string {
	name := "pod" + strings.ReplaceAll(string(uid), "-", "_")
	for dir := cgroup; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		if filepath.Base(dir) == name {
			return dir
		}
	}
	return ""
}
