package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Result says what a sync achieved.
type Result struct {
	// Changed is true when the sync touched the backend.
	Changed bool
	// RequeueAfter, when set, is when a back-off that blocks progress expires.
	RequeueAfter time.Duration
	// Terminal is true when no container of the pod will run again.
	Terminal bool
}

// ErrBackOff marks an error that is only a back-off waiting to expire.
var ErrBackOff = errors.New("back-off")

// SyncPod drives the backend toward the pod's spec, as the kubelet's
// kuberuntime SyncPod does: sandbox first, then each container.
func (m *Manager) SyncPod(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus) (Result, error) {
	uid := string(pod.UID)
	var res Result
	if done := podIsDone(pod, ps); done {
		res.Terminal = true
		return res, nil
	}
	sb := ps.Sandbox()
	if sb == nil || sb.State != runtime.SandboxReady {
		release, err := m.startSlot(ctx)
		if err != nil {
			return res, err
		}
		defer release()
		if sb != nil {
			m.log.WithField("pod", pod.Namespace+"/"+pod.Name).Info("sandbox is not ready; recreating the pod's sandbox")
			if err := m.removeAll(ctx, ps); err != nil {
				return res, err
			}
		}
		cfg := sandboxConfig(pod)
		cfg.Labels[runtime.LabelOwner] = m.owner
		created, err := m.rt.CreateSandbox(ctx, cfg)
		if err != nil {
			m.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
			return res, fmt.Errorf("create sandbox: %w", err)
		}
		res.Changed = true
		sb = &created
		ps = &runtime.PodStatus{UID: uid, Sandboxes: []runtime.Sandbox{created}}
	}
	eph, ephErr := m.syncEphemeralContainers(ctx, pod, sb, ps)
	res.merge(eph)
	if done, r, err := m.syncInitContainers(ctx, pod, sb, ps); !done || err != nil {
		r.merge(res)
		m.pruneOld(ctx, pod, ps)
		return r, utilerrors.NewAggregate([]error{ephErr, err})
	}
	errs := []error{ephErr}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		r, err := m.syncContainer(ctx, pod, c, sb, ps)
		res.Changed = res.Changed || r.Changed
		if r.RequeueAfter > 0 && (res.RequeueAfter == 0 || r.RequeueAfter < res.RequeueAfter) {
			res.RequeueAfter = r.RequeueAfter
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	m.pruneOld(ctx, pod, ps)
	return res, utilerrors.NewAggregate(errs)
}

// podIsDone reports a pod whose restart policy lets none of its exited
// containers run again.
func podIsDone(pod *v1.Pod, ps *runtime.PodStatus) bool {
	if initFailed(pod, ps) {
		return true
	}
	if pod.Spec.RestartPolicy == v1.RestartPolicyAlways || len(pod.Spec.Containers) == 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		cur, _ := ps.Latest(pod.Spec.Containers[i].Name)
		if cur == nil || cur.State != runtime.ContainerExited || shouldRestart(pod, cur) {
			return false
		}
	}
	return true
}

func shouldRestart(pod *v1.Pod, c *runtime.Container) bool {
	switch pod.Spec.RestartPolicy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return c.ExitCode != 0
	}
	return true
}

func (m *Manager) syncContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, ps *runtime.PodStatus) (Result, error) {
	uid := string(pod.UID)
	cur, _ := ps.Latest(c.Name)
	switch {
	case cur == nil:
		return m.startContainer(ctx, pod, c, sb, 0)
	case cur.State == runtime.ContainerCreated:
		return m.startCreated(ctx, pod, c, cur)
	case cur.State == runtime.ContainerRunning:
		if cur.Labels[runtime.LabelSpecHash] != HashContainer(c) {
			m.event(pod, v1.EventTypeNormal, "Killing", "Container %s definition changed, will be restarted", c.Name)
			if err := m.rt.StopContainer(ctx, cur.ID, gracePeriod(pod, nil)); err != nil {
				return Result{}, err
			}
			return Result{Changed: true}, nil
		}
		m.setWaiting(uid, c.Name, nil)
		return Result{}, nil
	case cur.State == runtime.ContainerExited && !shouldRestart(pod, cur):
		m.setWaiting(uid, c.Name, nil)
		return Result{}, nil
	}
	key := backoffKey(pod, c)
	if m.crashBackoff.IsInBackOffSince(key, cur.FinishedAt) {
		left := m.crashBackoff.Get(key) - time.Since(cur.FinishedAt)
		msg := fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)",
			m.crashBackoff.Get(key), c.Name, pod.Name, pod.Namespace, pod.UID)
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "CrashLoopBackOff", Message: msg})
		m.event(pod, v1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)", c.Name, pod.Name, pod.Namespace, pod.UID)
		return Result{RequeueAfter: max(left, 100*time.Millisecond)}, fmt.Errorf("%w: %s", ErrBackOff, msg)
	}
	m.crashBackoff.Next(key, time.Now())
	return m.startContainer(ctx, pod, c, sb, cur.Attempt+1)
}

