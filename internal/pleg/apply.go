package pleg

import (
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// apply stores the views listed at ts and returns the lifecycle events they
// imply. A full relist also covers every pod it did not list: those have no
// backend objects any more. A pod whose cached view is newer than ts (a
// single-pod refresh ran while a slow full relist was listing) keeps that
// view, and no event is derived from the older one.
func (p *PLEG) apply(ts time.Time, pods map[string]*runtime.PodStatus, full bool) []*Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.overlayExits(pods, full)
	var events []*Event
	for uid, ps := range pods {
		if !p.cache.newerThan(uid, ts) {
			events = append(events, p.diffPod(uid, ps.Containers)...)
		}
	}
	if full {
		for uid := range p.prev {
			if _, listed := pods[uid]; !listed && !p.cache.newerThan(uid, ts) {
				events = append(events, p.diffPod(uid, nil)...)
			}
		}
	}
	// The cache is written before events are sent, so a worker woken by an
	// event already sees the state that caused it.
	p.cache.merge(pods, ts, full)
	return events
}

// diffPod compares a pod's listed containers with the last ones seen and
// records the new states.
func (p *PLEG) diffPod(uid string, ctrs []runtime.Container) []*Event {
	old := p.prev[uid]
	cur := make(map[string]runtime.ContainerState, len(ctrs))
	var events []*Event
	for _, c := range ctrs {
		cur[c.ID] = c.State
		if ev := diff(old[c.ID], c.State, true); ev != "" {
			events = append(events, &Event{PodUID: uid, Type: ev, ContainerID: c.ID})
		}
	}
	for id, st := range old {
		if _, ok := cur[id]; !ok {
			if ev := diff(st, "", false); ev != "" {
				events = append(events, &Event{PodUID: uid, Type: ev, ContainerID: id})
			}
		}
	}
	if len(cur) == 0 {
		delete(p.prev, uid)
	} else {
		p.prev[uid] = cur
	}
	return events
}

// podOf finds the pod a container belongs to, from the last states seen.
func (p *PLEG) podOf(containerID string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, ctrs := range p.prev {
		if _, ok := ctrs[containerID]; ok {
			return uid
		}
	}
	return ""
}

// diff maps a state transition to the generic PLEG's event.
func diff(old, cur runtime.ContainerState, present bool) EventType {
	if old == cur {
		return ""
	}
	switch {
	case !present:
		if old == runtime.ContainerExited {
			return ContainerRemoved
		}
		return ContainerDied
	case cur == runtime.ContainerRunning:
		return ContainerStarted
	case cur == runtime.ContainerExited:
		return ContainerDied
	case cur == runtime.ContainerUnknown:
		return ContainerChanged
	case old == "" && cur == runtime.ContainerCreated:
		return ""
	}
	return ContainerChanged
}
