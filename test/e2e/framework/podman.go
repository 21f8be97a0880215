package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// PodmanService is a `podman system service --time=0 unix://…` owned by the test binary, shared by the
// package's tests and handed to runlets as --podman-socket. It runs with a containers.conf that makes
// pods' infra containers start on this kind of host (OCI runtime, rlimits), like a host set up for runlet. Tests may Stop, Kill or Restart it; the next
// Podman(t) starts it again if it is down. It is stopped by PID when Main returns.
type PodmanService struct {
	Socket         string // path of the unix socket
	TCP            string // host:port to listen on instead of Socket (a remote-style tcp:// service)
	LogPath        string
	ContainersConf string // written at the first Start (see configure)

	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{}
	state *os.ProcessState
}

var (
	podmanMu   sync.Mutex
	podmanSvc  *PodmanService
	imagesOnce sync.Once
	imagesErr  error
)

// Podman returns the framework's podman service, starting it (and building the test images with
// hack/images.sh, once) when it is not running.
func Podman(t testing.TB) *PodmanService {
	t.Helper()
	c := Get(t)
	EnsureImages(t)
	podmanMu.Lock()
	defer podmanMu.Unlock()
	if podmanSvc == nil {
		dir := filepath.Join(c.Dir, "podman")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		podmanSvc = &PodmanService{Socket: filepath.Join(dir, "podman.sock"), LogPath: filepath.Join(dir, "service.log")}
	}
	if !podmanSvc.Running() {
		if err := podmanSvc.Start(); err != nil {
			t.Fatalf("podman service: %v\n--- tail of %s:\n%s", err, podmanSvc.LogPath, tail(podmanSvc.LogPath, 30))
		}
	}
	return podmanSvc
}

// EnsureImages runs hack/images.sh once per test binary (builds localhost/runlet/busybox:latest).
func EnsureImages(t testing.TB) {
	t.Helper()
	c := Get(t)
	imagesOnce.Do(func() {
		out, err := runScript(c.RepoRoot, nil, os.Stderr, "hack/images.sh")
		if err != nil {
			imagesErr = fmt.Errorf("hack/images.sh: %v %s", err, out)
		}
	})
	if imagesErr != nil {
		t.Fatal(imagesErr)
	}
}

// URL is the socket as runlet and podman --url take it: unix:///path, or tcp://host:port.
func (p *PodmanService) URL() string {
	if p.TCP != "" {
		return "tcp://" + p.TCP
	}
	return "unix://" + p.Socket
}

// Start starts the service and waits until it answers /_ping. The first start also writes the
// service's containers.conf (see configure).
func (p *PodmanService) Start() error {
	p.mu.Lock()
	running := p.cmd != nil && p.state == nil
	conf := p.ContainersConf
	p.mu.Unlock()
	if running {
		return errors.New("podman service is already running")
	}
	if conf == "" {
		c, err := p.configure()
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.ContainersConf = c
		p.mu.Unlock()
	}
	return p.launch(p.confEnv())
}

// configure makes the service what a host set up for runlet provides, as runlet does for a service
// it starts itself: podman 4.x takes the OCI runtime and rlimits of a pod's infra container only
// from containers.conf, and on this kind of host crun fails (cgroup v1 hybrid) and podman's default
// rlimits exceed what a process without CAP_SYS_RESOURCE may hand down. It starts a plain service to
// read the limits podman really runs with, stops it, and writes containers.conf beside the socket.
func (p *PodmanService) configure() (string, error) {
	if err := p.launch(nil); err != nil {
		return "", err
	}
	nofile, nproc, err := procHardLimits(p.PID())
	if stopErr := p.Stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return "", err
	}
	const podmanDefault = 1 << 20
	var b strings.Builder
	b.WriteString("# written by runlet's e2e framework for its podman service\n")
	fmt.Fprintf(&b, "[containers]\ndefault_ulimits = [\"nofile=%d:%d\", \"nproc=%d:%d\"]\n",
		min(nofile, podmanDefault), min(nofile, podmanDefault), min(nproc, podmanDefault), min(nproc, podmanDefault))
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil { // cgroup v1 or hybrid
		if _, err := exec.LookPath("runc"); err == nil {
			b.WriteString("[engine]\nruntime = \"runc\"\n")
		} else if _, err := os.Stat("/usr/sbin/runc"); err == nil {
			b.WriteString("[engine]\nruntime = \"runc\"\n")
		}
	}
	path := filepath.Join(filepath.Dir(p.Socket), "containers.conf")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// confEnv points podman at ContainersConf: CONTAINERS_CONF_OVERRIDE (merged over the system files)
// from podman 4.4 on, CONTAINERS_CONF (replacing them) before.
func (p *PodmanService) confEnv() []string {
	if p.ContainersConf == "" {
		return nil
	}
	name := "CONTAINERS_CONF"
	out, _ := exec.Command("podman", "--version").Output()
	var major, minor int
	if f := strings.Fields(string(out)); len(f) > 0 {
		fmt.Sscanf(f[len(f)-1], "%d.%d", &major, &minor)
	}
	if major > 4 || major == 4 && minor >= 4 {
		name = "CONTAINERS_CONF_OVERRIDE"
	}
	return []string{name + "=" + p.ContainersConf}
}

