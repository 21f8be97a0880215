package podman

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// containerName is unique per pod UID, container and attempt, so the
// previous attempt can be kept for `kubectl logs --previous`.
func containerName(podLabels map[string]string, name string, attempt int) string {
	return fmt.Sprintf("%s_%s_%d", podName(podLabels[runtime.LabelPodNamespace],
		podLabels[runtime.LabelPodName], podLabels[runtime.LabelPodUID]), name, attempt)
}

// containerSpec turns the contract's config into libpod's create spec.
func (b *Backend) containerSpec(podID string, podLabels map[string]string, cfg runtime.ContainerConfig) libpod.ContainerSpec {
	spec := libpod.ContainerSpec{
		Name:          containerName(podLabels, cfg.Name, cfg.Attempt),
		Pod:           podID,
		Image:         cfg.Image,
		Env:           envMap(cfg.Env),
		WorkDir:       cfg.WorkingDir,
		Stdin:         cfg.Stdin,
		Terminal:      cfg.TTY,
		Labels:        cfg.Labels,
		Mounts:        bindMounts(cfg.Mounts),
		RLimits:       b.rlimits,
		RestartPolicy: "no", // runlet restarts, with kubelet's backoff
		OCIRuntime:    b.ociRuntime,
		// conmon outside the pod's memory cgroup, as the kubelet keeps
		// its runtime's shims: inside, a pod at its limit charges conmon,
		// and where conmon cannot make itself unkillable (its
		// oom_score_adj -1000 needs CAP_SYS_RESOURCE) the OOM killer takes
		// it right after the container, whose exit is then never recorded.
		CgroupsMode: "no-conmon",
	}
	// Kubernetes semantics: Command replaces ENTRYPOINT (and drops CMD), Args
	// replace CMD. With only Args, the entrypoint stays unset and podman keeps
	// the image's ENTRYPOINT and puts Args after it.
	if len(cfg.Command) > 0 {
		spec.Entrypoint = cfg.Command
	}
	if len(cfg.Args) > 0 {
		spec.Command = cfg.Args
	}
	if cfg.StopTimeout > 0 {
		s := uint((cfg.StopTimeout + time.Second - 1) / time.Second)
		spec.StopTimeout = &s
	}
	if netns := podLabels[labelNetNS]; netns != "" && podLabels[labelUserNS] == "" {
		// podman pods cannot join a namespace by path: each container does
		// (but in a pod's own user namespace, the pod's infra made it).
		spec.NetNS = &libpod.Namespace{NSMode: "path", Value: netns}
	}
	spec.ResourceLimits = cgroups.Resources(cfg.Resources, b.cg, true)
	spec.OOMScoreAdj = b.oomScoreAdj(cfg.Resources.OOMScoreAdj)
	spec.SecuritySpec = securitySpec(cfg.Security)
	return spec
}

