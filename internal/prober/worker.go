package prober

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/prober/results"
	v1 "k8s.io/api/core/v1"
)

// worker probes one container's probe of one type, periodically, for as
// long as the pod may run it: the kubelet's probe worker. It is a single
// long-lived goroutine; a probe run spawns none of its own beyond what an
// exec or a network call needs.
type worker struct {
	m         *Manager
	pod       *v1.Pod
	container v1.Container
	spec      *v1.Probe
	probeType ProbeType
	results   *results.Manager
	// initialValue is the result while the initial delay runs.
	initialValue results.Result

	ctx    context.Context
	cancel context.CancelFunc
	// trigger asks for a probe now (the status generator does, for a
	// container not ready yet).
	trigger chan struct{}

	containerID string // the container probed; "" until one is seen
	lastResult  results.Result
	resultRun   int  // how many times in a row lastResult came
	onHold      bool // no probing until a new container appears
}

func newWorker(m *Manager, t ProbeType, pod *v1.Pod, c v1.Container) *worker {
	w := &worker{m: m, pod: pod, container: c, probeType: t, trigger: make(chan struct{}, 1), lastResult: results.Unknown}
	w.spec = t.spec(&w.container)
	switch t {
	case Readiness:
		w.results, w.initialValue = m.Readiness, results.Failure
	case Liveness:
		w.results, w.initialValue = m.Liveness, results.Success
	case Startup:
		w.results, w.initialValue = m.Startup, results.Unknown
	}
	w.ctx, w.cancel = context.WithCancel(m.ctx)
	return w
}

// probeGrid is the granularity of probe times. Waking the process costs
// more than the probe itself: 100 HTTP probes a second at scattered times
// took 7 % of a core, the same probes at shared instants under 3 %. Every
// worker's probes fall on this grid, so the probes of many pods start
// together and the process wakes at most ten times a second for them.
const probeGrid = 100 * time.Millisecond

// run probes every period, on the grid, until the worker is stopped or its
// container is gone for good.
func (w *worker) run() {
	period := time.Duration(max(w.spec.PeriodSeconds, 1)) * time.Second
	defer w.cleanup()
	now := w.m.clock.Now()
	next := now.Truncate(probeGrid).Add(probeGrid)
	if w.m.clock.Since(w.m.start) < period {
		// After a restart of runlet every worker would start at once:
		// spread them over one period, as the kubelet does.
		next = next.Add(time.Duration(rand.IntN(int(period/probeGrid))) * probeGrid)
	}
	timer := w.m.clock.NewTimer(next.Sub(now))
	defer timer.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.trigger:
			// A probe now, off the grid; the schedule stays.
			if !w.doProbe() {
				return
			}
		case <-timer.C():
			if !w.doProbe() {
				return
			}
			now := w.m.clock.Now()
			for !next.After(now) {
				next = next.Add(period)
			}
			timer.Reset(next.Sub(now))
		}
	}
}

func (w *worker) cleanup() {
	if w.containerID != "" {
		w.results.Remove(w.containerID)
	}
	w.m.removeWorker(w)
}

// stop ends the worker; an exec or network call in flight is abandoned.
func (w *worker) stop() { w.cancel() }

// probeNow asks for a probe without waiting for the period; it never blocks.
func (w *worker) probeNow() {
	select {
	case w.trigger <- struct{}{}:
	default:
	}
}