func (p *PodmanService) launch(env []string) error {
	p.mu.Lock()
	if p.TCP == "" {
		_ = os.Remove(p.Socket)
	}
	f, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	fmt.Fprintf(f, "=== %s framework: podman system service %v\n", time.Now().Format(time.RFC3339Nano), env)
	cmd := exec.Command("podman", "system", "service", "--time=0", p.URL())
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	f.Close()
	if err != nil {
		p.mu.Unlock()
		return err
	}
	done := make(chan struct{})
	p.cmd, p.done, p.state = cmd, done, nil
	go func() {
		_ = cmd.Wait()
		p.mu.Lock()
		p.state = cmd.ProcessState
		p.mu.Unlock()
		close(done)
	}()
	p.mu.Unlock()
	return poll(30*time.Second, func() (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("podman service exited: %v", p.ProcessState())
		default:
		}
		return p.Ping() == nil, nil
	}, true)
}

// procHardLimits reads the hard RLIMIT_NOFILE and RLIMIT_NPROC of a process from /proc.
func procHardLimits(pid int) (nofile, nproc uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		hard := f[len(f)-2] // "Max open files  1024  4096  files": count from the right
		v, perr := strconv.ParseUint(hard, 10, 64)
		if hard == "unlimited" {
			v, perr = math.MaxUint64, nil
		}
		switch {
		case strings.HasPrefix(line, "Max open files") && perr == nil:
			nofile = v
		case strings.HasPrefix(line, "Max processes") && perr == nil:
			nproc = v
		}
	}
	if nofile == 0 || nproc == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/limits: nofile/nproc not found", pid)
	}
	return nofile, nproc, nil
}

// Ping calls GET /_ping on the socket.
func (p *PodmanService) Ping() error {
	c := p.HTTPClient()
	c.Timeout = 2 * time.Second
	resp, err := c.Get("http://d/_ping")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/_ping: %s", resp.Status)
	}
	return nil
}

// HTTPClient talks to the service's API over its socket (any host name in URLs).
func (p *PodmanService) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if p.TCP != "" {
				return (&net.Dialer{}).DialContext(ctx, "tcp", p.TCP)
			}
			return (&net.Dialer{}).DialContext(ctx, "unix", p.Socket)
		},
	}}
}

// PID of the current (or last) service process, 0 if never started.
func (p *PodmanService) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running tells whether the service process is alive.
func (p *PodmanService) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && p.state == nil
}

// ProcessState of the last process, nil while it runs.
func (p *PodmanService) ProcessState() *os.ProcessState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Stop sends SIGTERM and waits (15s, then SIGKILL). Containers keep running (conmon owns them).
func (p *PodmanService) Stop() error { return p.signalAndWait(syscall.SIGTERM, 15*time.Second) }

// Kill sends SIGKILL and waits.
func (p *PodmanService) Kill() error { return p.signalAndWait(syscall.SIGKILL, 15*time.Second) }

// Restart stops the service and starts it again on the same socket.
func (p *PodmanService) Restart() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.Start()
}

func (p *PodmanService) signalAndWait(sig syscall.Signal, timeout time.Duration) error {
	p.mu.Lock()
	if p.cmd == nil || p.state != nil {
		p.mu.Unlock()
		return nil
	}
	proc, done := p.cmd.Process, p.done
	p.mu.Unlock()
	if !SignalAndWait(proc, sig, done, timeout) {
		return fmt.Errorf("podman service (pid %d) ignored %v for %v: killed", proc.Pid, sig, timeout)
	}
	return nil
}

func stopPodmanService() {
	podmanMu.Lock()
	p := podmanSvc
	podmanMu.Unlock()
	if p != nil && p.Running() {
		if err := p.Stop(); err != nil {
			logf("%v", err)
		}
	}
}

// --- the podman CLI (local storage, no service needed): the backend's ground truth in assertions ---

// PodmanContainer is one entry of `podman ps -a --format json`.
type PodmanContainer struct {
	ID        string            `json:"Id"`
	Names     []string          `json:"Names"`
	Image     string            `json:"Image"`
	Command   []string          `json:"Command"`
	State     string            `json:"State"` // created, running, exited, …
	Status    string            `json:"Status"`
	Exited    bool              `json:"Exited"`
	ExitCode  int               `json:"ExitCode"`
	StartedAt int64             `json:"StartedAt"`
	ExitedAt  int64             `json:"ExitedAt"`
	Created   int64             `json:"Created"`
	Labels    map[string]string `json:"Labels"`
	Pod       string            `json:"Pod"`
	PodName   string            `json:"PodName"`
	IsInfra   bool              `json:"IsInfra"`
	Pid       int               `json:"Pid"`
}

