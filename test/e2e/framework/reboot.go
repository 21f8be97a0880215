package framework

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PrivatePodman starts a podman service of the test's own, for a test that reboots its node
// (SimulateReboot): its store under the test's temp dir (--root), its runtime state where a host
// keeps it, on the tmpfs /run (--runroot and --tmpdir under /run/runlet-e2e-<random>), and file locks
// kept in that state rather than the shared memory segment the host's podman uses (a podman that
// finds its runtime state gone frees every lock it holds). It has the test images. A reboot may take
// its runtime state away without touching the host's podman; the framework's podman CLI helpers do not
// see it (use CLI). At the end of the test its containers are removed, it is stopped and its
// directories go.
func PrivatePodman(t testing.TB) *PodmanService {
	t.Helper()
	shared := Podman(t) // the test images are built, containers.conf decided
	dir := t.TempDir()
	// podman takes a run root of at most 50 characters
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	run := "/run/runlet-e2e-" + hex.EncodeToString(suffix)
	p := &PodmanService{Socket: filepath.Join(dir, "podman.sock"), LogPath: filepath.Join(dir, "service.log"),
		Root: filepath.Join(dir, "storage"), RunRoot: filepath.Join(run, "containers"), TmpDir: filepath.Join(run, "libpod")}
	conf, err := privateContainersConf(shared.ContainersConf, filepath.Join(dir, "containers.conf"))
	if err != nil {
		t.Fatal(err)
	}
	p.ContainersConf, p.configured = conf, true
	t.Cleanup(func() { p.removePrivate(t, run) })
	if err := p.Start(); err != nil {
		t.Fatalf("private podman service (log %s): %v", p.LogPath, err)
	}
	if out, err := p.CLI("load", "-i", testImagesTar(t)); err != nil {
		t.Fatalf("loading the test images into the private podman: %v: %s", err, out)
	}
	return p
}

// privateContainersConf writes to path the shared service's containers.conf (if any) with file locks.
func privateContainersConf(shared, path string) (string, error) {
	base := ""
	if shared != "" {
		b, err := os.ReadFile(shared)
		if err != nil {
			return "", err
		}
		base = string(b)
	}
	const lock = "lock_type = \"file\"\n"
	if strings.Contains(base, "[engine]\n") {
		base = strings.Replace(base, "[engine]\n", "[engine]\n"+lock, 1)
	} else {
		base += "[engine]\n" + lock
	}
	return path, os.WriteFile(path, []byte(base), 0o644)
}

// globalArgs are the podman options that give a private service its own store.
func (p *PodmanService) globalArgs() []string {
	if p.Root == "" {
		return nil
	}
	return []string{"--root", p.Root, "--runroot", p.RunRoot, "--tmpdir", p.TmpDir}
}

// CLI runs the podman CLI against this service (podman --remote) and returns its output.
func (p *PodmanService) CLI(args ...string) (string, error) {
	return PodmanCLIE(append([]string{"--remote", "--url", p.URL()}, args...)...)
}

// PodsOf lists this service's podman pods of a pod UID (a private one's, which the framework's
// host-podman helpers do not see).
func (p *PodmanService) PodsOf(uid types.UID) ([]PodmanPod, error) {
	return p.PodsWith("label=" + LabelPodUID + "=" + string(uid))
}

// ContainersOf lists this service's containers of a pod UID, running or not, the infra's aside.
func (p *PodmanService) ContainersOf(uid types.UID) ([]PodmanContainer, error) {
	all, err := p.ContainersWith("label=" + LabelPodUID + "=" + string(uid))
	var out []PodmanContainer
	for _, c := range all {
		if !c.IsInfra {
			out = append(out, c)
		}
	}
	return out, err
}

// PodsWith lists this service's podman pods that match every filter (e.g. "label=k=v").
func (p *PodmanService) PodsWith(filters ...string) ([]PodmanPod, error) {
	return podmanList[PodmanPod](p.CLI, []string{"pod", "ps"}, filters)
}

// ContainersWith lists this service's containers that match every filter, running or not, infra
// containers included.
func (p *PodmanService) ContainersWith(filters ...string) ([]PodmanContainer, error) {
	return podmanList[PodmanContainer](p.CLI, []string{"ps", "-a"}, filters)
}

func (p *PodmanService) removePrivate(t testing.TB, run string) {
	if p.Running() {
		_, _ = p.CLI("pod", "rm", "-af", "-t", "0")
		_, _ = p.CLI("rm", "-af", "-t", "0")
		if err := p.Stop(); err != nil {
			t.Logf("private podman: %v", err)
		}
	}
	killProcesses(func(cmdline, _ string) bool {
		return strings.Contains(cmdline, run) || strings.Contains(cmdline, p.Root)
	})
	UnmountUnder(p.Root, p.RunRoot, p.TmpDir)
	if err := os.RemoveAll(run); err != nil {
		t.Logf("private podman: %v", err)
	}
}

