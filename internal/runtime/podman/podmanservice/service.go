package podmanservice

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/childproc"
)

// Options say where and how a service runs.
type Options struct {
	// Podman is the podman binary, looked up in PATH ("podman").
	Podman string
	// Listen is the API's address: unix:///path or tcp://host:port.
	Listen string
	// LogPath receives the service's output; each start appends to it, so
	// the reason for an earlier exit stays readable.
	LogPath string
	// ContainersConf is a containers.conf read over the host's (see Config);
	// empty leaves podman's configuration alone.
	ContainersConf string
	// ReadyTimeout bounds the wait for the API to answer (60 s).
	ReadyTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL (5 s).
	StopGrace time.Duration
	// Args are podman's global options, given before "system service": a
	// store of its own (--root, --runroot, --tmpdir).
	Args []string
	// Cgroups are the cgroups the service is moved to as it starts: runlet's
	// helpers', so that the monitors it starts outlive the end of its
	// starter's cgroup. Empty leaves it in its starter's.
	Cgroups []string
}

// Service is a `podman system service` its starter must stop: it runs with
// --time=0, so it never exits on its own. Containers outlive it (conmon owns
// them) and a new service on the same socket finds them again.
type Service struct {
	opts Options
	cmd  *exec.Cmd
	done <-chan struct{}
}

// Start runs the service and returns once its API answers.
func Start(ctx context.Context, o Options) (*Service, error) {
	if o.Listen == "" || o.LogPath == "" {
		return nil, errors.New("podman service: Listen and LogPath are required")
	}
	if o.Podman == "" {
		o.Podman = "podman"
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.StopGrace == 0 {
		o.StopGrace = 5 * time.Second
	}
	podman, err := exec.LookPath(o.Podman)
	if err != nil {
		return nil, fmt.Errorf("podman service: %w", err)
	}
	if network, sock := splitURL(o.Listen); network == "unix" {
		_ = os.Remove(sock) // left by a service that was killed
	}
	s := &Service{opts: o}
	if err := s.spawn(podman); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Service) spawn(podman string) error {
	logf, err := os.OpenFile(s.opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	env := confEnv(podman, s.opts.ContainersConf)
	args := append(append([]string{}, s.opts.Args...), "system", "service", "--time=0", s.opts.Listen)
	fmt.Fprintf(logf, "=== %s runlet: %s %s %s\n",
		time.Now().Format(time.RFC3339Nano), podman, strings.Join(args, " "), strings.Join(env, " "))
	cmd := exec.Command(podman, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The service's containers' monitors inherit its working directory and
	// leave files there (conmon's "oom" mark): keep them beside the log,
	// not in whatever directory runlet or a test was started from.
	cmd.Dir = filepath.Dir(s.opts.LogPath)
	// Own process group: a ^C for runlet must not reach the service first.
	// SIGTERM at runlet's death: the service must not outlive runlet
	// (containers do: conmon owns them).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done, err := childproc.Start(cmd, syscall.SIGTERM)
	if err != nil {
		return fmt.Errorf("starting %s system service: %w", podman, err)
	}
	s.cmd, s.done = cmd, done
	if err := s.join(); err != nil {
		_ = s.Stop()
		return err
	}
	return nil
}

// join moves the service into Options.Cgroups. It is done after the start,
// by PID: its parent-death signal is tied to the thread that forked it, one
// of childproc's that lives as long as the service, which the move of a
// thread into the cgroups would leave there. The service starts nothing
// before its API answers, which the caller waits for next.
func (s *Service) join() error {
	pid := []byte(strconv.Itoa(s.cmd.Process.Pid))
	for _, d := range s.opts.Cgroups {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), pid, 0o644); err != nil {
			return fmt.Errorf("podman service: moving it to the cgroup %s: %w", d, err)
		}
	}
	return nil
}

// waitReady pings until the API answers; a service that exits first, or
// never answers, fails with the end of its log, where podman says why.
func (s *Service) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ReadyTimeout)
	defer cancel()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := Ping(pctx, s.opts.Listen)
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("podman system service exited at start-up: %s", s.LogTail())
		case <-ctx.Done():
			return fmt.Errorf("podman service at %s not ready after %s: %w; service log: %s",
				s.opts.Listen, s.opts.ReadyTimeout, err, s.LogTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// URL is where the service listens, as podman --url and runlet's
// --podman-socket take it.
func (s *Service) URL() string { return s.opts.Listen }

// PID is the service's process ID (0 for a nil Service), kept after it
// exits so that a log can name it.
func (s *Service) PID() int {
	if s == nil || s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Done is closed when the service's process has exited, for whatever reason.
func (s *Service) Done() <-chan struct{} { return s.done }

// Stop ends the service by its PID, never by name: SIGTERM, then SIGKILL
// after StopGrace. It returns an error only when SIGKILL was needed.
func (s *Service) Stop() error {
	if s.exited() {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(s.opts.StopGrace):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return fmt.Errorf("podman service (pid %d) ignored SIGTERM for %s: killed", s.PID(), s.opts.StopGrace)
}

// Kill ends the service with SIGKILL, as a crash would, and waits for it.
func (s *Service) Kill() error {
	if s.exited() {
		return nil
	}
	err := s.cmd.Process.Kill()
	<-s.done
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func (s *Service) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// LogTail is the end of the service's log (2 KiB), for error messages.
func (s *Service) LogTail() string {
	b, _ := os.ReadFile(s.opts.LogPath)
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return strings.TrimSpace(string(b))
}
