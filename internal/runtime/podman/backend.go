package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/hostproc"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// Options configure New.
type Options struct {
	// Socket is the libpod socket: a path, or a unix://, tcp:// or ssh://
	// URL (see libpod.Endpoint). Empty: the standard socket when it answers, else
	// a private service that the backend starts and stops itself.
	Socket string
	// SSH authenticates an ssh:// Socket.
	SSH libpod.SSHConfig
	// PrivateService starts a private service even when the standard socket
	// answers (tests, or to keep runlet's settings apart from the host's).
	PrivateService bool
	// PodmanPath is the podman binary for a private service ("podman").
	PodmanPath string
	// RunDir holds a private service's socket, containers.conf and log;
	// a new temporary directory by default (removed by Close).
	RunDir string
	// OCIRuntime overrides the detected OCI runtime (runc, crun, ...).
	OCIRuntime string
	// StartTimeout bounds how long a private service may take to answer.
	StartTimeout time.Duration
	// Owner, when set, is stamped on nothing but filters everything: the
	// backend lists and watches only objects labelled io.runlet.owner=Owner.
	Owner string
	// ExitDir is where conmon writes exit files, watched for early exit
	// hints. Empty: the --exit-dir of a running container's conmon, else
	// podman's default.
	ExitDir string
	// UserNSDir holds the idmapped mounts of containers in a user namespace
	// of their pod's, which the pod's root, an unprivileged user on the
	// host, must reach by path: a directory every user can search. Default
	// DefaultUserNSDir.
	UserNSDir string
	// Logf receives start-up decisions and service restarts; nil discards.
	Logf func(format string, args ...any)
}

// Backend implements runtime.Runtime on podman.
type Backend struct {
	opts       Options
	client     *libpod.Client
	info       libpod.Info
	host       runtime.HostInfo
	ociRuntime string
	remote     bool // the service runs on another host
	limits     podmanservice.Limits
	rlimits    []libpod.RLimit
	cg         cgroups.Host
	// podCgroups: runlet makes each pod's cgroup and podman the pod's
	// below it (see ownsPodCgroups).
	podCgroups bool
	ooms       *hostproc.OOMRecorder
	stopOOMs   func()

	restartMu sync.Mutex // serialises service restarts
	mu        sync.Mutex
	svc       *podmanservice.Service // nil when the socket belongs to someone else
	svcCfg    podmanservice.Config
	svcDir    string // the private service's socket, containers.conf and log
	ownDir    bool   // svcDir is a temporary directory for Close to remove
	closing   bool
	sandboxes map[string]sandboxMeta // pod ID → what never changes about it
	details   map[string]ctrDetail   // container ID → last inspect details
	// infraPending maps a created container whose pod's infra has not run
	// yet to that pod: its start starts the infra, whose cgroup then tells
	// the container's.
	infraPending map[string]infraOf
	// idmapped are the clones of created containers of pods in user
	// namespaces of their own, by container ID, until they start.
	idmapped map[string]idmapped
	images   imageCache // image → its ENV, for containers' environments
}

var _ runtime.Runtime = (*Backend)(nil)

