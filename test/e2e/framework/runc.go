package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// RuntimeRunc is RunletOptions.Runtime for a runlet on the runc backend.
const RuntimeRunc = "runc"

// RuntimeEnv names the backend of the runlets whose options name none:
// the backend matrix runs the backend-neutral tests again with it set to
// runc (make test-e2e-runc).
const RuntimeEnv = "RUNLET_E2E_RUNTIME"

// TestServerImage is the probe and hook test workload (hack/images-testserver.sh).
const TestServerImage = "localhost/runlet/testserver:latest"

var (
	runcImagesOnce sync.Once
	runcImagesTar  string
	runcImagesErr  error
)

// testImagesTar is a docker-archive of the test images hack/images.sh builds into the host's
// podman (and CoreDNS's, when it is there), saved once per test binary: what a runc runlet's image
// store, or a private podman, loads.
func testImagesTar(t testing.TB) string {
	t.Helper()
	EnsureImages(t)
	c := Get(t)
	runcImagesOnce.Do(func() {
		runcImagesTar = filepath.Join(c.Dir, "runc-images.tar")
		images := []string{BusyboxImage, TestServerImage}
		// CoreDNS, for the tests that deploy the cluster DNS onto a runc node.
		dns, _ := PodmanCLIE("images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference=localhost/runlet/coredns")
		images = append(images, strings.Fields(dns)...)
		_, runcImagesErr = PodmanCLIE(append([]string{"save", "--multi-image-archive", "--format", "docker-archive",
			"-o", runcImagesTar}, images...)...)
	})
	if runcImagesErr != nil {
		t.Fatalf("saving the test images: %v", runcImagesErr)
	}
	return runcImagesTar
}

// loadRuncImages gives a runc runlet's image store, under its root dir,
// the test images the podman tests use, and the runlet's own Images.
func loadRuncImages(t testing.TB, r *Runlet) {
	t.Helper()
	LoadRuncImages(t, r.Binary, r.RootDir, r.opts.Images...)
}

// LoadRuncImages loads into the runc image store of the runlet whose
// --root-dir is root the test images (hack/images.sh builds them into
// podman's storage), saved from podman once per test binary, and extra:
// with `runlet image load`, as an air-gapped host gets its images. A
// runlet that runs on root takes them through its store's socket.
func LoadRuncImages(t testing.TB, binary, root string, extra ...string) {
	t.Helper()
	files := []string{testImagesTar(t)}
	if len(extra) > 0 {
		tar := filepath.Join(t.TempDir(), "images.tar")
		if _, err := PodmanCLIE(append([]string{"save", "--multi-image-archive", "--format", "docker-archive", "-o", tar}, extra...)...); err != nil {
			t.Fatalf("saving %v for runc: %v", extra, err)
		}
		files = append(files, tar)
	}
	out, err := exec.Command(binary, append([]string{"image", "load", "--root-dir", root}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("runlet image load: %v\n%s", err, out)
	}
}

// RemoveRuncLeftovers takes away what a stopped runc runlet, whose
// --root-dir is root, left of pods it did not remove: their containers and
// pause processes. It returns how many it removed.
func RemoveRuncLeftovers(root string) (n int) {
	state := filepath.Join(root, "runc", "state")
	ids, _ := os.ReadDir(state)
	for _, id := range ids {
		if exec.Command("runc", "--root", state, "delete", "--force", id.Name()).Run() == nil {
			n++
		}
	}
	sandboxes, _ := filepath.Glob(filepath.Join(root, "runc", "s", "*", "sandbox.json"))
	for _, sb := range sandboxes {
		if pid := pausePID(sb); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	return n
}

// runcMountDirs are the mount directories the runc backend's container
// records under root name (containers of pods with hostUsers: false).
func runcMountDirs(root string) []string {
	records, _ := filepath.Glob(filepath.Join(root, "runc", "c", "*", "container.json"))
	var dirs []string
	for _, f := range records {
		var rec struct {
			MountDir string `json:"mountDir"`
		}
		if data, err := os.ReadFile(f); err == nil && json.Unmarshal(data, &rec) == nil && rec.MountDir != "" {
			dirs = append(dirs, rec.MountDir)
		}
	}
	return dirs
}

// pausePID reads the pause process's PID from a sandbox record, if that
// process is still a pause process.
func pausePID(record string) int {
	var rec struct {
		Pause struct {
			PID int `json:"pid"`
		} `json:"pause"`
	}
	data, err := os.ReadFile(record)
	if err != nil || json.Unmarshal(data, &rec) != nil || rec.Pause.PID <= 0 {
		return 0
	}
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", rec.Pause.PID))
	if !strings.HasPrefix(string(cmdline), "runlet-pause") {
		return 0
	}
	return rec.Pause.PID
}
