package podman

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// ctrDetail is what podman's list answer lacks (OOMKilled, Error) or cuts to
// whole seconds (StartedAt, ExitedAt). It is read by one inspect when the
// list shows a container in a state not seen before, then served from here:
// a steady relist costs one API call, whatever the number of containers.
type ctrDetail struct {
	key               string
	started, finished time.Time
	oomKilled         bool
	errMsg            string
	staticDir         string
	logPath           string // k8s-file log on this host, if any
	rootfsDir         string // the writable layer's directory
}

// List lists sandboxes and containers. All of them come from one
// containers/json call: a pod's infra container stands for its sandbox, so
// the costly pods/json (podman checks every member's state again) is not
// needed at each relist. One pod whose sandbox runs is read from podman's
// pod and its own containers (see inspectPod); any other through the list
// filtered on the pod's label.
func (b *Backend) List(ctx context.Context, f runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	if f.PodUID == "" {
		return b.listAll(ctx, true, b.managedFilter())
	}
	if id := b.runningSandboxOf(f.PodUID); id != "" {
		sbs, ctrs, err := b.inspectPod(ctx, id)
		if !errors.Is(err, runtime.ErrNotFound) {
			return sbs, ctrs, err
		}
		b.forgetSandbox(id)
	}
	return b.listAll(ctx, false, b.managedFilter(), runtime.LabelPodUID+"="+f.PodUID)
}

// listAll lists what the labels select; only a full list may forget cached
// details of objects it did not see.
func (b *Backend) listAll(ctx context.Context, full bool, labels ...string) ([]runtime.Sandbox, []runtime.Container, error) {
	list, err := b.client.ListContainers(ctx, labels...)
	if err != nil {
		return nil, nil, err
	}
	sbs, err := b.sandboxesFrom(ctx, list, full)
	if err != nil {
		return nil, nil, err
	}
	ctrs, err := b.containersFrom(ctx, list, full)
	return sbs, ctrs, err
}

func (b *Backend) sandboxesFrom(ctx context.Context, list []libpod.ListContainer, full bool) ([]runtime.Sandbox, error) {
	var out []runtime.Sandbox
	live := map[string]bool{}
	for _, lc := range list {
		if !lc.IsInfra || lc.Pod == "" {
			continue
		}
		live[lc.Pod] = true
		l := lc.Labels
		sb := runtime.Sandbox{
			ID: lc.Pod, PodUID: l[runtime.LabelPodUID], Namespace: l[runtime.LabelPodNamespace],
			Name: l[runtime.LabelPodName], State: runtime.SandboxNotReady, NetNS: l[labelNetNS], CreatedAt: lc.Created, Labels: l,
		}
		if sandboxReady(lc.State, l) {
			sb.State = runtime.SandboxReady
			m, err := b.sandboxMeta(ctx, lc.Pod, lc.ID)
			if err != nil && !errors.Is(err, runtime.ErrNotFound) {
				return nil, err
			}
			sb.IPs = m.ips
		}
		out = append(out, sb)
	}
	if full {
		b.forgetSandboxes(live)
	}
	return out, nil
}

