package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Running runlet the way a cluster does: its image, its chart, and the host's podman at its standard
// socket.

// HostPodmanSocket is where a host set up for runlet serves podman (systemctl enable --now
// podman.socket): the chart's default in host mode.
const HostPodmanSocket = "/run/podman/podman.sock"

var (
	imageOnce sync.Once
	imageName string
	imageErr  error
)

// MakeImage runs `make image` once per test binary and returns the image it built
// (localhost/runlet:<appVersion>).
func MakeImage(t testing.TB) string {
	t.Helper()
	c := Get(t)
	imageOnce.Do(func() {
		t0 := time.Now()
		cmd := exec.Command("make", "--no-print-directory", "image")
		cmd.Dir = c.RepoRoot
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			imageErr = fmt.Errorf("make image: %v\n%s", err, stderr.String())
			return
		}
		imageName = lastLine(string(out))
		logf("make image: %s in %.1fs", imageName, time.Since(t0).Seconds())
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
	return imageName
}

// HostPodman makes sure this machine's podman answers at HostPodmanSocket for the rest of the test. If
// no service answers there, it starts one (with the framework service's containers.conf, see
// PodmanService) and stops it by PID at the end of the test. Only one test on the machine uses the
// standard socket at a time: the others wait for a lock file.
func HostPodman(t testing.TB) *PodmanService {
	t.Helper()
	c := Get(t)
	unlock, err := lockFile(filepath.Join(os.TempDir(), "runlet-e2e-host-podman.lock"), 15*time.Minute)
	if err != nil {
		t.Fatalf("host podman: %v", err)
	}
	t.Cleanup(unlock)
	svc := &PodmanService{Socket: HostPodmanSocket, LogPath: filepath.Join(c.Dir, "host-podman.log")}
	if svc.Ping() == nil {
		logf("podman already serves %s: using it", HostPodmanSocket)
		return svc
	}
	svc.ContainersConf = Podman(t).ContainersConf
	if err := os.MkdirAll(filepath.Dir(HostPodmanSocket), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatalf("podman service on %s (log %s): %v", HostPodmanSocket, svc.LogPath, err)
	}
	t.Cleanup(func() {
		if err := svc.Stop(); err != nil {
			t.Logf("host podman: %v", err)
		}
		_ = os.Remove(HostPodmanSocket)
	})
	return svc
}

// lockFile takes an exclusive flock on path, waiting up to timeout; the returned func releases it.
func lockFile(path string, timeout time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s: still locked after %s", path, timeout)
		}
		time.Sleep(time.Second)
	}
	return func() { f.Close() }, nil
}

// Helm runs helm with the admin kubeconfig and returns its output; a failure fails the test.
func Helm(t testing.TB, args ...string) string {
	t.Helper()
	out, err := HelmE(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// HelmE runs helm with the admin kubeconfig and returns stdout and stderr together.
func HelmE(args ...string) (string, error) {
	c := cluster
	if c == nil {
		return "", errors.New("framework: no control plane (TestMain must call framework.Main)")
	}
	cmd := exec.Command(c.Helm, args...)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+c.AdminKubeconfig)
	cmd.Dir = c.RepoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// PodmanPodsOwnedBy lists the podman pods runlet made for a node (label io.runlet.owner=<node>).
func PodmanPodsOwnedBy(t testing.TB, node string) []PodmanPod {
	t.Helper()
	ps, err := podmanPods("label=" + LabelOwner + "=" + node)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// RemovePodmanOwnedBy force-removes what podman still holds for a node and says how much there was.
func RemovePodmanOwnedBy(node string) int {
	return removePodmanObjects("label=" + LabelOwner + "=" + node)
}

// SharedHostDir makes dir a shared mount for the rest of the test, as a host set up for a kubelet in a
// container has it (systemd makes / shared; this kind of machine's / is private): mounts made below it
// inside a container with Bidirectional propagation then reach the host, and podman. Unless dir is
// already a shared mount point, it is bind-mounted onto itself and made shared, and that is undone at
// cleanup.
func SharedHostDir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if sharedMountPoint(dir) {
		return
	}
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mount %s: %v", dir, err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_SHARED, ""); err != nil {
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		t.Fatalf("make %s shared: %v", dir, err)
	}
	t.Cleanup(func() {
		UnmountUnder(dir)
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", dir, err)
		}
	})
}

