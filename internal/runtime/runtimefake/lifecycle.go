package runtimefake

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// ImageSize implements runtime.Images: the fake has no sizes (the
// ImageSize capability is off).
func (f *Fake) ImageSize(context.Context, string) (uint64, error) { return 0, nil }

// EnsureImage implements runtime.Runtime.
func (f *Fake) EnsureImage(_ context.Context, image string, _ runtime.PullPolicy, _ []runtime.Credential) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("EnsureImage"); err != nil {
		return "", err
	}
	if f.absent(image) {
		return "", fmt.Errorf("pulling %s: %w", image, runtime.ErrImageNotFound)
	}
	return imageID(image), nil
}

// CreateSandbox implements runtime.Runtime.
func (f *Fake) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("CreateSandbox"); err != nil {
		return runtime.Sandbox{}, err
	}
	if cfg.AttachNetwork != nil && cfg.UserNS == nil {
		// It makes no namespaces: the core's network pins its own.
		ips, err := cfg.AttachNetwork(ctx, "")
		if err != nil {
			return runtime.Sandbox{}, err
		}
		cfg.IPs = ips
	}
	labels := copyLabels(cfg.Labels)
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
	f.publish(labels, cfg.PodUID, "", "pod-create")
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
	f.publish(sb.Labels, sb.PodUID, "", "pod-remove")
	return nil
}

// ReleasePod implements runtime.Runtime: it records the pod (Released).
func (f *Fake) ReleasePod(_ context.Context, uid string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("ReleasePod"); err != nil {
		return err
	}
	f.released = append(f.released, uid)
	return nil
}

// Released lists the pods ReleasePod was called for, in order.
func (f *Fake) Released() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.released)
}

// CreateContainer implements runtime.Runtime. The container's labels are
// the caller's: only the core stamps identity labels.
func (f *Fake) CreateContainer(_ context.Context, sandboxID string, cfg runtime.ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("CreateContainer"); err != nil {
		return "", err
	}
	sb, ok := f.sandboxes[sandboxID]
	if !ok || !f.owns(sb.Labels) {
		return "", fmt.Errorf("sandbox %s: %w", sandboxID, runtime.ErrNotFound)
	}
	if f.absent(cfg.Image) {
		return "", fmt.Errorf("image %s: %w", cfg.Image, runtime.ErrImageNotFound)
	}
	labels := copyLabels(cfg.Labels)
	c := &container{cfg: cfg, c: runtime.Container{
		ID: f.nextID("ctr"), SandboxID: sandboxID, PodUID: sb.PodUID, Namespace: sb.Namespace,
		PodName: sb.Name, Name: cfg.Name, Attempt: cfg.Attempt, Image: cfg.Image,
		ImageID: imageID(cfg.Image), State: runtime.ContainerCreated, CreatedAt: f.now(), Labels: labels,
	}}
	f.containers[c.c.ID] = c
	f.publish(labels, sb.PodUID, c.c.ID, "create")
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
	f.publish(c.c.Labels, c.c.PodUID, id, "start")
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
		f.publish(c.c.Labels, c.c.PodUID, id, "remove")
	}
	return nil
}
