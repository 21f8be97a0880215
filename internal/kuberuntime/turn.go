package kuberuntime

import "context"

// startTurn is a pod's place among the pods being started at once (see
// parallelStarts). A pod waiting for an image pull gives it up meanwhile
// and queues again for it afterwards: a pull takes as long as the registry
// wants, and must not keep other pods, whose images are present, from
// starting.
type startTurn struct {
	starts chan struct{}
	held   bool
}

// startSlot waits for a turn to start a pod.
func (m *Manager) startSlot(ctx context.Context) (*startTurn, error) {
	t := &startTurn{starts: m.starts}
	return t, t.resume(ctx)
}

// release gives the turn back for good (a no-op when not held).
func (t *startTurn) release() { t.pause() }

// pause gives the turn back for a while; nil-safe, as a sync that started
// no sandbox holds no turn.
func (t *startTurn) pause() {
	if t != nil && t.held {
		<-t.starts
		t.held = false
	}
}

// resume waits for the turn again after a pause.
func (t *startTurn) resume(ctx context.Context) error {
	if t == nil || t.held {
		return nil
	}
	select {
	case t.starts <- struct{}{}:
		t.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type turnKey struct{}

// withTurn hands the turn down to the steps of the sync that may pause it.
func withTurn(ctx context.Context, t *startTurn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

func turnFrom(ctx context.Context) *startTurn {
	t, _ := ctx.Value(turnKey{}).(*startTurn)
	return t
}