func (b *Backend) containersFrom(ctx context.Context, list []libpod.ListContainer, full bool) ([]runtime.Container, error) {
	out := make([]runtime.Container, 0, len(list))
	kept := make([]libpod.ListContainer, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, lc := range list {
		if lc.IsInfra {
			continue
		}
		seen[lc.ID] = true
		kept = append(kept, lc)
		out = append(out, fromList(lc))
	}
	out, err := b.refineAll(ctx, kept, out)
	if err != nil {
		return nil, err
	}
	if !full {
		return out, nil
	}
	b.mu.Lock()
	for id := range b.details {
		if !seen[id] {
			delete(b.details, id)
		}
	}
	b.mu.Unlock()
	b.ooms.Retain(seen)
	return out, nil
}

// refineLimit bounds the inspects in flight: a burst of new containers
// should not serialise (nor flood podman with) one inspect each.
const refineLimit = 8

// refineAll fills what the list lacks; a container removed since the list
// was taken is dropped rather than failing the whole list.
func (b *Backend) refineAll(ctx context.Context, list []libpod.ListContainer, out []runtime.Container) ([]runtime.Container, error) {
	sem := make(chan struct{}, refineLimit)
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i := range list {
		if !b.needsInspect(list[i]) {
			b.applyDetail(list[i], &out[i])
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = b.refine(ctx, list[i], &out[i])
		}()
	}
	wg.Wait()
	kept := out[:0]
	var failed []error
	for i, err := range errs {
		switch {
		case err == nil:
			kept = append(kept, out[i])
		case !errors.Is(err, runtime.ErrNotFound):
			failed = append(failed, err)
		}
	}
	return kept, errors.Join(failed...)
}

func fromList(lc libpod.ListContainer) runtime.Container {
	l := lc.Labels
	attempt, _ := strconv.Atoi(l[runtime.LabelAttempt])
	return runtime.Container{
		ID: lc.ID, SandboxID: lc.Pod,
		PodUID: l[runtime.LabelPodUID], Namespace: l[runtime.LabelPodNamespace], PodName: l[runtime.LabelPodName],
		Name: l[runtime.LabelContainerName], Attempt: attempt,
		Image: lc.Image, ImageID: lc.ImageID,
		State: mapState(lc.State), ExitCode: lc.ExitCode,
		CreatedAt: lc.Created, StartedAt: unixTime(lc.StartedAt), FinishedAt: unixTime(lc.ExitedAt),
		Labels: l,
	}
}

// unixTime converts podman's list seconds; it encodes "never" as the Unix
// time of Go's zero time.
func unixTime(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}

// detailKey changes whenever the list shows a new state of the container.
func detailKey(lc libpod.ListContainer) string {
	return fmt.Sprintf("%s|%d|%d|%d", lc.State, lc.StartedAt, lc.ExitedAt, lc.ExitCode)
}

// inspectKey is the detailKey of the state an inspect saw, as the list
// would show it (whole seconds; "never" as the zero time's).
func inspectKey(ic libpod.InspectContainer) string {
	return detailKey(libpod.ListContainer{State: ic.State.Status, ExitCode: ic.State.ExitCode,
		StartedAt: ic.State.StartedAt.Unix(), ExitedAt: ic.State.FinishedAt.Unix()})
}

// needsInspect: never-started containers lack nothing; others need one
// inspect per state.
func (b *Backend) needsInspect(lc libpod.ListContainer) bool {
	if lc.StartedAt <= 0 {
		return false
	}
	b.mu.Lock()
	d, ok := b.details[lc.ID]
	b.mu.Unlock()
	return !ok || d.key != detailKey(lc)
}

// refine inspects the container and applies the full-precision details.
func (b *Backend) refine(ctx context.Context, lc libpod.ListContainer, c *runtime.Container) error {
	ic, err := b.client.InspectContainer(ctx, lc.ID)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil // removed since the list: the next relist drops it
	}
	if err != nil {
		return err
	}
	b.remember(ic, detailKey(lc))
	b.applyDetail(lc, c)
	return nil
}

// remember keeps what an inspect read for the lists to come, under the key
// of the state it saw.
func (b *Backend) remember(ic libpod.InspectContainer, key string) ctrDetail {
	b.ooms.Learn(ic.ID, ic.State.CgroupPath)
	d := ctrDetail{key: key, started: ic.State.StartedAt, finished: ic.State.FinishedAt,
		oomKilled: inspectOOM(ic), errMsg: ic.State.Error, staticDir: ic.StaticDir, logPath: logFilePath(ic),
		rootfsDir: ic.GraphDriver.Data.UpperDir}
	b.mu.Lock()
	b.details[ic.ID] = d
	b.mu.Unlock()
	return d
}

// applyDetail uses the cached details; inspect's times count only when
// they are the ones the list saw (the container may have moved on).
func (b *Backend) applyDetail(lc libpod.ListContainer, c *runtime.Container) {
	b.mu.Lock()
	d, ok := b.details[lc.ID]
	b.mu.Unlock()
	if !ok || d.key != detailKey(lc) {
		return
	}
	if d.started.Unix() == lc.StartedAt {
		c.StartedAt = d.started
	}
	if lc.ExitedAt > 0 && d.finished.Unix() == lc.ExitedAt {
		c.FinishedAt = d.finished
	}
	c.OOMKilled, c.Error = d.oomKilled || b.ooms.WasKilled(lc.ID), d.errMsg
}