// PodmanPod is one entry of `podman pod ps --format json`.
type PodmanPod struct {
	ID         string            `json:"Id"`
	Name       string            `json:"Name"`
	Status     string            `json:"Status"`
	InfraID    string            `json:"InfraId"`
	Labels     map[string]string `json:"Labels"`
	Containers []struct {
		ID     string `json:"Id"`
		Names  string `json:"Names"`
		Status string `json:"Status"`
	} `json:"Containers"`
}

// PodmanInspect is the part of `podman container inspect` that tests usually look at; Raw has it all.
type PodmanInspect struct {
	ID    string `json:"Id"`
	Name  string `json:"Name"`
	State struct {
		Status     string    `json:"Status"`
		Running    bool      `json:"Running"`
		Paused     bool      `json:"Paused"`
		OOMKilled  bool      `json:"OOMKilled"`
		Pid        int       `json:"Pid"`
		ExitCode   int       `json:"ExitCode"`
		StartedAt  time.Time `json:"StartedAt"`
		FinishedAt time.Time `json:"FinishedAt"`
	} `json:"State"`
	Image        string `json:"Image"`
	ImageName    string `json:"ImageName"`
	Pod          string `json:"Pod"`
	RestartCount int    `json:"RestartCount"`
	OCIRuntime   string `json:"OCIRuntime"`
	Config       struct {
		Labels     map[string]string `json:"Labels"`
		Env        []string          `json:"Env"`
		Cmd        []string          `json:"Cmd"`
		Entrypoint any               `json:"Entrypoint"` // a string in 4.x, a list in 5.x
		WorkingDir string            `json:"WorkingDir"`
		User       string            `json:"User"`
	} `json:"Config"`
	Raw json.RawMessage `json:"-"`
}

// PodmanCLI runs `podman ARGS...` and returns stdout; a failure fails the test.
func PodmanCLI(t testing.TB, args ...string) string {
	t.Helper()
	out, err := PodmanCLIE(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// PodmanCLIE runs `podman ARGS...` and returns stdout; the error carries stderr.
func PodmanCLIE(args ...string) (string, error) {
	cmd := exec.Command("podman", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("podman %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// PodmanContainers lists containers (running or not) matching every filter, e.g. "label=k=v".
func PodmanContainers(t testing.TB, filters ...string) []PodmanContainer {
	t.Helper()
	cs, err := podmanContainers(filters...)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// PodContainers lists the podman containers runlet made for a pod UID (the infra one has IsInfra).
func PodContainers(t testing.TB, uid types.UID) []PodmanContainer {
	t.Helper()
	return PodmanContainers(t, "label="+LabelPodUID+"="+string(uid))
}

// PodmanPods lists the podman pods runlet made for a pod UID.
func PodmanPods(t testing.TB, uid types.UID) []PodmanPod {
	t.Helper()
	ps, err := podmanPods("label=" + LabelPodUID + "=" + string(uid))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// InspectContainer runs `podman container inspect` on one container.
func InspectContainer(t testing.TB, id string) *PodmanInspect {
	t.Helper()
	out := PodmanCLI(t, "container", "inspect", "--format", "json", id)
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(out), &raws); err != nil || len(raws) != 1 {
		t.Fatalf("podman container inspect %s: %v: %s", id, err, out)
	}
	var in PodmanInspect
	if err := json.Unmarshal(raws[0], &in); err != nil {
		t.Fatalf("podman container inspect %s: %v", id, err)
	}
	in.Raw = raws[0]
	return &in
}

func podmanContainers(filters ...string) ([]PodmanContainer, error) {
	return podmanList[PodmanContainer]([]string{"ps", "-a"}, filters)
}

func podmanPods(filters ...string) ([]PodmanPod, error) {
	return podmanList[PodmanPod]([]string{"pod", "ps"}, filters)
}

// podmanList runs a podman listing command with filters and decodes its JSON.
func podmanList[T any](cmd, filters []string) ([]T, error) {
	args := append(cmd, "--format", "json")
	for _, f := range filters {
		args = append(args, "--filter", f)
	}
	out, err := PodmanCLIE(args...)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(out) == "" {
		return nil, nil
	}
	var list []T
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("podman %s: %v", strings.Join(cmd, " "), err)
	}
	return list, nil
}

// removePodmanObjects force-removes the podman pods and containers matching filter (e.g.
// "label=io.runlet.owner=<node>") and returns how many there were.
func removePodmanObjects(filter string) int {
	n := 0
	if ps, err := podmanPods(filter); err == nil {
		for _, p := range ps {
			n++
			if _, err := PodmanCLIE("pod", "rm", "-f", "-t", "0", p.ID); err != nil {
				logf("%v", err)
			}
		}
	}
	if cs, err := podmanContainers(filter); err == nil {
		for _, c := range cs {
			n++
			if _, err := PodmanCLIE("rm", "-f", "-t", "0", c.ID); err != nil && !strings.Contains(err.Error(), "no such container") {
				logf("%v", err)
			}
		}
	}
	return n
}
