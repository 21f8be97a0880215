package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
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
func (m *Manager) SyncPod(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus) (res Result, err error) {
	uid := string(pod.UID)
	if status.AllContainersRestarting(&pod.Status) {
		return m.restartAll(ctx, pod, ps)
	}
	ps = m.withReplaced(uid, ps)
	ps, lost := withLostContainers(pod, ps)
	if done := podIsDone(pod, ps); done {
		res.Terminal = true
		return res, nil
	}
	sb := ps.Sandbox()
	// A pod's first sandbox mounts its volumes while it waits for a start
	// turn and its network is set up (mountInBackground); any other sync
	// mounts them first.
	mounted := func() error { return nil }
	if sb == nil && len(lost) == 0 && !m.mountsFirst(uid) {
		mounted = m.mountInBackground(ctx, pod)
		defer mounted() // nothing of the sync outlives it
	} else if err := m.mountVolumes(ctx, pod); err != nil {
		return res, err
	}
	if sb == nil || sb.State != runtime.SandboxReady || m.networkGone(sb) {
		if ownUserNamespace(pod) {
			// Counted as the kubelet counts them: a failure at any step of
			// the sync that makes the sandbox is the pod's.
			telemetry.StartedUserNamespacedPods.Inc()
			defer func() {
				if err != nil {
					telemetry.StartedUserNamespacedPodsErrors.Inc()
				}
			}()
		}
		turn, err := m.startSlot(ctx)
		if err != nil {
			return res, err
		}
		defer turn.release()
		ctx = withTurn(ctx, turn)
		var removed []runtime.Container
		if sb != nil {
			removed = replaced(pod, ps)
			m.rememberReplaced(uid, removed)
		}
		created, err := m.newSandbox(ctx, pod, sb, ps, len(lost) > 0, mounted)
		if err != nil {
			return res, err
		}
		res.Changed = true
		sb = &created
		// The new sandbox starts empty; what the lost containers, and those
		// removed with the sandbox it replaced, did still counts.
		ps = &runtime.PodStatus{UID: uid, Sandboxes: []runtime.Sandbox{created}, Containers: append(lost, removed...)}
	}
	if err := m.raisePodCgroup(ctx, pod, sb, ps); err != nil {
		return res, err
	}
	eph, ephErr := m.syncEphemeralContainers(ctx, pod, sb, ps)
	res = merge(res, eph)
	done, r, errs := m.syncInitContainers(ctx, pod, sb, ps)
	res = merge(res, r)
	if ephErr != nil {
		errs = append(errs, ephErr)
	}
	if !done {
		m.pruneOld(ctx, pod, ps)
		return res, utilerrors.NewAggregate(errs)
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		r, err := m.syncContainer(ctx, pod, c, sb, ps)
		res = merge(res, r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := m.settlePodCgroup(ctx, pod, sb, ps); err != nil {
		errs = append(errs, err)
	}
	m.pruneOld(ctx, pod, ps)
	return res, utilerrors.NewAggregate(errs)
}

// newSandbox makes the pod's sandbox, on the pod network once its volumes
// are mounted, after removing sb, the one that is not ready, and all its
// containers. lost says containers of the pod were lost with their sandbox.
// It returns once the network's set-up has ended, made or not.
func (m *Manager) newSandbox(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus, lost bool, mounted func() error) (runtime.Sandbox, error) {
	if sb != nil || lost {
		m.event(pod, v1.EventTypeNormal, "SandboxChanged", "Pod sandbox changed, it will be killed and re-created.")
	}
	if sb != nil {
		m.log.WithField("pod", pod.Namespace+"/"+pod.Name).Info("sandbox is not ready; recreating the pod's sandbox")
		if err := m.removeAll(ctx, ps); err != nil {
			return runtime.Sandbox{}, err
		}
	}
	cfg := sandboxConfig(pod)
	cfg.Labels[runtime.LabelOwner] = m.owner
	err := m.sandboxNetwork(pod, &cfg)
	if err == nil {
		err = m.prepareSandbox(pod, &cfg)
	}
	if err != nil {
		return runtime.Sandbox{}, m.sandboxFailed(pod, err)
	}
	networked, err := m.attachNetwork(ctx, pod, &cfg)
	if err != nil {
		return runtime.Sandbox{}, err
	}
	// The set-up, which may run beside the sandbox's making, never
	// outlives the sync, as the mounts do not (SyncPod).
	defer func() { _ = networked() }()
	if err := mounted(); err != nil {
		_ = networked()
		m.releaseNetwork(ctx, pod, cfg.NetNS)
		m.setMountsFirst(string(pod.UID))
		return runtime.Sandbox{}, err
	}
	created, err := m.rt.CreateSandbox(ctx, cfg)
	if err != nil {
		// A network that failed beside the sandbox is the failure,
		// reported as when it comes first.
		if nerr := networked(); nerr != nil {
			err = nerr
		} else {
			err = m.sandboxFailed(pod, err)
		}
		m.releaseNetwork(ctx, pod, cfg.NetNS)
		return runtime.Sandbox{}, err
	}
	if m.network != nil && cfg.NetNS != "" {
		m.network.Commit(cfg.NetNS)
	}
	return created, nil
}

// podIsDone reports a pod whose restart policy lets none of its exited
// containers run again.
func podIsDone(pod *v1.Pod, ps *runtime.PodStatus) bool {
	if initFailed(pod, ps) {
		return true
	}
	if len(pod.Spec.Containers) == 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, _ := ps.Latest(c.Name)
		if cur == nil || cur.State != runtime.ContainerExited || shouldRestart(pod, c, cur) {
			return false
		}
	}
	return true
}

// shouldRestart reports whether an exited container runs again: by its own
// restart policy and rules, else the pod's (sidecars always do). A regular
// init container that exited 0 is done.
func shouldRestart(pod *v1.Pod, c *v1.Container, cur *runtime.Container) bool {
	return podutil.ExitedContainerRestarts(pod, c, int32(cur.ExitCode))
}

func (m *Manager) syncContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, ps *runtime.PodStatus) (Result, error) {
	uid := string(pod.UID)
	cur, _ := ps.Latest(c.Name)
	switch {
	case cur == nil:
		return m.startContainer(ctx, pod, c, sb, 0)
	case cur.State == runtime.ContainerCreated:
		return m.startCreated(ctx, pod, c, cur, ps.Sandbox())
	case cur.State == runtime.ContainerRunning:
		if cur.Labels[runtime.LabelSpecHash] != HashContainer(c) {
			msg := fmt.Sprintf("Container %s definition changed, will be restarted", c.Name)
			if err := m.killContainer(ctx, pod, cur, gracePeriod(pod, nil), m.podIP(pod, sb), msg, nil); err != nil {
				return Result{}, err
			}
			return Result{Changed: true}, nil
		}
		if killed, err := m.killUnhealthy(ctx, pod, c, cur, sb); killed {
			return Result{Changed: true}, err
		}
		m.setWaiting(uid, c.Name, nil)
		if res, resized, err := m.resizeContainer(ctx, pod, c, cur, sb); resized {
			return res, err
		}
		return Result{}, nil
	case cur.State == runtime.ContainerExited && !shouldRestart(pod, c, cur):
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

func (m *Manager) startCreated(ctx context.Context, pod *v1.Pod, c *v1.Container, cur *runtime.Container, sb *runtime.Sandbox) (Result, error) {
	if err := m.rt.StartContainer(ctx, cur.ID); err != nil {
		// A created container that cannot start (its runtime state was lost,
		// say, when the backend died mid-start) is replaced, as the kubelet
		// replaces a container it finds in the created state.
		if rmErr := m.rt.RemoveContainer(ctx, cur.ID); rmErr != nil && !errors.Is(rmErr, runtime.ErrNotFound) {
			m.log.WithError(rmErr).WithField("container", cur.ID).Warn("removing a container that failed to start failed")
		}
		return m.failStart(ctx, pod, c, sb, err)
	}
	m.setWaiting(string(pod.UID), c.Name, nil)
	m.event(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
	return Result{Changed: true}, m.runPostStart(ctx, pod, c, cur.ID, sb)
}

func (m *Manager) startContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, attempt int) (Result, error) {
	uid := string(pod.UID)
	if res, err := m.ensureImage(ctx, pod, c); err != nil {
		return res, err
	}
	if res, err := m.ensureImageVolumes(ctx, pod, c); err != nil {
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
	if cfg.Mounts, err = m.containerMounts(pod, c, env); err != nil {
		return Result{}, err
	}
	err = m.networkMounts(pod, c, sb, &cfg)
	if err == nil {
		err = m.prepareContainer(ctx, pod, c, &cfg)
	}
	if err != nil {
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "CreateContainerConfigError", Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return Result{}, err
	}
	m.addTerminationMessageFile(pod, c, &cfg)
	relabelWhereEnforced(cfg.Mounts, m.node.SELinux)
	id, err := m.rt.CreateContainer(ctx, sb.ID, cfg)
	if err != nil {
		m.setWaiting(uid, c.Name, &status.Waiting{Reason: "CreateContainerError", Message: err.Error()})
		m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
		return Result{}, fmt.Errorf("create container %s: %w", c.Name, err)
	}
	m.event(pod, v1.EventTypeNormal, "Created", "Created container: %s", c.Name)
	m.recordActuated(pod, c)
	if err := m.rt.StartContainer(ctx, id); err != nil {
		return m.failStart(ctx, pod, c, sb, err)
	}
	m.setWaiting(uid, c.Name, nil)
	m.event(pod, v1.EventTypeNormal, "Started", "Started container %s", c.Name)
	return Result{Changed: true}, m.runPostStart(ctx, pod, c, id, sb)
}

func (m *Manager) failStart(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, err error) (Result, error) {
	if errors.Is(err, runtime.ErrSandboxStart) {
		return m.failSandboxStart(ctx, pod, c, sb, err)
	}
	m.setWaiting(string(pod.UID), c.Name, &status.Waiting{Reason: "RunContainerError", Message: err.Error()})
	m.event(pod, v1.EventTypeWarning, "Failed", "Error: %v", err)
	return Result{Changed: true}, fmt.Errorf("start container %s: %w", c.Name, err)
}

// failSandboxStart: the sandbox the container's start started first did not
// start. As when the kubelet's RunPodSandbox fails, the pod waits in
// ContainerCreating with a FailedCreatePodSandBox event, and the sandbox is
// removed for the next sync to create afresh.
func (m *Manager) failSandboxStart(ctx context.Context, pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, err error) (Result, error) {
	m.setWaiting(string(pod.UID), c.Name, nil)
	err = m.sandboxFailed(pod, err)
	cleanup := context.WithoutCancel(ctx)
	if rmErr := m.rt.RemoveSandbox(cleanup, sb.ID); rmErr != nil && !errors.Is(rmErr, runtime.ErrNotFound) {
		m.log.WithError(rmErr).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("removing a sandbox that did not start failed")
	} else {
		m.releaseNetwork(cleanup, pod, sb.NetNS)
	}
	return Result{Changed: true}, err
}

// sandboxFailed reports a sandbox that was not made or did not start, as
// the kubelet reports a failed RunPodSandbox: a FailedCreatePodSandBox
// event, and the sync's error.
func (m *Manager) sandboxFailed(pod *v1.Pod, err error) error {
	m.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
	return fmt.Errorf("create sandbox: %w", err)
}

// pruneOld removes exited containers older than the previous attempt of each
// container: the previous one is kept for logs --previous.
func (m *Manager) pruneOld(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus) {
	count := map[string]int{}
	for _, c := range ps.Containers {
		count[c.Name]++
		if count[c.Name] <= 2 || c.State == runtime.ContainerRunning || c.ID == "" {
			continue
		}
		if err := m.rt.RemoveContainer(ctx, c.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			m.log.WithError(err).WithField("container", c.ID).Warn("removing an old container failed")
			continue
		}
		removeTerminationMessageFile(&c)
	}
}