// sharedMountPoint reports whether dir is a mount point with shared propagation.
func sharedMountPoint(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, _, _ := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		if len(f) > 6 && f[4] == dir {
			for _, opt := range f[6:] {
				if strings.HasPrefix(opt, "shared:") {
					return true
				}
			}
		}
	}
	return false
}

// UnmountUnder detaches every mount below the dirs (not the dirs themselves), deepest first: what
// a runlet that is gone left there (pods' tmpfs volumes), so that the directories can be removed.
func UnmountUnder(dirs ...string) {
	points := MountsUnder(dirs...)
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			logf("unmount %s: %v", p, err)
		}
	}
}

// MountsUnder lists the host's mount points below any of dirs (not the dirs themselves).
func MountsUnder(dirs ...string) []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	below := func(p string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d+"/") })
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && below(f[1]) {
			points = append(points, f[1])
		}
	}
	return points
}

// PauseAPIServer stops the control plane's kube-apiserver (SIGSTOP): it keeps its connections and
// answers nothing, as an apiserver cut off by the network. The returned func resumes it (SIGCONT);
// the end of the test does, if nothing did before.
func PauseAPIServer(t testing.TB) (resume func()) {
	t.Helper()
	pid, _ := apiserverPID(t)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("resume the apiserver: %v", err)
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

// StopAPIServer stops the control plane's kube-apiserver with sig (SIGTERM: a clean shutdown, its
// watches closed; SIGKILL: a crash, its connections reset) and waits for it to exit. The returned func
// starts it again as hack/cp-up.sh started it (its command line, environment and working directory,
// its log appended, its PID file rewritten, so that the teardown stops the new process) and waits
// until it is ready; the end of the test does, if nothing did before.
func StopAPIServer(t testing.TB, sig syscall.Signal) (start func()) {
	t.Helper()
	c := Get(t)
	pid, pidFile := apiserverPID(t)
	argv, env, dir, err := processCommand(pid)
	if err != nil {
		t.Fatalf("the apiserver's command: %v", err)
	}
	if err := stopProcess(pid, sig, 30*time.Second); err != nil {
		t.Fatalf("stop the apiserver: %v", err)
	}
	var once sync.Once
	start = func() {
		once.Do(func() {
			if err := startAPIServer(c, argv, env, dir, pidFile); err != nil {
				t.Fatalf("start the apiserver again: %v", err)
			}
		})
	}
	t.Cleanup(start)
	return start
}

// apiserverPID is the control plane's kube-apiserver process, from the PID file hack/cp-up.sh wrote.
func apiserverPID(t testing.TB) (pid int, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(Get(t).CPDir, "pids", "kube-apiserver.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid, pidFile
}

// processCommand reads a process's command line, environment and working directory.
func processCommand(pid int) (argv, env []string, dir string, err error) {
	cmdline, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	environ, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	dir, err3 := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, nil, "", err
	}
	split := func(b []byte) []string { return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") }
	return split(cmdline), split(environ), dir, nil
}

// stopProcess sends sig to a process that is not the test's child and waits for it to go, with
// SIGKILL after timeout.
func stopProcess(pid int, sig syscall.Signal, timeout time.Duration) error {
	if err := syscall.Kill(pid, sig); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			deadline = time.Now().Add(timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// startAPIServer starts the apiserver from its recorded command, in a session of its own as
// hack/cp-up.sh starts it, and waits for /readyz.
func startAPIServer(c *Cluster, argv, env []string, dir, pidFile string) error {
	log, err := os.OpenFile(filepath.Join(c.CPDir, "logs", "kube-apiserver.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped when hack/cp-down.sh stops it
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	return poll(2*time.Minute, func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(body)) == "ok", nil
	}, false)
}
