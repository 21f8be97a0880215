// Package pleg is the pod lifecycle event generator, as the kubelet's evented
// PLEG: a periodic relist of the backend is the source of truth, every relist
// period while the backend's event stream is down and every 300 s while it is
// up. Each backend event names a pod to re-read on its own (a single-pod
// refresh; a full relist where the backend cannot list one pod), deferred
// while the pod's worker changes it so that one refresh covers the step; an
// exit the backend reports is applied to the cached view at once. The Cache
// is the runtime cache: the newest view of every pod.
package pleg

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/util/workqueue"
)

// EventType is the kind of lifecycle change seen between two relists.
type EventType string

// The event types the generic PLEG emits.
const (
	ContainerStarted EventType = "ContainerStarted"
	ContainerDied    EventType = "ContainerDied"
	ContainerRemoved EventType = "ContainerRemoved"
	ContainerChanged EventType = "ContainerChanged"
)

// Event is one lifecycle change of one pod.
type Event struct {
	PodUID      string
	Type        EventType
	ContainerID string
}

// The kubelet's relist thresholds for PLEG health: the generic PLEG's, and
// the evented PLEG's, which relists rarely while the event stream works.
const (
	unhealthyAfter        = 3 * time.Minute
	eventedUnhealthyAfter = 10 * time.Minute
)

// eventedRelistPeriod is how often the backend is relisted while its event
// stream is up, as the kubelet's evented PLEG does: events (and, on podman,
// conmon's exit files) then say what changed, and each names the pod to
// refresh. Without a stream the relist runs every period again.
const eventedRelistPeriod = 300 * time.Second

// Backend is what the PLEG reads: the runtime's observer role, and its
// capabilities.
type Backend interface {
	runtime.Observer
	Capabilities() runtime.Capabilities
}

// PLEG relists the backend and emits lifecycle events.
type PLEG struct {
	rt Backend
	// podList: the backend lists one pod cheaply, so single pods are
	// refreshed on their own (see RefreshPod).
	podList bool
	cache   *Cache
	period  time.Duration
	events  chan *Event
	trigger chan struct{}
	last    atomic.Int64 // unix nanos of the last successful relist
	// evented is set while the backend's event stream is up.
	evented atomic.Bool
	log     logrus.FieldLogger
	// relistMu serialises full relists.
	relistMu sync.Mutex
	// mu guards prev and orders every write to the cache, so a full relist
	// never overwrites a pod view a single-pod refresh took after it began.
	mu   sync.Mutex
	prev map[string]map[string]runtime.ContainerState // pod UID → container ID → state
	// exits holds exits reported ahead of the listings (container ID → exit).
	exits map[string]runtime.ContainerExit
	// pods holds the pods waiting for a single-pod refresh.
	pods workqueue.TypedInterface[string]
	// held maps the pods whose refreshes are deferred (Hold) to whether an
	// event asked for one meanwhile.
	heldMu sync.Mutex
	held   map[string]bool
}

// New returns a PLEG that relists every period.
func New(rt Backend, cache *Cache, period time.Duration, log logrus.FieldLogger) *PLEG {
	return &PLEG{
		rt: rt, podList: rt.Capabilities().PodList, cache: cache, period: period, log: log,
		events:  make(chan *Event, 1000),
		trigger: make(chan struct{}, 1),
		prev:    map[string]map[string]runtime.ContainerState{},
		exits:   map[string]runtime.ContainerExit{},
		pods:    workqueue.NewTyped[string](),
		held:    map[string]bool{},
	}
}

// Watch is the stream of lifecycle events.
func (p *PLEG) Watch() <-chan *Event { return p.events }

