package syncloop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/prober"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// envOptions vary the loop environment; the zero value is the whole loop
// over the fake backend, fed by the API and file sources, running.
type envOptions struct {
	// backend, if set, is the runtime the loop runs over in place of the
	// fake itself: a wrapper of it (removals that hang, ...).
	backend func(*runtimefake.Fake) runtime.Runtime
	// relist is the PLEG's relist period; 200 ms if zero.
	relist time.Duration
	// apiOnly registers only the API source with the mux (e.file is nil):
	// every source has been seen once the API sent its first snapshot.
	apiOnly bool
	// sourcesSeen, if set, replaces the mux's SeenAllSources.
	sourcesSeen func() bool
	// probes wires the real prober over the backend's exec: the loop's
	// probes and results, the runtime manager's liveness and startup.
	probes bool
	// config, if set, amends the loop's Config (Volumes, Mirror, InAPI, ...).
	config func(*Config)
	// manual builds the loop without starting anything: the test calls
	// e.start, or drives the loop itself (housekeeping, handleUpdate, a
	// step) and relists the PLEG when it wants to.
	manual bool
	// syncer, with manual, is what the loop's pod workers drive in place of
	// the loop itself, made at once with an hour's resync and back-off.
	syncer syncer
}

// loopEnv is the whole loop over the fake backend: the podconfig mux, the
// PLEG, the kuberuntime manager and the status manager, as runlet wires
// them. The status manager's notifications and API writes land in it.
type loopEnv struct {
	t    *testing.T
	ctx  context.Context
	opts envOptions
	f    *runtimefake.Fake
	rt   runtime.Runtime // the backend the loop runs over: f, or its wrapper
	api  chan<- []*v1.Pod
	file chan<- []*v1.Pod
	rec  *record.FakeRecorder
	pl   *pleg.PLEG
	sm   *status.Manager
	pm   *prober.Manager // with opts.probes
	loop *Loop

	mu      sync.Mutex
	latest  map[types.UID]*v1.Pod
	sent    map[types.UID][]v1.PodStatus
	deleted map[types.UID]*v1.Pod
}

func (e *loopEnv) DeletePod(ctx context.Context, pod *v1.Pod) error {
	_ = e.WriteStatus(ctx, pod)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deleted[pod.UID] = pod
	return nil
}

// WriteStatus records the statuses the status manager writes.
func (e *loopEnv) WriteStatus(_ context.Context, p *v1.Pod) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.latest[p.UID] = p
	e.sent[p.UID] = append(e.sent[p.UID], p.Status)
	return nil
}

// newLoopEnv builds the loop as opts say and, unless opts.manual, starts
// it; everything stops when the test ends.
func newLoopEnv(t *testing.T, opts envOptions) *loopEnv {
	if opts.syncer != nil && !opts.manual {
		t.Fatal("envOptions.syncer needs manual: a running loop makes its own workers")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := logtest.Discard()
	e := &loopEnv{t: t, ctx: ctx, opts: opts, f: runtimefake.New(), rec: record.NewFakeRecorder(100),
		latest: map[types.UID]*v1.Pod{}, sent: map[types.UID][]v1.PodStatus{}, deleted: map[types.UID]*v1.Pod{}}
	e.rt = e.f
	if opts.backend != nil {
		e.rt = opts.backend(e.f)
	}
	relist := opts.relist
	if relist == 0 {
		relist = 200 * time.Millisecond
	}
	cache := pleg.NewCache()
	e.pl = pleg.New(e.rt, cache, relist, log)
	mux := podconfig.New(ctx, nil)
	e.api = mux.Channel(podconfig.APISource)
	if !opts.apiOnly {
		e.file = mux.Channel(podconfig.FileSource)
	}
	e.sm = status.NewManager(status.Config{Writer: e, Log: log})
	go e.sm.Run(ctx)
	rtCfg := kuberuntime.Config{Runtime: e.rt, RuntimeName: "podman", Owner: "node-1", Log: log}
	cfg := Config{
		Updates: mux.Updates(), SourcesSeen: mux.SeenAllSources, PLEG: e.pl, Cache: cache, Recorder: e.rec,
		Status: e.sm, HostIPs: []string{"192.168.1.2"}, Log: log,
	}
	if opts.sourcesSeen != nil {
		cfg.SourcesSeen = opts.sourcesSeen
	}
	if opts.probes {
		e.pm = prober.NewManager(prober.Config{Exec: e.rt, Status: e.sm, Log: log})
		rtCfg.Liveness, rtCfg.Startup = e.pm.Liveness, e.pm.Startup
		cfg.Prober, cfg.ProbeResults = e.pm, e.pm.Updates()
	}
	cfg.Runtime = kuberuntime.NewManager(rtCfg)
	if opts.config != nil {
		opts.config(&cfg)
	}
	e.loop = New(cfg)
	if opts.syncer != nil {
		e.loop.workers = newPodWorkers(ctx, opts.syncer, e.loop.queue, time.Hour, time.Hour)
	}
	if !opts.manual {
		e.start()
	}
	return e
}

// start runs the PLEG, the status manager, the prober and the loop.
func (e *loopEnv) start() {
	if e.opts.syncer != nil {
		e.t.Fatal("a loop whose workers drive a test's syncer cannot run")
	}
	go e.pl.Run(e.ctx)
	if e.pm != nil {
		go e.pm.Run(e.ctx)
	}
	go e.loop.Run(e.ctx)
}

// pod is the pod with the newest status the status manager sent, or nil.
func (e *loopEnv) pod(uid types.UID) *v1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.latest[uid]
}

// statuses are the statuses the status manager sent for the pod, in order.
func (e *loopEnv) statuses(uid types.UID) []v1.PodStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]v1.PodStatus(nil), e.sent[uid]...)
}

func (e *loopEnv) wasDeleted(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.deleted[uid]
	return ok
}

func (e *loopEnv) running(uid types.UID) int {
	n := 0
	for _, c := range e.f.Containers() {
		if c.PodUID == string(uid) && c.State == runtime.ContainerRunning {
			n++
		}
	}
	return n
}

func loopPod(uid string) *v1.Pod {
	return podtest.New(uid, podtest.Namespace("ns"), podtest.UID(uid), podtest.RestartPolicy(v1.RestartPolicyAlways),
		podtest.GracePeriod(1), podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
}