// envMap converts KEY=value pairs; a later duplicate wins, as in Kubernetes.
func envMap(env []string) map[string]string {
	if len(env) == 0 {
		return nil
	}
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// bindMounts turns the contract's mounts into libpod bind mounts. The
// propagation is the CRI's: private by default, rslave for HostToContainer
// (mounts the host makes later below the source show up inside), rshared
// for Bidirectional (and mounts made inside show up on the host).
func bindMounts(ms []runtime.Mount) []libpod.Mount {
	var out []libpod.Mount
	for _, m := range ms {
		if m.Image != "" {
			continue
		}
		opts := []string{"rbind", "rw", "rprivate"}
		if m.ReadOnly {
			opts[1] = "ro"
		}
		switch m.Propagation {
		case "HostToContainer":
			opts[2] = "rslave"
		case "Bidirectional":
			opts[2] = "rshared"
		}
		if m.Relabel {
			// podman's private relabel: its containers of one pod share
			// the infra's MCS level.
			opts = append(opts, "Z")
		}
		out = append(out, libpod.Mount{Destination: m.ContainerPath, Type: "bind", Source: m.HostPath, Options: opts})
	}
	return out
}

// imageVolumes are the mounts of images (image volumes), read-only.
// podman 4 has no subPath for them and would mount the whole image.
func (b *Backend) imageVolumes(ms []runtime.Mount) ([]libpod.ImageVolume, error) {
	var out []libpod.ImageVolume
	for _, m := range ms {
		if m.Image == "" {
			continue
		}
		if m.SubPath != "" && strings.HasPrefix(b.host.RuntimeVersion, "4.") {
			return nil, fmt.Errorf("podman %s cannot mount a subPath of image volume %s (podman 5 can)", b.host.RuntimeVersion, m.Image)
		}
		out = append(out, libpod.ImageVolume{Source: m.Image, Destination: m.ContainerPath, SubPath: m.SubPath})
	}
	return out, nil
}

// CreateContainer creates a container in the sandbox's namespaces.
func (b *Backend) CreateContainer(ctx context.Context, sandboxID string, cfg runtime.ContainerConfig) (string, error) {
	meta, err := b.sandboxMeta(ctx, sandboxID, "")
	if err != nil {
		return "", err
	}
	mounts, clones, err := b.idmappedMounts(ctx, meta, cfg.Mounts)
	if err != nil {
		return "", err
	}
	cfg.Mounts = mounts
	id, err := b.createContainer(ctx, sandboxID, meta, cfg)
	if err != nil {
		clones.release(b.opts.Logf)
		return "", err
	}
	b.keepIDMapped(id, clones)
	return id, nil
}

func (b *Backend) createContainer(ctx context.Context, sandboxID string, meta sandboxMeta, cfg runtime.ContainerConfig) (string, error) {
	spec := b.containerSpec(sandboxID, meta.labels, cfg)
	var err error
	if spec.ImageVolumes, err = b.imageVolumes(cfg.Mounts); err != nil {
		return "", err
	}
	imageEnv, err := b.imageEnv(ctx, cfg.Image)
	if err != nil {
		return "", err
	}
	spec.Env, spec.UnsetEnvAll = containerEnv(imageEnv, cfg), true
	id, err := b.client.CreateContainer(ctx, spec)
	if holder := nameHolder(err); holder != "" {
		// A create cut short (the service died mid-call) can leave the name
		// held by a container that exists only in podman's storage, where no
		// list shows it: every later create would fail. The name carries
		// the pod's UID, so the holder is this pod's leftover; podman's
		// removal clears storage-only containers too.
		if rmErr := b.client.RemoveContainer(ctx, holder); rmErr != nil && !errors.Is(rmErr, runtime.ErrNotFound) {
			// Not removable: leave it and take another name (names
			// are for humans; runlet finds containers by label).
			spec.Name += "-" + holder[:8]
		}
		id, err = b.client.CreateContainer(ctx, spec)
	}
	if err == nil {
		b.learnCgroup(id, sandboxID, meta)
	}
	return id, wrapf(err, "creating container %s", spec.Name)
}

// learnCgroup tells the OOM recorder where a new container's cgroup will
// be, from its pod's infra container, or, while that has not run, marks the
// container to learn it once its start has started the infra.
func (b *Backend) learnCgroup(id, sandboxID string, meta sandboxMeta) {
	if meta.infraCgroup != "" {
		b.ooms.LearnSibling(id, meta.infraID, meta.infraCgroup)
		return
	}
	b.mu.Lock()
	if b.infraPending == nil {
		b.infraPending = map[string]infraOf{}
	}
	b.infraPending[id] = infraOf{pod: sandboxID, infra: meta.infraID}
	b.mu.Unlock()
}

// StartContainer starts a created container.
func (b *Backend) StartContainer(ctx context.Context, id string) error {
	defer b.releaseIDMapped(id)
	b.mu.Lock()
	of, pending := b.infraPending[id]
	b.mu.Unlock()
	if err := b.client.StartContainer(ctx, id); err != nil {
		err = wrapf(err, "starting container %s", shortID(id))
		if !pending {
			return err
		}
		if err := b.infraStartError(ctx, of, err); err != nil {
			return err
		}
	}
	if !pending {
		return nil
	}
	b.mu.Lock()
	delete(b.infraPending, id)
	b.mu.Unlock()
	// The infra runs now; an inspect that fails leaves the cgroup to the
	// next relist's inspect of the container.
	if meta, err := b.inspectSandbox(ctx, of.pod, of.infra); err == nil && meta.infraCgroup != "" {
		b.ooms.LearnSibling(id, meta.infraID, meta.infraCgroup)
	}
	return nil
}

// infraStartError tells a failed first start apart: when the pod's infra
// did not start either, the sandbox failed, and podman's answer to the
// container start ("starting some containers: internal libpod error") does
// not say why; a pod start does. A pod start that works started the
// container with it.
func (b *Backend) infraStartError(ctx context.Context, of infraOf, startErr error) error {
	ic, err := b.client.InspectContainer(ctx, of.infra)
	if err != nil || ic.State.Running {
		return startErr
	}
	if err := b.client.StartPod(ctx, of.pod); err != nil {
		return fmt.Errorf("%w: %w", runtime.ErrSandboxStart, infraHint(err))
	}
	return nil
}

// UpdateContainerResources implements runtime.Runtime: podman update of the
// container's CPU and memory cgroup settings, in place.
func (b *Backend) UpdateContainerResources(ctx context.Context, id string, r runtime.Resources) error {
	return wrapf(b.client.UpdateContainer(ctx, id, cgroups.UpdateResources(r, b.cg)), "updating the resources of container %s", shortID(id))
}

// RemoveContainer force-removes a container; a missing one is not an error.
func (b *Backend) RemoveContainer(ctx context.Context, id string) error {
	b.releaseIDMapped(id)
	err := retryBusy(ctx, func() error { return b.client.RemoveContainer(ctx, id) })
	if errors.Is(err, runtime.ErrNotFound) {
		err = nil
	}
	if err == nil {
		b.mu.Lock()
		delete(b.details, id)
		b.mu.Unlock()
	}
	return wrapf(err, "removing container %s", shortID(id))
}

// InspectContainer returns one container's state with full-precision times.
// Another owner's container is not found, as lists do not show it.
func (b *Backend) InspectContainer(ctx context.Context, id string) (runtime.Container, error) {
	ic, err := b.client.InspectContainer(ctx, id)
	if err == nil && b.opts.Owner != "" && ic.Config.Labels[runtime.LabelOwner] != b.opts.Owner {
		err = fmt.Errorf("container %s belongs to another runlet: %w", shortID(id), runtime.ErrNotFound)
	}
	if err != nil {
		return runtime.Container{}, wrapf(err, "inspecting container %s", shortID(id))
	}
	c := fromInspect(ic)
	c.OOMKilled = inspectOOM(ic) || b.ooms.WasKilled(ic.ID)
	return c, nil
}

// inspectOOM reports an OOM kill an inspect shows. podman may have read the
// exit before runlet marked the OOM kill in the bundle (see oom.go), so the
// file counts too.
func inspectOOM(ic libpod.InspectContainer) bool {
	return ic.State.OOMKilled || mapState(ic.State.Status) == runtime.ContainerExited && conmon.OOMMarked(ic.StaticDir)
}

func fromInspect(ic libpod.InspectContainer) runtime.Container {
	l := ic.Config.Labels
	attempt, _ := strconv.Atoi(l[runtime.LabelAttempt])
	return runtime.Container{
		ID: ic.ID, SandboxID: ic.Pod,
		PodUID: l[runtime.LabelPodUID], Namespace: l[runtime.LabelPodNamespace], PodName: l[runtime.LabelPodName],
		Name: l[runtime.LabelContainerName], Attempt: attempt,
		Image: ic.ImageName, ImageID: ic.Image,
		State: mapState(ic.State.Status), ExitCode: ic.State.ExitCode,
		OOMKilled: ic.State.OOMKilled, Error: ic.State.Error,
		CreatedAt: ic.Created, StartedAt: ic.State.StartedAt, FinishedAt: ic.State.FinishedAt,
		Labels: l,
	}
}

// mapState folds podman's states into the contract's four.
func mapState(s string) runtime.ContainerState {
	switch strings.ToLower(s) {
	case "created", "configured", "initialized":
		return runtime.ContainerCreated
	case "running", "paused", "stopping":
		return runtime.ContainerRunning
	case "exited", "stopped":
		return runtime.ContainerExited
	}
	return runtime.ContainerUnknown
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

var nameInUse = regexp.MustCompile(`is already in use by ([0-9a-f]{64})`)

// nameHolder is the ID of the container a create found holding its name.
func nameHolder(err error) string {
	if err == nil {
		return ""
	}
	if m := nameInUse.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}