// Trigger asks for a relist as soon as possible; requests coalesce.
func (p *PLEG) Trigger() {
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

// Healthy reports whether relists are still happening.
func (p *PLEG) Healthy() (bool, time.Duration) {
	last := p.last.Load()
	if last == 0 {
		return true, 0
	}
	since := time.Since(time.Unix(0, last))
	limit := unhealthyAfter
	if p.evented.Load() {
		limit = eventedUnhealthyAfter
	}
	return since <= limit, since
}

// relistPeriod is the wait before the next relist.
func (p *PLEG) relistPeriod() time.Duration {
	if p.evented.Load() {
		return max(p.period, eventedRelistPeriod)
	}
	return p.period
}

// Run relists until ctx ends. The period runs from the end of one relist
// to the start of the next, as the kubelet's wait.Until does: a backend that
// lists slowly is not kept busy listing.
func (p *PLEG) Run(ctx context.Context) {
	go p.watchBackendEvents(ctx)
	p.startPodRefreshers(ctx)
	t := time.NewTimer(p.period)
	defer t.Stop()
	for {
		p.Relist(ctx)
		t.Reset(p.relistPeriod())
		select {
		case <-ctx.Done():
			p.cache.Wake()
			return
		case <-t.C:
		case <-p.trigger:
		}
	}
}

// Relist lists the backend once, refreshes the cache and emits events.
func (p *PLEG) Relist(ctx context.Context) {
	p.relistMu.Lock()
	defer p.relistMu.Unlock()
	ts := time.Now()
	pods, err := p.list(ctx, ts)
	if err != nil {
		p.log.WithError(err).Warn("relist failed; keeping the last known state")
		return
	}
	p.last.Store(ts.UnixNano())
	p.observe(ts, pods)
	events := p.apply(ts, pods, true)
	for _, e := range events {
		p.emit(e)
	}
	p.log.WithFields(logrus.Fields{"pods": len(pods), "events": len(events), "took": time.Since(ts)}).Trace("relisted")
}

// list builds every pod's view, stamped ts: the relist's start, so that a
// view never passes for newer than a change made while it was being listed.
func (p *PLEG) list(ctx context.Context, ts time.Time) (map[string]*runtime.PodStatus, error) {
	sbs, ctrs, err := p.listAll(ctx)
	if err != nil {
		return nil, err
	}
	pods := map[string]*runtime.PodStatus{}
	get := func(uid string) *runtime.PodStatus {
		if ps, ok := pods[uid]; ok {
			return ps
		}
		ps := &runtime.PodStatus{UID: uid}
		pods[uid] = ps
		return ps
	}
	for _, s := range sbs {
		ps := get(s.PodUID)
		ps.Sandboxes = append(ps.Sandboxes, s)
	}
	for _, c := range ctrs {
		ps := get(c.PodUID)
		ps.Containers = append(ps.Containers, c)
	}
	for _, ps := range pods {
		ps.Timestamp = ts
		ps.SortNewestFirst()
	}
	return pods, nil
}

func (p *PLEG) observe(start time.Time, pods map[string]*runtime.PodStatus) {
	telemetry.PLEGRelistDuration.Observe(time.Since(start).Seconds())
	telemetry.PLEGLastSeen.Set(float64(start.Unix()))
	running, sandboxes := 0, 0
	for _, ps := range pods {
		if len(ps.Sandboxes) > 0 {
			sandboxes++
		}
		for _, c := range ps.Containers {
			if c.State == runtime.ContainerRunning {
				running++
			}
		}
	}
	telemetry.RunningContainers.Set(float64(running))
	telemetry.RunningPods.Set(float64(sandboxes))
}

func (p *PLEG) emit(e *Event) {
	p.log.WithFields(logrus.Fields{"pod": e.PodUID, "event": e.Type, "container": e.ContainerID}).Debug("lifecycle event")
	select {
	case p.events <- e:
	default:
		p.log.WithField("pod", e.PodUID).Warn("lifecycle event channel full; event dropped, the next relist recovers")
	}
}

// Refresh re-inspects the pod's live containers, for a caller that has just
// changed them and cannot wait for the next relist. The cache is untouched:
// the relist stays the source of truth.
func (p *PLEG) Refresh(ctx context.Context, ps *runtime.PodStatus) *runtime.PodStatus {
	out := *ps
	out.Containers = append([]runtime.Container(nil), ps.Containers...)
	for i, c := range out.Containers {
		if c.State != runtime.ContainerRunning && c.State != runtime.ContainerCreated {
			continue
		}
		if fresh, err := p.rt.InspectContainer(ctx, c.ID); err == nil {
			out.Containers[i] = fresh
		}
	}
	out.Timestamp = time.Now()
	return &out
}

func (p *PLEG) listAll(ctx context.Context) ([]runtime.Sandbox, []runtime.Container, error) {
	return p.rt.List(ctx, runtime.ListFilter{})
}
