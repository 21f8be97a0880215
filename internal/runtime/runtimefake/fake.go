// Package runtimefake is an in-memory runtime.Runtime for unit tests of the
// kubelet core. It keeps sandboxes and containers with their states, exit
// codes, timestamps and labels, and lets a test make containers exit, images
// go missing and calls fail. It is never used outside tests.
package runtimefake

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// ErrUnsupported is returned by the streaming calls the fake does not model.
var ErrUnsupported = errors.New("runtimefake: not supported")

// StopCall records one StopContainer call.
type StopCall struct {
	ID    string
	Grace time.Duration
}

type container struct {
	c   runtime.Container
	cfg runtime.ContainerConfig
}

// Fake is a thread-safe in-memory backend. The zero value is not usable; use New.
type Fake struct {
	mu         sync.Mutex
	seq        int
	last       time.Time
	sandboxes  map[string]*runtime.Sandbox
	containers map[string]*container
	missing    map[string]bool
	fail       map[string]error
	calls      map[string]int
	stops      []StopCall
	logs       map[string]string
	subs       []chan runtime.Event
	exec       ExecFunc
	imageUsers map[string]string
	sbConfigs  map[string]runtime.SandboxConfig
	signalLost map[string]bool // container IDs whose stop signal is lost
}

var (
	_ runtime.Runtime       = (*Fake)(nil)
	_ runtime.SignalChecker = (*Fake)(nil)
)

// New returns an empty fake.
func New() *Fake {
	return &Fake{
		sandboxes:  map[string]*runtime.Sandbox{},
		containers: map[string]*container{},
		missing:    map[string]bool{},
		fail:       map[string]error{},
		calls:      map[string]int{},
		logs:       map[string]string{},
		imageUsers: map[string]string{},
		sbConfigs:  map[string]runtime.SandboxConfig{},
		signalLost: map[string]bool{},
	}
}

// SetStopSignalLost makes StopSignalLost report true for a container, as
// for an init process without a handler for its stop signal.
func (f *Fake) SetStopSignalLost(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signalLost[id] = true
}

// StopSignalLost implements runtime.SignalChecker for running containers
// marked with SetStopSignalLost.
func (f *Fake) StopSignalLost(_ context.Context, id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	return ok && f.signalLost[id] && c.c.State == runtime.ContainerRunning
}

// SetImageUser sets the user ImageUser reports for an image ("" by default).
func (f *Fake) SetImageUser(image, user string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imageUsers[image] = user
}

// SandboxConfig returns the config a sandbox was created with.
func (f *Fake) SandboxConfig(id string) (runtime.SandboxConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg, ok := f.sbConfigs[id]
	return cfg, ok
}

// ImageUser implements runtime.Runtime.
func (f *Fake) ImageUser(_ context.Context, image string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("ImageUser"); err != nil {
		return "", err
	}
	if f.missing[image] {
		return "", fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	return f.imageUsers[image], nil
}

// --- controls ---

// Fail makes every later call of method (e.g. "StartContainer") return err;
// a nil err clears it.
func (f *Fake) Fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.fail, method)
		return
	}
	f.fail[method] = err
}

// SetImageMissing makes EnsureImage and CreateContainer fail with
// ErrImageNotFound for the images (missing=false restores them).
func (f *Fake) SetImageMissing(missing bool, images ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, img := range images {
		if missing {
			f.missing[img] = true
		} else {
			delete(f.missing, img)
		}
	}
}

// Exit makes a running container exit with code.
func (f *Fake) Exit(id string, code int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if c.c.State != runtime.ContainerRunning {
		return fmt.Errorf("container %s is %s, not running", id, c.c.State)
	}
	f.exitLocked(c, code)
	return nil
}

// SetSandboxState changes a sandbox's state (e.g. to NotReady).
func (f *Fake) SetSandboxState(id string, st runtime.SandboxState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.sandboxes[id]; ok {
		sb.State = st
	}
}

// SetLogs sets what Logs writes for a container.
func (f *Fake) SetLogs(id, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[id] = text
}

// Calls returns how many times method was called (failed calls included).
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Stops returns every StopContainer call, in order.
func (f *Fake) Stops() []StopCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]StopCall(nil), f.stops...)
}

