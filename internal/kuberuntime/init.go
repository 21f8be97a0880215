package kuberuntime

import (
	"context"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// syncInitContainers is the kubelet's computeInitContainerActions. Init
// containers run in order: a regular one must exit 0 before the next starts;
// a sidecar (restartPolicy Always) lets the next start once it has started
// (running, and its startup probe succeeded if it has one), and then keeps
// running beside the regular containers: it is restarted on exit, with the
// restart back-off, for as long as the pod runs. done reports that the pod
// is initialized, so the regular containers may run; errs are the sidecars'
// failures once it is (they must not hold the regular containers back).
func (m *Manager) syncInitContainers(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) (done bool, res Result, errs []error) {
	initialized := regularContainerCreated(pod, sb, ps)
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cur, _ := ps.Latest(c.Name)
		if !podutil.IsRestartableInitContainer(c) {
			if initialized || (cur != nil && cur.State == runtime.ContainerExited && cur.ExitCode == 0) {
				m.setWaiting(string(pod.UID), c.Name, nil)
				continue
			}
			if cur != nil && cur.State == runtime.ContainerRunning {
				// A running init container takes a resize in place, as on
				// the v1.37 kubelet (InPlacePodVerticalScalingInitContainers);
				// validation keeps its resizePolicy from asking a restart.
				r, _, err := m.resizeContainer(ctx, pod, c, cur, sb)
				return false, merge(res, r), errList(err)
			}
			// Not started yet, or failed and to be retried (a failed init
			// container that may not run again ends the pod before this).
			r, err := m.syncContainer(ctx, pod, c, sb, ps)
			return false, merge(res, r), errList(err)
		}
		r, err := m.syncContainer(ctx, pod, c, sb, ps)
		res = merge(res, r)
		if err != nil {
			errs = append(errs, err)
		}
		if initialized {
			continue
		}
		if r.Changed || err != nil || !m.sidecarStarted(c, cur) {
			// Started just now (the next sync sees it running), failing, or
			// waiting for its startup probe: the next one waits.
			return false, res, errs
		}
	}
	return true, res, errs
}

// sidecarStarted reports a sidecar that lets the next init container start:
// running, and its startup probe (if any) succeeded. Without a prober, a
// sidecar with a startup probe never counts as started.
func (m *Manager) sidecarStarted(c *v1.Container, cur *runtime.Container) bool {
	if cur == nil || cur.State != runtime.ContainerRunning {
		return false
	}
	if c.StartupProbe == nil {
		return true
	}
	if m.startup == nil {
		return false
	}
	r, ok := m.startup.Get(cur.ID)
	return ok && r == results.Success
}

// regularContainerCreated reports a pod whose initialization is behind it: a
// regular container exists in its current sandbox (the kubelet's
// HasAnyActiveRegularContainerStarted). Regular init containers are then
// never run again, even if their containers are gone.
func regularContainerCreated(pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) bool {
	for i := range pod.Spec.Containers {
		cur, _ := ps.Latest(pod.Spec.Containers[i].Name)
		if cur != nil && (sb == nil || cur.SandboxID == "" || cur.SandboxID == sb.ID) {
			return true
		}
	}
	return false
}

// initFailed reports a regular init container that failed and may not run
// again (restartPolicy Never): the pod fails without its regular containers.
func initFailed(pod *v1.Pod, ps *runtime.PodStatus) bool {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podutil.IsRestartableInitContainer(c) {
			continue
		}
		cur, _ := ps.Latest(c.Name)
		if cur != nil && cur.State == runtime.ContainerExited && !shouldRestart(pod, c, cur) && cur.ExitCode != 0 {
			return true
		}
	}
	return false
}

// initContainer returns the init container named name, if it is one.
func initContainer(pod *v1.Pod, name string) *v1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

func isInit(pod *v1.Pod, name string) bool { return initContainer(pod, name) != nil }

// merge adds r's outcome to res: any change, and the earliest requeue.
func merge(res, r Result) Result {
	res.Changed = res.Changed || r.Changed
	if r.RequeueAfter > 0 && (res.RequeueAfter == 0 || r.RequeueAfter < res.RequeueAfter) {
		res.RequeueAfter = r.RequeueAfter
	}
	return res
}

func errList(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}
