package syncloop

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// workQueue holds when each pod is next due for a sync.
type workQueue struct {
	mu  sync.Mutex
	due map[types.UID]time.Time
}

func newWorkQueue() *workQueue { return &workQueue{due: map[types.UID]time.Time{}} }

// Enqueue makes uid due after delay.
func (q *workQueue) Enqueue(uid types.UID, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.due[uid] = time.Now().Add(delay)
}

// GetDue removes and returns the pods due now.
func (q *workQueue) GetDue() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	var out []types.UID
	for uid, t := range q.due {
		if !t.After(now) {
			out = append(out, uid)
			delete(q.due, uid)
		}
	}
	return out
}

// Next returns how long until the earliest entry is due (or ok=false).
func (q *workQueue) Next() (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first time.Time
	for _, t := range q.due {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if first.IsZero() {
		return 0, false
	}
	return time.Until(first), true
}