// Config returns the config a container was created with.
func (f *Fake) Config(id string) (runtime.ContainerConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return runtime.ContainerConfig{}, false
	}
	return c.cfg, true
}

// Containers returns every container, oldest first.
func (f *Fake) Containers() []runtime.Container {
	cs, _ := f.ListContainers(context.Background())
	return cs
}

// Sandboxes returns every sandbox, oldest first.
func (f *Fake) Sandboxes() []runtime.Sandbox {
	sbs, _ := f.ListSandboxes(context.Background())
	return sbs
}

// --- internals ---

// enter counts the call and returns the injected failure, if any. f.mu must be held.
func (f *Fake) enter(method string) error {
	f.calls[method]++
	return f.fail[method]
}

// now is the wall clock, made strictly increasing so creation order is total.
func (f *Fake) now() time.Time {
	t := time.Now()
	if !t.After(f.last) {
		t = f.last.Add(time.Nanosecond)
	}
	f.last = t
	return t
}

func (f *Fake) nextID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%04d", prefix, f.seq)
}

func (f *Fake) exitLocked(c *container, code int) {
	c.c.State = runtime.ContainerExited
	c.c.ExitCode = code
	c.c.FinishedAt = f.now()
	f.publish(c.c.PodUID, c.c.ID, runtime.ActionDied)
}

func (f *Fake) publish(uid, id, action string) {
	ev := runtime.Event{PodUID: uid, ContainerID: id, Action: action, Time: time.Now()}
	for _, ch := range f.subs {
		select {
		case ch <- ev:
		default: // a hint only: dropping is allowed by the contract
		}
	}
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func imageID(image string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(image))
	return fmt.Sprintf("sha256:%016x", h.Sum64())
}

// --- runtime.Runtime ---

// Ping implements runtime.Runtime.
func (f *Fake) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enter("Ping")
}

// Info implements runtime.Runtime.
func (f *Fake) Info(context.Context) (runtime.HostInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return runtime.HostInfo{RuntimeName: "fake", RuntimeVersion: "0", OCIRuntime: "none",
		CgroupVersion: "2", OS: "linux", Arch: "amd64"}, f.enter("Info")
}

// EnsureImage implements runtime.Runtime.
func (f *Fake) EnsureImage(_ context.Context, image string, _ runtime.PullPolicy, _ []runtime.Credential) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("EnsureImage"); err != nil {
		return "", err
	}
	if f.missing[image] {
		return "", fmt.Errorf("pulling %s: %w", image, runtime.ErrImageNotFound)
	}
	return imageID(image), nil
}

// CreateSandbox implements runtime.Runtime.
func (f *Fake) CreateSandbox(_ context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("CreateSandbox"); err != nil {
		return runtime.Sandbox{}, err
	}
	labels := copyLabels(cfg.Labels)
	labels[runtime.LabelManaged] = "true"
	labels[runtime.LabelPodUID] = cfg.PodUID
	labels[runtime.LabelPodNamespace] = cfg.Namespace
	labels[runtime.LabelPodName] = cfg.Name
	id := f.nextID("sb")
	sb := &runtime.Sandbox{
		ID: id, PodUID: cfg.PodUID, Namespace: cfg.Namespace, Name: cfg.Name,
		State: runtime.SandboxReady, IPs: []string{fmt.Sprintf("10.88.%d.%d", f.seq/250, f.seq%250+2)},
		CreatedAt: f.now(), Labels: labels,
	}
	switch {
	case cfg.HostNetwork:
		sb.IPs = nil
	case cfg.NetNS != "":
		sb.NetNS, sb.IPs = cfg.NetNS, append([]string(nil), cfg.IPs...)
	}
	f.sandboxes[sb.ID] = sb
	f.sbConfigs[sb.ID] = cfg
	f.publish(cfg.PodUID, "", "pod-create")
	out := *sb
	out.Labels = copyLabels(labels)
	return out, nil
}

// RemoveSandbox implements runtime.Runtime: it removes the sandbox and its
// containers, running or not; a missing sandbox is not an error.
func (f *Fake) RemoveSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("RemoveSandbox"); err != nil {
		return err
	}
	sb, ok := f.sandboxes[id]
	if !ok {
		return nil
	}
	for cid, c := range f.containers {
		if c.c.SandboxID == id {
			delete(f.containers, cid)
		}
	}
	delete(f.sandboxes, id)
	f.publish(sb.PodUID, "", "pod-remove")
	return nil
}

