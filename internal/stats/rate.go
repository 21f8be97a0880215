package stats

import (
	"sync"
	"time"
)

// Rates need two samples. Samples closer than minWindow reuse the last rate
// (two scrapes in a row would otherwise give noise), and samples not
// refreshed for forgetAfter are dropped with their container.
const (
	minWindow   = time.Second
	forgetAfter = 10 * time.Minute
)

type cpuPoint struct {
	nanos uint64
	at    time.Time
	rate  uint64
}

// cpuRates turns cumulative CPU time into nanocores, per key.
type cpuRates struct {
	mu   sync.Mutex
	last map[string]cpuPoint
}

func newCPURates() *cpuRates { return &cpuRates{last: map[string]cpuPoint{}} }

// nanoCores returns the usage rate of key at `at`. Without an earlier sample
// (or after the counter went back, i.e. a restart) it is the average since
// `since`, which is what a first scrape can honestly say.
func (r *cpuRates) nanoCores(key string, nanos uint64, at, since time.Time) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, ok := r.last[key]
	if ok && at.Sub(prev.at) < minWindow && nanos >= prev.nanos {
		return prev.rate
	}
	var rate uint64
	switch {
	case ok && nanos >= prev.nanos && at.After(prev.at):
		rate = perSecond(nanos-prev.nanos, at.Sub(prev.at))
	case !since.IsZero() && at.After(since):
		rate = perSecond(nanos, at.Sub(since))
	}
	r.last[key] = cpuPoint{nanos: nanos, at: at, rate: rate}
	return rate
}

func perSecond(nanos uint64, d time.Duration) uint64 {
	return uint64(float64(nanos) / d.Seconds())
}

// forget drops keys not sampled since before cutoff.
func (r *cpuRates) forget(cutoff time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, p := range r.last {
		if p.at.Before(cutoff) {
			delete(r.last, k)
		}
	}
}