func backoffKey(pod *v1.Pod, c *v1.Container) string {
	return string(pod.UID) + "/" + c.Name + "/" + HashContainer(c)
}

func (m *Manager) startCreated(ctx context.Context, pod *v1.Pod, c *v1.Container, cur *runtime.Container) (Result, error) {
	if err := m.rt.StartContainer(ctx, cur.ID); err != nil {
		return m.failStart(pod, c, err)
	}
	m.setWaiting(string(pod.UID), c.Name, nil)
	m.event(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
	return Result{Changed: true}, nil
}

func (m *Manager) startContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, attempt int) (Result, error) {
	uid := string(pod.UID)
	if res, err := m.ensureImage(ctx, pod, c); err != nil {
		return res, err
	}
	env, err := m.containerEnv(pod, c, sb)
	if err != nil {
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "CreateContainerConfigError", Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return Result{}, err
	}
	cfg := containerConfig(pod, c, env, attempt, isInit(pod, c.Name))
	cfg.Labels[runtime.LabelOwner] = m.owner
	id, err := m.rt.CreateContainer(ctx, sb.ID, cfg)
	if err != nil {
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "CreateContainerError", Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return Result{}, fmt.Errorf("create container %s: %w", c.Name, err)
	}
	m.event(pod, v1.EventTypeNormal, "Created", "Created container: %s", c.Name)
	if err := m.rt.StartContainer(ctx, id); err != nil {
		return m.failStart(pod, c, err)
	}
	m.setWaiting(uid, c.Name, nil)
	m.event(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
	return Result{Changed: true}, nil
}

func (m *Manager) failStart(pod *v1.Pod, c *v1.Container, err error) (Result, error) {
	m.setWaiting(string(pod.UID), c.Name, &status.Waiting{Reason: "RunContainerError", Message: err.Error()})
	m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
	return Result{Changed: true}, fmt.Errorf("start container %s: %w", c.Name, err)
}

// ensureImage applies the pull policy with the kubelet's image back-off:
// ErrImagePull on a failure, ImagePullBackOff while the back-off runs.
func (m *Manager) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container) (Result, error) {
	uid := string(pod.UID)
	key := uid + "/" + c.Name + "/" + c.Image
	if m.imageBackoff.IsInBackOffSinceUpdate(key, time.Now()) {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "ImagePullBackOff", Message: msg})
		m.event(pod, v1.EventTypeNormal, "BackOff", "%s", msg)
		return Result{RequeueAfter: time.Second}, fmt.Errorf("%w: %s", ErrBackOff, msg)
	}
	policy := pullPolicy(c)
	_, err := m.rt.EnsureImage(ctx, c.Image, policy, nil)
	if err != nil {
		m.imageBackoff.Next(key, time.Now())
		reason := "ErrImagePull"
		if policy == runtime.PullNever && errors.Is(err, runtime.ErrImageNotFound) {
			reason = "ErrImageNeverPull"
		}
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: reason, Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", c.Image, err)
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %s", reason)
		return Result{RequeueAfter: time.Second}, fmt.Errorf("image %s: %w", c.Image, err)
	}
	m.imageBackoff.Reset(key)
	if policy != runtime.PullAlways {
		m.event(pod, v1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
	}
	return Result{}, nil
}

func pullPolicy(c *v1.Container) runtime.PullPolicy {
	switch c.ImagePullPolicy {
	case v1.PullAlways:
		return runtime.PullAlways
	case v1.PullNever:
		return runtime.PullNever
	case v1.PullIfNotPresent:
		return runtime.PullIfNotPresent
	}
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(lastSegment(c.Image), ":") {
		return runtime.PullAlways
	}
	return runtime.PullIfNotPresent
}

func lastSegment(image string) string {
	if i := strings.LastIndex(image, "/"); i >= 0 {
		return image[i+1:]
	}
	return image
}

// pruneOld removes exited containers older than the previous attempt of each
// container: the previous one is kept for logs --previous.
func (m *Manager) pruneOld(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus) {
	count := map[string]int{}
	for _, c := range ps.Containers {
		count[c.Name]++
		if count[c.Name] <= 2 || c.State == runtime.ContainerRunning {
			continue
		}
		if err := m.rt.RemoveContainer(ctx, c.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			m.log.WithError(err).WithField("container", c.ID).Warn("removing an old container failed")
		}
	}
}