// ListSandboxes implements runtime.Runtime.
func (f *Fake) ListSandboxes(context.Context) ([]runtime.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("ListSandboxes"); err != nil {
		return nil, err
	}
	out := make([]runtime.Sandbox, 0, len(f.sandboxes))
	for _, sb := range f.sandboxes {
		s := *sb
		s.IPs = append([]string(nil), sb.IPs...)
		s.Labels = copyLabels(sb.Labels)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// CreateContainer implements runtime.Runtime. Like podman, it copies the
// pod identity from the sandbox onto the container's labels.
func (f *Fake) CreateContainer(_ context.Context, sandboxID string, cfg runtime.ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("CreateContainer"); err != nil {
		return "", err
	}
	sb, ok := f.sandboxes[sandboxID]
	if !ok {
		return "", fmt.Errorf("sandbox %s: %w", sandboxID, runtime.ErrNotFound)
	}
	if f.missing[cfg.Image] {
		return "", fmt.Errorf("image %s: %w", cfg.Image, runtime.ErrImageNotFound)
	}
	labels := copyLabels(cfg.Labels)
	for _, k := range []string{runtime.LabelPodUID, runtime.LabelPodNamespace, runtime.LabelPodName} {
		labels[k] = sb.Labels[k]
	}
	labels[runtime.LabelManaged] = "true"
	labels[runtime.LabelContainerName] = cfg.Name
	labels[runtime.LabelAttempt] = fmt.Sprint(cfg.Attempt)
	c := &container{cfg: cfg, c: runtime.Container{
		ID: f.nextID("ctr"), SandboxID: sandboxID, PodUID: sb.PodUID, Namespace: sb.Namespace,
		PodName: sb.Name, Name: cfg.Name, Attempt: cfg.Attempt, Image: cfg.Image,
		ImageID: imageID(cfg.Image), State: runtime.ContainerCreated, CreatedAt: f.now(), Labels: labels,
	}}
	f.containers[c.c.ID] = c
	f.publish(sb.PodUID, c.c.ID, "create")
	return c.c.ID, nil
}

// StartContainer implements runtime.Runtime; starting a running container is a no-op.
func (f *Fake) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("StartContainer"); err != nil {
		return err
	}
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if c.c.State == runtime.ContainerRunning {
		return nil
	}
	c.c.State, c.c.ExitCode, c.c.StartedAt, c.c.FinishedAt = runtime.ContainerRunning, 0, f.now(), time.Time{}
	f.publish(c.c.PodUID, id, "start")
	return nil
}

// StopContainer implements runtime.Runtime: it records the grace and the
// container exits as if killed by SIGTERM (143). Stopping an exited
// container changes nothing.
func (f *Fake) StopContainer(_ context.Context, id string, grace time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("StopContainer"); err != nil {
		return err
	}
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	f.stops = append(f.stops, StopCall{ID: id, Grace: grace})
	if c.c.State != runtime.ContainerExited {
		f.exitLocked(c, 143)
	}
	return nil
}

// UpdateSandboxResources implements runtime.Runtime: the sandbox's config
// takes the new resources, as SandboxConfig then shows.
func (f *Fake) UpdateSandboxResources(_ context.Context, id string, r runtime.Resources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("UpdateSandboxResources"); err != nil {
		return err
	}
	cfg, ok := f.sbConfigs[id]
	if !ok {
		return fmt.Errorf("sandbox %s: %w", id, runtime.ErrNotFound)
	}
	cfg.Resources = r
	f.sbConfigs[id] = cfg
	return nil
}

// UpdateContainerResources implements runtime.Runtime: the container's
// config takes the new resources, as ContainerConfig then shows.
func (f *Fake) UpdateContainerResources(_ context.Context, id string, r runtime.Resources) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("UpdateContainerResources"); err != nil {
		return err
	}
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if c.c.State != runtime.ContainerRunning {
		return fmt.Errorf("container %s is not running", id)
	}
	c.cfg.Resources = r
	return nil
}

// RemoveContainer implements runtime.Runtime: a force remove; a missing
// container is not an error.
func (f *Fake) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("RemoveContainer"); err != nil {
		return err
	}
	if c, ok := f.containers[id]; ok {
		delete(f.containers, id)
		f.publish(c.c.PodUID, id, "remove")
	}
	return nil
}