// doProbe probes the container once and records the result. It returns
// whether the worker should go on. It follows the kubelet's worker.doProbe.
func (w *worker) doProbe() (keepGoing bool) {
	defer func() {
		if r := recover(); r != nil {
			w.m.log.WithField("panic", r).Error("probe worker panicked")
			keepGoing = true
		}
	}()
	status, ok := w.m.status.PodStatus(w.pod.UID)
	if !ok {
		return true // not created yet, or already gone
	}
	if status.Phase == v1.PodFailed || status.Phase == v1.PodSucceeded {
		return false
	}
	c, ok := findStatus(status, w.container.Name)
	if !ok {
		return true // the container has not been created yet
	}
	if id := backendID(c.ContainerID); id != w.containerID {
		w.newContainer(id, c)
	}
	if w.onHold {
		return true
	}
	if c.State.Running == nil {
		if w.containerID != "" {
			w.results.Set(w.containerID, results.Failure, w.pod.UID)
		}
		return w.mayRunAgain(c)
	}
	if int32(w.m.clock.Since(c.State.Running.StartedAt.Time).Seconds()) < w.spec.InitialDelaySeconds {
		return true
	}
	if c.Started != nil && *c.Started {
		// A started container needs no startup probe; the worker stays for
		// the next container.
		if w.probeType == Startup {
			return true
		}
	} else if w.probeType != Startup {
		// Liveness and readiness wait for the startup probe.
		return true
	}
	result, err := w.m.prober.probe(w.ctx, w.probeType, w.pod, status.PodIP, &w.container, w.containerID)
	if err != nil || w.ctx.Err() != nil {
		return true // a probe that could not run says nothing
	}
	w.record(result)
	return true
}

// newContainer starts over for a new container of the worker's name.
func (w *worker) newContainer(id string, c v1.ContainerStatus) {
	if w.containerID != "" {
		w.results.Remove(w.containerID)
	}
	w.containerID = id
	w.lastResult, w.resultRun, w.onHold = results.Unknown, 0, false
	// A container that ran before runlet started keeps what it had: a
	// restart of runlet must not make a ready pod unready (the kubelet's
	// behaviour while ChangeContainerStatusOnKubeletRestart is off).
	adopted := c.State.Running != nil && c.State.Running.StartedAt.Time.Before(w.m.start.Add(-restartGrace))
	if w.probeType == Startup && adopted && c.Started != nil && *c.Started {
		w.results.Set(id, results.Success, w.pod.UID)
		return
	}
	if !adopted {
		w.results.Set(id, w.initialValue, w.pod.UID)
	}
}

// record counts result against the thresholds and publishes it once one is met.
func (w *worker) record(result results.Result) {
	if w.lastResult == result {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = result, 1
	}
	if (result == results.Failure && w.resultRun < int(max(w.spec.FailureThreshold, 1))) ||
		(result == results.Success && w.resultRun < int(max(w.spec.SuccessThreshold, 1))) {
		return
	}
	w.results.Set(w.containerID, result, w.pod.UID)
	if (w.probeType == Liveness && result == results.Failure) || w.probeType == Startup {
		// The container will be restarted (liveness, startup failure) or
		// needs no more startup probes (success): hold until a new one.
		w.onHold, w.resultRun = true, 0
	}
}

// mayRunAgain reports whether a container that is not running may run again,
// so its worker stays: its own restartPolicy (sidecars and restart rules)
// or the pod's decides.
func (w *worker) mayRunAgain(c v1.ContainerStatus) bool {
	if c.State.Terminated == nil || podutil.AllContainersCouldRestart(&w.pod.Spec) {
		// A RestartAllContainers rule may run any container again.
		return true
	}
	policy := w.pod.Spec.RestartPolicy
	if w.container.RestartPolicy != nil {
		if len(w.container.RestartPolicyRules) > 0 {
			return true // rules may restart it on some exits; keep watching
		}
		policy = v1.RestartPolicy(*w.container.RestartPolicy)
	}
	switch policy {
	case v1.RestartPolicyNever:
		return false
	case v1.RestartPolicyOnFailure:
		return c.State.Terminated.ExitCode != 0
	}
	return true
}

// restartGrace: containers started this long before runlet are adopted ones.
const restartGrace = 10 * time.Second

func findStatus(st v1.PodStatus, name string) (v1.ContainerStatus, bool) {
	for _, list := range [][]v1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for _, c := range list {
			if c.Name == name && c.ContainerID != "" {
				return c, true
			}
		}
	}
	return v1.ContainerStatus{}, false
}

// backendID strips the runtime prefix ("podman://") of a status's container ID.
func backendID(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
