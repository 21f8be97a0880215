package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

// Volumes prepares pods' volumes and the containers' mounts of them
// (internal/volume).
type Volumes interface {
	// SetUpPod sets up the pod's volumes, and updates those that follow a
	// source; errs are FailedMount messages, ready is false while a volume
	// was never set up.
	SetUpPod(ctx context.Context, pod *v1.Pod) (ready bool, errs []error)
	// ContainerMounts are the container's volumeMounts as bind mounts.
	ContainerMounts(pod *v1.Pod, c *v1.Container, env []v1.EnvVar) ([]runtime.Mount, error)
}

// noVolumes serves a manager built without volumes (tests).
type noVolumes struct{}

func (noVolumes) SetUpPod(context.Context, *v1.Pod) (bool, []error) { return true, nil }

func (noVolumes) ContainerMounts(*v1.Pod, *v1.Container, []v1.EnvVar) ([]runtime.Mount, error) {
	return nil, nil
}

// mountRetries are the waits between a sync's tries of a pod's volumes,
// doubling, as the kubelet's volume manager retries a failed mount while
// SyncPod waits for it. The Node authorizer and NodeRestriction learn of a
// new pod from the apiserver's own watch, a moment after the node does: the
// first token or Secret read of a new pod may be refused, and is allowed
// some milliseconds later. The kubelet's first retry comes after 500 ms,
// which a pod start that met the refusal pays in full; runlet's comes after
// 100 ms, and the tries still span about 3 s before a FailedMount event.
var mountRetries = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
	800 * time.Millisecond, 1600 * time.Millisecond}

// mountVolumes sets up the pod's volumes before its sandbox and containers,
// as the kubelet waits for them in SyncPod: until every volume is ready the
// containers wait (ContainerCreating). The failures of the last try are
// FailedMount events.
func (m *Manager) mountVolumes(ctx context.Context, pod *v1.Pod) error {
	for try := 0; ; try++ {
		ready, errs := m.volumes.SetUpPod(ctx, pod)
		if !ready && try < len(m.mountRetries) {
			m.log.WithField("pod", pod.Namespace+"/"+pod.Name).WithError(errors.Join(errs...)).Debug("volumes not ready; trying again")
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(m.mountRetries[try]):
				continue
			}
		}
		for _, err := range errs {
			m.event(pod, v1.EventTypeWarning, "FailedMount", "%v", err)
		}
		if !ready {
			return fmt.Errorf("unable to attach or mount volumes: %w", errors.Join(errs...))
		}
		return nil
	}
}

// mountInBackground mounts a new pod's volumes while its sandbox is being
// prepared and returns the wait for the result. Mounting asks the API for
// a service account token, which most pods mount, and a start otherwise
// waits for it and then for its turn and CNI. The sandbox itself is still
// made only once the volumes are, as the kubelet makes it.
func (m *Manager) mountInBackground(ctx context.Context, pod *v1.Pod) func() error {
	done := make(chan error, 1)
	go func() { done <- m.mountVolumes(ctx, pod) }()
	return sync.OnceValue(func() error { return <-done })
}

// mountsFirst tells whether the pod's volumes failed beside its first
// network before. Its next tries mount them first, as any other sync does,
// so that a volume that keeps failing (a configMap not created yet) costs
// no CNI ADD and DEL on every retry.
func (m *Manager) mountsFirst(uid string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mountFailed[uid]
}

func (m *Manager) setMountsFirst(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mountFailed[uid] = true
}

// relabelWhereEnforced keeps the relabels asked for (the volumes' own, the
// files the core writes) only where the host enforces SELinux: elsewhere
// the kubelet's runtimes relabel nothing.
func relabelWhereEnforced(mounts []runtime.Mount, enforced bool) {
	for i := range mounts {
		mounts[i].Relabel = mounts[i].Relabel && enforced
	}
}

// containerMounts are the container's mounts; a mount that cannot be made
// (a bad subPath) keeps the container waiting with CreateContainerConfigError.
func (m *Manager) containerMounts(pod *v1.Pod, c *v1.Container, env []v1.EnvVar) ([]runtime.Mount, error) {
	mounts, err := m.volumes.ContainerMounts(pod, c, env)
	if err != nil {
		m.setWaiting(string(pod.UID), c.Name, &status.Waiting{Reason: "CreateContainerConfigError", Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return nil, err
	}
	return mounts, nil
}