// SimulateReboot does to the host what a reboot does to a runlet node and its pods, and to nothing
// else on it:
//   - runlet, the podman service pm (one of PrivatePodman's; nil on runc) and every process of the
//     node's pods (their containers, conmon, the pause processes) are SIGKILLed;
//   - every mount under runlet's root dir and podman's store goes (root filesystems, tmpfs volumes,
//     /dev/shm), and so does podman's runtime state on /run;
//   - the pods' network namespaces and hostPort rules, the node's bridge and NAT rule go
//     (RemoveNodeNetwork), and the pods' cgroups.
//
// What is on disk stays, as a reboot keeps it: runlet's root dir (its checkpoint, the pods' volumes,
// the IPAM leases, the runc backend's records and runc's state) and podman's store.
func SimulateReboot(t testing.TB, rl *Runlet, pm *PodmanService) {
	t.Helper()
	rl.Kill()
	if pm != nil {
		if err := pm.Kill(); err != nil {
			t.Fatalf("kill the podman service: %v", err)
		}
	}
	pods := podCgroupNames(rl.RootDir)
	sandboxes, _ := filepath.Glob(filepath.Join(rl.RootDir, "runc", "s", "*", "sandbox.json"))
	for _, sb := range sandboxes {
		if pid := pausePID(sb); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	mine := func(cmdline, cgroups string) bool {
		if strings.Contains(cmdline, rl.RootDir) || (pm != nil && (strings.Contains(cmdline, pm.RunRoot) || strings.Contains(cmdline, pm.TmpDir))) {
			return true
		}
		for _, cg := range pods {
			if strings.Contains(cgroups, "/runlet/"+cg+"/") || strings.HasSuffix(cgroups, "/runlet/"+cg) ||
				strings.Contains(cgroups, "/runlet/"+cg+"\n") {
				return true
			}
		}
		return false
	}
	if left := killProcesses(mine); left > 0 {
		t.Fatalf("reboot: %d processes of the node's pods survived SIGKILL", left)
	}
	dirs := []string{rl.RootDir}
	if pm != nil {
		dirs = append(dirs, pm.Root, pm.RunRoot, pm.TmpDir)
	}
	UnmountUnder(dirs...)
	if pm != nil {
		for _, d := range []string{pm.RunRoot, pm.TmpDir} {
			if err := os.RemoveAll(d); err != nil {
				t.Fatalf("reboot: %v", err)
			}
		}
	}
	if _, err := RemoveNodeNetwork(rl.RootDir, rl.NodeName); err != nil {
		t.Fatalf("reboot: %v", err)
	}
	if _, err := RemovePodCgroups(rl.RootDir, rl.NodeName); err != nil {
		t.Fatalf("reboot: %v", err)
	}
}

// podCgroupNames are the cgroup names (pod<uid>, "_" for "-") of the pods with a directory under rootDir.
func podCgroupNames(rootDir string) []string {
	entries, _ := os.ReadDir(filepath.Join(rootDir, "pods"))
	var out []string
	for _, e := range entries {
		out = append(out, "pod"+strings.ReplaceAll(e.Name(), "-", "_"))
	}
	return out
}

// killProcesses SIGKILLs every live process for which match(cmdline, /proc/<pid>/cgroup) holds, again
// until none is left or a few rounds passed, and returns how many are still there.
func killProcesses(match func(cmdline, cgroups string) bool) int {
	self := os.Getpid()
	left := 0
	for round := 0; round < 10; round++ {
		left = 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || zombie(pid) {
				continue
			}
			cmdline, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			cgroups, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if err := errors.Join(err1, err2); err != nil {
				continue
			}
			if match(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), string(cgroups)) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				left++
			}
		}
		if left == 0 {
			return 0
		}
		time.Sleep(200 * time.Millisecond)
	}
	return left
}

// zombie reports a process that has exited and waits for its parent.
func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command, which is in parentheses and may hold any character.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// CheckpointedPod reads a pod's entry in the checkpoint of the runlet whose --root-dir is rootDir
// (<root>/checkpoint/pods/<uid>.json: its data is the pod with the last status runlet wrote).
func CheckpointedPod(rootDir string, uid types.UID) (*v1.Pod, bool) {
	raw, err := os.ReadFile(filepath.Join(rootDir, "checkpoint", "pods", string(uid)+".json"))
	if err != nil {
		return nil, false
	}
	var entry struct {
		Data v1.Pod `json:"data"`
	}
	if json.Unmarshal(raw, &entry) != nil {
		return nil, false
	}
	return &entry.Data, true
}