// ListContainers implements runtime.Runtime.
func (f *Fake) ListContainers(context.Context) ([]runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("ListContainers"); err != nil {
		return nil, err
	}
	out := make([]runtime.Container, 0, len(f.containers))
	for _, c := range f.containers {
		cc := c.c
		cc.Labels = copyLabels(c.c.Labels)
		out = append(out, cc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// ListPod implements runtime.PodLister: one pod's sandboxes and containers.
func (f *Fake) ListPod(ctx context.Context, uid string) ([]runtime.Sandbox, []runtime.Container, error) {
	f.mu.Lock()
	err := f.enter("ListPod")
	f.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	sbs, err := f.ListSandboxes(ctx)
	if err != nil {
		return nil, nil, err
	}
	ctrs, err := f.ListContainers(ctx)
	if err != nil {
		return nil, nil, err
	}
	var outS []runtime.Sandbox
	for _, sb := range sbs {
		if sb.PodUID == uid {
			outS = append(outS, sb)
		}
	}
	var outC []runtime.Container
	for _, c := range ctrs {
		if c.PodUID == uid {
			outC = append(outC, c)
		}
	}
	return outS, outC, nil
}

// InspectContainer implements runtime.Runtime.
func (f *Fake) InspectContainer(_ context.Context, id string) (runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("InspectContainer"); err != nil {
		return runtime.Container{}, err
	}
	c, ok := f.containers[id]
	if !ok {
		return runtime.Container{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	cc := c.c
	cc.Labels = copyLabels(c.c.Labels)
	return cc, nil
}

// Events implements runtime.Runtime: a hint per change until ctx ends.
func (f *Fake) Events(ctx context.Context) (<-chan runtime.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("Events"); err != nil {
		return nil, err
	}
	ch := make(chan runtime.Event, 64)
	f.subs = append(f.subs, ch)
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, s := range f.subs {
			if s == ch {
				f.subs = append(f.subs[:i], f.subs[i+1:]...)
				close(ch)
				break
			}
		}
	}()
	return ch, nil
}

// BreakEvents ends every open event stream, as a restarting backend does.
func (f *Fake) BreakEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.subs {
		close(ch)
	}
	f.subs = nil
}

// Logs implements runtime.Runtime: it writes what SetLogs stored.
func (f *Fake) Logs(_ context.Context, id string, _ runtime.LogOptions, stdout, _ io.Writer) error {
	f.mu.Lock()
	err := f.enter("Logs")
	_, ok := f.containers[id]
	text := f.logs[id]
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// ExecFunc plays a command run in a container: what it writes and its exit code.
type ExecFunc func(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error)

// HandleExec makes Exec in a known container call fn (nil: Exec is
// unsupported again, the default).
func (f *Fake) HandleExec(fn ExecFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exec = fn
}

// Exec implements runtime.Runtime with the HandleExec function, called
// without the fake's lock held.
func (f *Fake) Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error) {
	f.mu.Lock()
	if err := f.enter("Exec"); err != nil {
		f.mu.Unlock()
		return -1, err
	}
	fn := f.exec
	_, known := f.containers[id]
	f.mu.Unlock()
	switch {
	case fn == nil:
		return -1, ErrUnsupported
	case !known:
		return -1, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if sio.Started != nil {
		sio.Started() // the fake's command starts when fn is called
	}
	return fn(ctx, id, cmd, sio)
}

// Attach implements runtime.Runtime; the fake does not model it.
func (f *Fake) Attach(context.Context, string, runtime.StreamIO) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.enter("Attach")
	return ErrUnsupported
}

// Stats implements runtime.Runtime: zero figures for each known container.
func (f *Fake) Stats(_ context.Context, ids []string) ([]runtime.ContainerStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("Stats"); err != nil {
		return nil, err
	}
	var out []runtime.ContainerStats
	for _, id := range ids {
		if _, ok := f.containers[id]; ok {
			out = append(out, runtime.ContainerStats{ID: id, Time: time.Now()})
		}
	}
	return out, nil
}

// PortForward implements runtime.Runtime; the fake does not model it.
func (f *Fake) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_ = f.enter("PortForward")
	return ErrUnsupported
}
