package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// defaultSocket is where a system-managed podman service listens.
func defaultSocket() string {
	if os.Geteuid() == 0 {
		return "/run/podman/podman.sock"
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "podman", "podman.sock")
	}
	return fmt.Sprintf("/run/user/%d/podman/podman.sock", os.Geteuid())
}

// service is a `podman system service` runlet started and must stop.
type service struct {
	podman  string
	dir     string
	ownDir  bool
	socket  string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// serviceConfig is what runlet must impose on a service it starts: the infra
// container of a pod cannot be given an OCI runtime or rlimits through the
// API, only through containers.conf.
type serviceConfig struct {
	OCIRuntime string
	RLimits    []libpod.RLimit
}

func (sc serviceConfig) empty() bool { return sc.OCIRuntime == "" && len(sc.RLimits) == 0 }

// containersConf renders sc as a containers.conf fragment.
func (sc serviceConfig) containersConf() string {
	var b strings.Builder
	b.WriteString("# written by runlet for the podman service it runs\n")
	if len(sc.RLimits) > 0 {
		var ul []string
		for _, r := range sc.RLimits {
			ul = append(ul, fmt.Sprintf("%q", fmt.Sprintf("%s=%d:%d", r.Type, r.Soft, r.Hard)))
		}
		fmt.Fprintf(&b, "[containers]\ndefault_ulimits = [%s]\n", strings.Join(ul, ", "))
	}
	if sc.OCIRuntime != "" {
		fmt.Fprintf(&b, "[engine]\nruntime = %q\n", sc.OCIRuntime)
	}
	return b.String()
}

// startService runs `podman system service` on a socket in dir.
func startService(ctx context.Context, podman, dir string, cfg serviceConfig, timeout time.Duration) (*service, error) {
	s := &service{podman: podman, dir: dir, socket: filepath.Join(dir, "podman.sock"), logPath: filepath.Join(dir, "service.log")}
	_ = os.Remove(s.socket)
	env, err := s.env(cfg)
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(podman, "system", "service", "--time=0", "unix://"+s.socket)
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	// Own process group: a ^C for runlet must not reach the service first.
	// Pdeathsig: the service must not outlive runlet (containers do: conmon owns them).
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	s.done = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// The kernel sends Pdeathsig when the thread that forked the child
		// ends, not the process: this one stays, locked, while the service
		// runs, so that Go never retires it under the service.
		goruntime.LockOSThread()
		err := s.cmd.Start()
		started <- err
		if err == nil {
			_ = s.cmd.Wait()
			close(s.done)
		}
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("starting %s system service: %w", podman, err)
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *service) waitReady(ctx context.Context, timeout time.Duration) error {
	c := libpod.NewClient(s.socket)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.WaitReady(rctx, timeout) }()
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("%w; service log: %s", err, s.logTail())
		}
		return nil
	case <-s.done:
		return fmt.Errorf("podman system service exited at start-up: %s", s.logTail())
	}
}

// env passes runlet's environment plus the containers.conf fragment. podman
// 4.4+ merges CONTAINERS_CONF_OVERRIDE over the system files; older ones
// only know CONTAINERS_CONF, which replaces them.
func (s *service) env(cfg serviceConfig) ([]string, error) {
	env := os.Environ()
	if cfg.empty() {
		return env, nil
	}
	path := filepath.Join(s.dir, "containers.conf")
	if err := os.WriteFile(path, []byte(cfg.containersConf()), 0o644); err != nil {
		return nil, err
	}
	name := "CONTAINERS_CONF"
	if podmanAtLeast(s.podman, 4, 4) {
		name = "CONTAINERS_CONF_OVERRIDE"
	}
	return append(env, name+"="+path), nil
}

func (s *service) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return strings.TrimSpace(string(b))
}

// stop ends the service by its PID: SIGTERM, then SIGKILL after 5 s.
func (s *service) stop() error {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return errors.New("podman service ignored SIGTERM; killed")
}

func (s *service) pid() int {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)`)

// podmanAtLeast runs `podman --version`; unknown counts as old.
func podmanAtLeast(podman string, major, minor int) bool {
	out, err := exec.Command(podman, "--version").Output()
	if err != nil {
		return false
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return ma > major || ma == major && mi >= minor
}