// New connects to (or starts) a podman service and detects the host.
func New(ctx context.Context, opts Options) (*Backend, error) {
	if opts.PodmanPath == "" {
		opts.PodmanPath = "podman"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.UserNSDir == "" {
		opts.UserNSDir = DefaultUserNSDir
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	b := &Backend{opts: opts, sandboxes: map[string]sandboxMeta{}, details: map[string]ctrDetail{}}
	var err error
	if opts.Socket != "" {
		err = b.useSocket(ctx, opts.Socket)
	} else if sock := podmanservice.DefaultSocket(); !opts.PrivateService && pingable(ctx, sock) {
		err = b.useSocket(ctx, sock)
	} else {
		err = b.startOwnService(ctx)
	}
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	go b.supervise()
	b.watchOOMs()
	b.shareUserNSDir()
	return b, nil
}

func pingable(ctx context.Context, sock string) bool {
	if _, err := os.Stat(sock); err != nil {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := libpod.NewClient(sock).Ping(pctx)
	return err == nil
}

// useSocket adopts a service run by someone else: runlet can choose the OCI
// runtime and rlimits of its containers, but not of the pods' infra
// containers (see CreateSandbox for the hint given when those fail).
func (b *Backend) useSocket(ctx context.Context, sock string) error {
	ep, err := libpod.ParseEndpoint(sock)
	if err != nil {
		return err
	}
	c, err := libpod.Connect(ep, b.opts.SSH)
	if err != nil {
		return err
	}
	b.client, b.remote = c, !ep.Local()
	if err := b.client.WaitReady(ctx, 5*time.Second); err != nil {
		return err
	}
	if err := b.detect(ctx); err != nil {
		return err
	}
	if b.remote {
		// The service's limits cannot be read from here; a remote host is
		// taken to be set up for its own podman, whose defaults then work.
		b.limits = podmanservice.Limits{CapSysResource: true, Source: "podman's defaults (remote service)"}
	} else {
		b.limits = podmanservice.PeerLimits(b.client.Socket())
	}
	b.rlimits = specRLimits(b.limits)
	b.logStartup()
	return nil
}

// startOwnService starts a plain service first to learn the host (info and
// the limits podman really runs with: it lowers its own RLIMIT_NPROC), then,
// when the infra containers need another OCI runtime or clamped rlimits,
// restarts it with a containers.conf that says so.
func (b *Backend) startOwnService(ctx context.Context) error {
	dir := b.opts.RunDir
	ownDir := false
	if dir == "" {
		d, err := os.MkdirTemp("", "runlet-podman-")
		if err != nil {
			return err
		}
		dir, ownDir = d, true
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	svc, err := b.startService(ctx, dir, podmanservice.Config{})
	if err != nil {
		if ownDir {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	b.svc, b.svcDir, b.ownDir = svc, dir, ownDir
	b.client = libpod.NewClient(svc.URL())
	if err := b.detect(ctx); err != nil {
		return err
	}
	if l, err := podmanservice.ProcessLimits(svc.PID()); err == nil {
		b.limits = l
	} else {
		b.limits = podmanservice.OwnLimits()
	}
	b.rlimits = specRLimits(b.limits)
	cfg := podmanservice.Imposed(b.limits, b.ociRuntime, b.info.Host.OCIRuntime.Name)
	if !cfg.Empty() {
		if err := b.restartService(ctx, cfg); err != nil {
			return err
		}
	}
	b.logStartup()
	return nil
}

// restartService replaces the owned service by one running with cfg; the
// caller holds restartMu or runs before supervise starts.
func (b *Backend) restartService(ctx context.Context, cfg podmanservice.Config) error {
	_ = b.svc.Stop()
	svc, err := b.startService(ctx, b.svcDir, cfg)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.svc, b.svcCfg = svc, cfg
	b.mu.Unlock()
	return nil
}

// detect reads /info once; none of it changes while the service runs.
func (b *Backend) detect(ctx context.Context) error {
	info, err := b.client.Info(ctx)
	if err != nil {
		return err
	}
	b.info = info
	b.ociRuntime = chooseOCIRuntime(info, b.opts.OCIRuntime, !b.remote)
	b.cg = cgroups.Detect(info.Host.CgroupVersion == "v2")
	b.podCgroups = ownsPodCgroups(info, b.remote)
	b.ooms = hostproc.NewOOMRecorder(cgroups.Root, b.cg.V2)
	b.host = runtime.HostInfo{
		RuntimeName:    "podman",
		RuntimeVersion: info.Version.Version,
		OCIRuntime:     b.ociRuntime,
		CgroupVersion:  info.Host.CgroupVersion,
		KernelVersion:  info.Host.Kernel,
		OS:             info.Host.OS,
		Arch:           info.Host.Arch,
		StorageRoot:    info.Store.GraphRoot,
		Remote:         b.remote,
		CPUs:           info.Host.CPUs,
		MemoryBytes:    info.Host.MemTotal,
	}
	return nil
}

func (b *Backend) logStartup() {
	where := b.client.Socket() // a local socket by its path, as before
	if where == "" {
		where = b.client.Endpoint().String()
	}
	b.opts.Logf("podman %s at %s: cgroup %s, OCI runtime %s (service default %s), rlimits %v from %s (CAP_SYS_RESOURCE=%v)",
		b.host.RuntimeVersion, where, b.host.CgroupVersion, b.ociRuntime,
		b.info.Host.OCIRuntime.Name, b.rlimits, b.limits.Source, b.limits.CapSysResource)
}

// supervise restarts an owned service that died (containers keep running:
// conmon owns them), so runlet only loses status freshness for a moment.
func (b *Backend) supervise() {
	for {
		b.mu.Lock()
		svc := b.svc
		b.mu.Unlock()
		if svc == nil {
			return
		}
		<-svc.Done()
		b.mu.Lock()
		closing, current := b.closing, b.svc == svc
		b.mu.Unlock()
		if closing {
			return
		}
		if !current {
			continue
		}
		if err := b.Reconnect(context.Background()); err != nil {
			b.opts.Logf("podman service restart failed: %v", err)
			time.Sleep(time.Second)
		}
	}
}

// Reconnect makes sure the service answers again: an owned service that
// exited is started anew on the same socket; a foreign one is pinged. Each
// request dials afresh, so nothing else needs resetting.
func (b *Backend) Reconnect(ctx context.Context) error {
	b.restartMu.Lock()
	defer b.restartMu.Unlock()
	b.mu.Lock()
	svc, cfg, closing := b.svc, b.svcCfg, b.closing
	b.mu.Unlock()
	if closing {
		return errors.New("podman backend closed")
	}
	if svc != nil {
		select {
		case <-svc.Done():
			b.opts.Logf("podman service (pid %d) exited; restarting it", svc.PID())
			if err := b.restartService(ctx, cfg); err != nil {
				return err
			}
		default:
		}
	}
	_, err := b.client.Ping(ctx)
	return err
}

// Client exposes the libpod client (for benchmarks and tests).
func (b *Backend) Client() *libpod.Client { return b.client }

// OCIRuntime is the OCI runtime every container is created with.
func (b *Backend) OCIRuntime() string { return b.ociRuntime }

// RLimits are the r_limits every container is created with (nil: podman's).
func (b *Backend) RLimits() []libpod.RLimit { return b.rlimits }

// ServicePID is the PID of the service the backend started, 0 if none.
func (b *Backend) ServicePID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.svc.PID()
}

// Close stops a service the backend started (by its PID); the containers
// keep running. It is safe to call more than once.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closing = true
	svc, stopOOMs := b.svc, b.stopOOMs
	b.mu.Unlock()
	if stopOOMs != nil {
		stopOOMs()
	}
	if b.client != nil {
		_ = b.client.Close()
	}
	if svc == nil {
		return nil
	}
	err := svc.Stop()
	if b.ownDir {
		_ = os.RemoveAll(b.svcDir)
	}
	return err
}

// Ping checks the service answers.
func (b *Backend) Ping(ctx context.Context) error {
	_, err := b.client.Ping(ctx)
	return err
}

// Info describes the host as detected at start-up.
func (b *Backend) Info(ctx context.Context) (runtime.HostInfo, error) {
	return b.host, nil
}

func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
