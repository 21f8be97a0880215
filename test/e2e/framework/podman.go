package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
	"k8s.io/apimachinery/pkg/types"
)

// PodmanService is a `podman system service --time=0 unix://…` owned by the test binary, shared by the
// package's tests and handed to runlets as --podman-socket. It runs with the containers.conf runlet
// imposes on a service it starts itself (see podmanservice), like a host set up for runlet. Tests may
// Stop, Kill or Restart it; the next Podman(t) starts it again if it is down. It is stopped by PID when
// Main returns.
type PodmanService struct {
	Socket         string // path of the unix socket
	TCP            string // host:port to listen on instead of Socket (a remote-style tcp:// service)
	LogPath        string
	ContainersConf string // written at the first Start when the host needs one (see configure)
	// Root, RunRoot and TmpDir are a private service's own store and runtime state (PrivatePodman);
	// empty: the host's.
	Root, RunRoot, TmpDir string

	mu         sync.Mutex
	svc        *podmanservice.Service
	configured bool
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
			t.Fatalf("podman service (log %s): %v", podmanSvc.LogPath, err)
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
// service's containers.conf when the host needs one (see configure).
func (p *PodmanService) Start() error {
	if p.Running() {
		return errors.New("podman service is already running")
	}
	if err := p.configure(); err != nil {
		return err
	}
	return p.launch(p.ContainersConf)
}

// configure decides the containers.conf as runlet does for a service it starts itself: it starts a
// plain service to read the limits podman really runs with, stops it, and writes what podmanservice
// imposes for those limits and this host's cgroups beside the log.
func (p *PodmanService) configure() error {
	if p.ContainersConf != "" || p.configured {
		return nil
	}
	if err := p.launch(""); err != nil {
		return err
	}
	limits, err := podmanservice.ProcessLimits(p.PID())
	if stopErr := p.Stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}
	out, err := PodmanCLIE("info", "--format", "{{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}}")
	cgroups, def, _ := strings.Cut(strings.TrimSpace(out), " ")
	if err != nil {
		return err
	}
	p.configured = true
	cfg := podmanservice.Imposed(limits, podmanservice.OCIRuntime(cgroups, def), def)
	if cfg.Empty() {
		return nil
	}
	p.ContainersConf = filepath.Join(filepath.Dir(p.LogPath), "containers.conf")
	return cfg.Save(p.ContainersConf)
}

func (p *PodmanService) launch(conf string) error {
	svc, err := podmanservice.Start(context.Background(), podmanservice.Options{
		Listen: p.URL(), LogPath: p.LogPath, ContainersConf: conf, Args: p.globalArgs(),
		ReadyTimeout: 30 * time.Second, StopGrace: 15 * time.Second,
	})
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.svc = svc
	p.mu.Unlock()
	return nil
}

// Ping calls GET /_ping on the socket.
func (p *PodmanService) Ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return podmanservice.Ping(ctx, p.URL())
}

func (p *PodmanService) current() *podmanservice.Service {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.svc
}

// PID of the current (or last) service process, 0 if never started.
func (p *PodmanService) PID() int { return p.current().PID() }

// Running tells whether the service process is alive.
func (p *PodmanService) Running() bool {
	svc := p.current()
	if svc == nil {
		return false
	}
	select {
	case <-svc.Done():
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits (15s, then SIGKILL). Containers keep running (conmon owns them).
func (p *PodmanService) Stop() error {
	if svc := p.current(); svc != nil {
		return svc.Stop()
	}
	return nil
}

// Kill sends SIGKILL and waits.
func (p *PodmanService) Kill() error {
	if svc := p.current(); svc != nil {
		return svc.Kill()
	}
	return nil
}

// Restart stops the service and starts it again on the same socket.
func (p *PodmanService) Restart() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.Start()
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

// InfraRunning reports whether the pod's infra container runs.
func (p PodmanPod) InfraRunning() bool {
	for _, c := range p.Containers {
		if c.ID == p.InfraID {
			return strings.EqualFold(c.Status, "running")
		}
	}
	return false
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
		ConmonPid  int       `json:"ConmonPid"`
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
	return podmanList[PodmanContainer](PodmanCLIE, []string{"ps", "-a"}, filters)
}

func podmanPods(filters ...string) ([]PodmanPod, error) {
	return podmanList[PodmanPod](PodmanCLIE, []string{"pod", "ps"}, filters)
}

// podmanList runs a podman listing command with filters through cli and decodes its JSON.
func podmanList[T any](cli func(...string) (string, error), cmd, filters []string) ([]T, error) {
	args := append(cmd, "--format", "json")
	for _, f := range filters {
		args = append(args, "--filter", f)
	}
	out, err := cli(args...)
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
