package runtimefake

import (
	"context"
	"fmt"
	"sort"

	"github.com/runlet/runlet/internal/runtime"
)

// List implements runtime.Observer: the owner's sandboxes and containers,
// oldest first.
func (f *Fake) List(_ context.Context, flt runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("List"); err != nil {
		return nil, nil, err
	}
	sbs := make([]runtime.Sandbox, 0, len(f.sandboxes))
	for _, sb := range f.sandboxes {
		if f.owns(sb.Labels) && (flt.PodUID == "" || sb.PodUID == flt.PodUID) {
			s := *sb
			s.IPs = append([]string(nil), sb.IPs...)
			s.Labels = copyLabels(sb.Labels)
			sbs = append(sbs, s)
		}
	}
	sort.Slice(sbs, func(i, j int) bool { return sbs[i].CreatedAt.Before(sbs[j].CreatedAt) })
	ctrs := make([]runtime.Container, 0, len(f.containers))
	for _, c := range f.containers {
		if f.owns(c.c.Labels) && (flt.PodUID == "" || c.c.PodUID == flt.PodUID) {
			cc := c.c
			cc.Labels = copyLabels(c.c.Labels)
			ctrs = append(ctrs, cc)
		}
	}
	sort.Slice(ctrs, func(i, j int) bool { return ctrs[i].CreatedAt.Before(ctrs[j].CreatedAt) })
	return sbs, ctrs, nil
}

// InspectContainer implements runtime.Runtime.
func (f *Fake) InspectContainer(_ context.Context, id string) (runtime.Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("InspectContainer"); err != nil {
		return runtime.Container{}, err
	}
	c, ok := f.containers[id]
	if !ok || !f.owns(c.c.Labels) {
		return runtime.Container{}, fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	cc := c.c
	cc.Labels = copyLabels(c.c.Labels)
	return cc, nil
}

// Events implements runtime.Runtime: a hint per change until ctx ends.
func (f *Fake) Events(ctx context.Context) (<-chan runtime.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("Events"); err != nil {
		return nil, err
	}
	ch := make(chan runtime.Event, 64)
	f.subs = append(f.subs, subscriber{ch: ch, owner: f.owner})
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, s := range f.subs {
			if s.ch == ch {
				f.subs = append(f.subs[:i], f.subs[i+1:]...)
				close(ch)
				break
			}
		}
	}()
	return ch, nil
}

// BreakEvents ends every open event stream, as a restarting backend does.
func (f *Fake) BreakEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.subs {
		close(s.ch)
	}
	f.subs = nil
}
