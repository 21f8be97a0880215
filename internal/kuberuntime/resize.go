package kuberuntime

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ResourceRecord keeps what was applied to each container, and to the
// pod's cgroup under the name podLevel, so an in-place resize knows what to
// change and the status what is in force (internal/allocation).
type ResourceRecord interface {
	Actuated(uid types.UID, name string) (v1.ResourceRequirements, bool)
	SetActuated(uid types.UID, name string, r v1.ResourceRequirements) error
}

// ResizeError is a resize the sync could not apply: the pod's
// PodResizeInProgress condition says why (reason Error).
type ResizeError struct{ Err error }

func (e *ResizeError) Error() string { return e.Err.Error() }
func (e *ResizeError) Unwrap() error { return e.Err }

// resizable are the resources a running container can change in place.
var resizable = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}

// podLevel is the name ResourceRecord keeps the pod's own resources under
// (allocation.PodLevel): no container's name is empty.
const podLevel = ""

// recordActuated notes the resources a container was created with.
func (m *Manager) recordActuated(pod *v1.Pod, c *v1.Container) {
	if m.resources == nil {
		return
	}
	if err := m.resources.SetActuated(pod.UID, c.Name, effective(pod, c)); err != nil {
		m.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("recording a container's resources failed")
	}
}

// resizeContainer brings a running container to the resources the pod
// (its allocated version) gives it, as the kubelet's doPodResizeAction: in
// place where every changed resource's resizePolicy allows, else by a
// restart. done is false when nothing had to change.
func (m *Manager) resizeContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, cur *runtime.Container, sb *runtime.Sandbox) (res Result, done bool, err error) {
	if m.resources == nil {
		return Result{}, false, nil
	}
	applied, ok := m.resources.Actuated(pod.UID, c.Name)
	if !ok {
		// No allocation and no record (a pod found before either was kept):
		// it has what it asks for.
		m.recordActuated(pod, c)
		return Result{}, false, nil
	}
	want := effective(pod, c)
	changed := changedResources(applied, want)
	if len(changed) == 0 {
		return Result{}, false, nil
	}
	if restartRequired(c, changed) {
		msg := fmt.Sprintf("Container %s resize requires restart", c.Name)
		return Result{Changed: true}, true, m.killContainer(ctx, pod, cur, gracePeriod(pod, nil), m.podIP(pod, sb), msg, nil)
	}
	if err := m.checkMemoryDecrease(ctx, c.Name, want, cur, applied); err != nil {
		return Result{}, true, &ResizeError{Err: err}
	}
	if err := m.rt.UpdateContainerResources(ctx, cur.ID, containerResources(pod, c, m.node)); err != nil {
		return Result{}, true, &ResizeError{Err: fmt.Errorf("resizing container %s: %w", c.Name, err)}
	}
	if err := m.resources.SetActuated(pod.UID, c.Name, want); err != nil {
		return Result{}, true, err
	}
	return Result{Changed: true}, true, nil
}

// ResizeInProgress reports whether a running container of the pod (its
// allocated version) does not yet have the resources it was allocated, or
// the pod's cgroup its pod-level ones, as the kubelet's
// IsPodResizeInProgress; containers not running take theirs when they
// start. Running init containers count, sidecars or not.
func (m *Manager) ResizeInProgress(pod *v1.Pod, ps *runtime.PodStatus) bool {
	return m.containersResizing(pod, ps) || m.podLevelResizing(pod, ps)
}

// containersResizing: a running container lacks its allocation.
func (m *Manager) containersResizing(pod *v1.Pod, ps *runtime.PodStatus) bool {
	if m.resources == nil {
		return false
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if cur, _ := ps.Latest(c.Name); cur == nil || cur.State != runtime.ContainerRunning {
				continue
			}
			if applied, ok := m.resources.Actuated(pod.UID, c.Name); ok && len(changedResources(applied, effective(pod, c))) > 0 {
				return true
			}
		}
	}
	return false
}

// podLevelResizing: the pod's sandbox lacks its allocated pod-level
// resources.
func (m *Manager) podLevelResizing(pod *v1.Pod, ps *runtime.PodStatus) bool {
	if m.resources == nil || pod.Spec.Resources == nil || ps.Sandbox() == nil {
		return false
	}
	applied, ok := m.resources.Actuated(pod.UID, podLevel)
	return ok && len(changedResources(applied, *pod.Spec.Resources)) > 0
}

// effective are a container's resources as its cgroup holds them: its own
// limits, else the pod-level ones, as the kubelet's GetLimits.
func effective(pod *v1.Pod, c *v1.Container) v1.ResourceRequirements {
	r := *c.Resources.DeepCopy()
	if pod.Spec.Resources == nil {
		return r
	}
	for _, name := range resizable {
		q, ok := pod.Spec.Resources.Limits[name]
		if !ok || q.IsZero() || !r.Limits.Name(name, q.Format).IsZero() {
			continue
		}
		if r.Limits == nil {
			r.Limits = v1.ResourceList{}
		}
		r.Limits[name] = q.DeepCopy()
	}
	return r
}

// checkMemoryDecrease refuses a memory limit below what the container uses
// now, as the kubelet does: the kernel would reclaim or kill at once.
func (m *Manager) checkMemoryDecrease(ctx context.Context, name string, r v1.ResourceRequirements, cur *runtime.Container, applied v1.ResourceRequirements) error {
	want, ok := r.Limits[v1.ResourceMemory]
	if !ok || want.IsZero() {
		return nil
	}
	if had, ok := applied.Limits[v1.ResourceMemory]; ok && !had.IsZero() && want.Cmp(had) >= 0 {
		return nil
	}
	stats, err := m.rt.Stats(ctx, []string{cur.ID})
	if err != nil || len(stats) == 0 {
		return fmt.Errorf("cannot decrease memory limits: missing container %q memory usage", name)
	}
	if usage := stats[0].MemoryUsageBytes; usage >= uint64(want.Value()) {
		return fmt.Errorf("cannot decrease memory limits: attempting to set container %q memory limit (%d) below current usage (%d)",
			name, want.Value(), usage)
	}
	return nil
}

// changedResources are the resizable resources whose request or limit differ.
func changedResources(applied, want v1.ResourceRequirements) []v1.ResourceName {
	var out []v1.ResourceName
	for _, name := range resizable {
		if !sameQuantity(applied.Requests, want.Requests, name) || !sameQuantity(applied.Limits, want.Limits, name) {
			out = append(out, name)
		}
	}
	return out
}

func sameQuantity(a, b v1.ResourceList, name v1.ResourceName) bool {
	qa, oka := a[name]
	qb, okb := b[name]
	if oka != okb {
		return false
	}
	return !oka || qa.Cmp(qb) == 0
}

// restartRequired: a changed resource whose resizePolicy says RestartContainer.
func restartRequired(c *v1.Container, changed []v1.ResourceName) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != v1.RestartContainer {
			continue
		}
		for _, name := range changed {
			if p.ResourceName == name {
				return true
			}
		}
	}
	return false
}
