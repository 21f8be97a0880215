package pleg

import (
	"github.com/runlet/runlet/internal/runtime"
)

// A container's exit can reach runlet before any listing shows it (see
// runtime.Event.Exit). It is applied to the cached view at once and kept
// until a listing agrees, so a listing taken a moment before the exit
// cannot bring the container back to life: a container never runs again
// once it has exited, since restarts create new containers.

// recordExit applies an exit the backend reported to the pod's cached view
// and returns the events it implies. The view keeps its timestamp: only
// this one container is known to be newer than it.
func (p *PLEG) recordExit(uid, containerID string, x runtime.ContainerExit) []*Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exits[containerID] = x
	cur := p.cache.Get(uid)
	view := *cur
	view.Containers = append([]runtime.Container(nil), cur.Containers...)
	if !patchExits(view.Containers, map[string]runtime.ContainerExit{containerID: x}) {
		return nil
	}
	p.cache.set(uid, &view)
	return p.diffPod(uid, view.Containers)
}

// overlayExits marks listed containers that runlet knows have exited, and
// forgets exits the listing already shows (or, for a full relist, whose
// container is gone). p.mu must be held.
func (p *PLEG) overlayExits(pods map[string]*runtime.PodStatus, full bool) {
	if len(p.exits) == 0 {
		return
	}
	listed := map[string]bool{}
	for _, ps := range pods {
		for _, c := range ps.Containers {
			listed[c.ID] = true
			if c.State == runtime.ContainerExited {
				delete(p.exits, c.ID)
			}
		}
		patchExits(ps.Containers, p.exits)
	}
	if full {
		for id := range p.exits {
			if !listed[id] {
				delete(p.exits, id)
			}
		}
	}
}

// patchExits rewrites the containers that are still shown live; it reports
// whether any was.
func patchExits(ctrs []runtime.Container, exits map[string]runtime.ContainerExit) bool {
	patched := false
	for i := range ctrs {
		c := &ctrs[i]
		x, ok := exits[c.ID]
		if !ok || (c.State != runtime.ContainerRunning && c.State != runtime.ContainerCreated && c.State != runtime.ContainerUnknown) {
			continue
		}
		c.State, c.ExitCode, c.FinishedAt, c.OOMKilled = runtime.ContainerExited, x.ExitCode, x.FinishedAt, x.OOMKilled
		patched = true
	}
	return patched
}
