package chaos

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
)

func TestMain(m *testing.M) {
	if os.Getenv("RUNLET_CHAOS") != "1" {
		os.Exit(m.Run())
	}
	framework.Main(m)
}

// config is the soak's knobs (RUNLET_CHAOS_*), read and checked before anything starts.
type config struct {
	duration time.Duration // per backend
	seed     uint64
	backends []string
	pods     int // pods the churn keeps on the node, give or take a few
	faults   []string
}

const (
	backendPodman = "podman"
	backendRunc   = framework.RuntimeRunc
)

func loadConfig(t *testing.T) config {
	cfg := config{duration: 30 * time.Minute, seed: rand.Uint64() % 1e9, backends: []string{backendPodman, backendRunc}, pods: 16}
	var errs []string
	if v := os.Getenv("RUNLET_CHAOS_MINUTES"); v != "" {
		m, err := strconv.ParseFloat(v, 64)
		if err != nil || m <= 0 {
			errs = append(errs, fmt.Sprintf("RUNLET_CHAOS_MINUTES=%q: want a positive number of minutes", v))
		}
		cfg.duration = time.Duration(m * float64(time.Minute))
	}
	if v := os.Getenv("RUNLET_CHAOS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("RUNLET_CHAOS_SEED=%q: want a non-negative integer", v))
		}
		cfg.seed = s
	}
	if v := os.Getenv("RUNLET_CHAOS_BACKENDS"); v != "" {
		cfg.backends = strings.Split(v, ",")
		for _, b := range cfg.backends {
			if b != backendPodman && b != backendRunc {
				errs = append(errs, fmt.Sprintf("RUNLET_CHAOS_BACKENDS=%q: %q is neither podman nor runc", v, b))
			}
		}
	}
	if v := os.Getenv("RUNLET_CHAOS_PODS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			errs = append(errs, fmt.Sprintf("RUNLET_CHAOS_PODS=%q: want 1 to 100", v))
		}
		cfg.pods = n
	}
	for _, f := range faults {
		cfg.faults = append(cfg.faults, f.name)
	}
	if v := os.Getenv("RUNLET_CHAOS_FAULTS"); v != "" {
		cfg.faults = strings.Split(v, ",")
		for _, name := range cfg.faults {
			if faultNamed(name) == nil {
				errs = append(errs, fmt.Sprintf("RUNLET_CHAOS_FAULTS=%q: no fault %q (%s)", v, name, strings.Join(faultNames(), ", ")))
			}
		}
	}
	if len(errs) > 0 {
		t.Fatal(strings.Join(errs, "\n"))
	}
	return cfg
}

// TestChaos runs the soak on each backend in turn, one node at a time: the machine's CPU goes to one
// node under faults, a breach is one backend's, and a backend's faults and churn follow from the seed
// alone, so that RUNLET_CHAOS_BACKENDS=runc replays runc's part of a run.
func TestChaos(t *testing.T) {
	if os.Getenv("RUNLET_CHAOS") != "1" {
		t.Skip("the chaos soak runs with RUNLET_CHAOS=1 (make chaos)")
	}
	cfg := loadConfig(t)
	progress("", "seed %d (RUNLET_CHAOS_SEED=%d replays this run's faults and churn); %v per backend on %s; faults: %s; about %d pods",
		cfg.seed, cfg.seed, cfg.duration, strings.Join(cfg.backends, " then "), strings.Join(cfg.faults, ", "), cfg.pods)
	for _, b := range cfg.backends {
		t.Run(b, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					progress(b, "FAILED: replay with RUNLET_CHAOS_SEED=%d RUNLET_CHAOS_BACKENDS=%s", cfg.seed, b)
				}
			})
			soak(t, cfg, b)
		})
	}
}

// streams are a backend's two random sources, one for the faults and one for the churn, so that the
// sequence of faults does not depend on how many churn steps fit between them.
func streams(seed uint64, backend string) (faults, churn *rand.Rand) {
	h := fnv.New64a()
	h.Write([]byte(backend))
	salt := h.Sum64()
	return rand.New(rand.NewPCG(seed, salt)), rand.New(rand.NewPCG(seed, salt+1))
}

// soak is one backend's run: a node, the workload brought up, then faults until the duration is
// spent, each followed by the checks; at the end every pod goes and the node must hold nothing.
func soak(t *testing.T, cfg config, backend string) {
	fr, cr := streams(cfg.seed, backend)
	bag := newFaultBag(fr, cfg.faults, backend)
	if len(bag.all) == 0 {
		t.Skipf("none of the faults %v hits the %s backend", cfg.faults, backend)
	}
	n := startNode(t, backend)
	w := startWorkload(t, n, cr, cfg.pods)
	c := newChecker(t, n, w, cfg.seed)
	progress(backend, "node %s up; bringing the workload to %d pods", n.rl.NodeName, cfg.pods)
	w.fill()
	c.settle(nil)

	end := time.Now().Add(cfg.duration)
	for i := 1; time.Now().Before(end); i++ {
		w.resume()
		sleepFor(between(fr, 10*time.Second, 40*time.Second))
		f := bag.next()
		progress(backend, "fault %d: %s ...", i, f.name)
		t0 := time.Now()
		what := f.inject(&faultRun{t: t, n: n, w: w, r: fr, c: c})
		c.note("fault %d: %s", i, what)
		progress(backend, "fault %d: %s (%v)", i, what, time.Since(t0).Round(time.Second))
		w.pause()
		c.settle(f)
	}
	w.pause()
	progress(backend, "time is up: deleting every pod")
	w.drain()
	c.empty()
	progress(backend, "done: %s; %s", c.summary(), w.summary())
}

func sleepFor(d time.Duration) { time.Sleep(d) }

// between draws a duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo))).Round(time.Second)
}

// progress tells the human who waits what happens, as it happens.
func progress(backend, format string, args ...any) {
	prefix := "chaos"
	if backend != "" {
		prefix += " " + backend
	}
	fmt.Fprintf(os.Stderr, "[%s %s] %s\n", prefix, time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// faultBag deals the faults in rounds, each round every fault once in a random order: a short run
// still meets each of them.
type faultBag struct {
	r    *rand.Rand
	all  []*fault
	left []*fault
}

func newFaultBag(r *rand.Rand, names []string, backend string) *faultBag {
	b := &faultBag{r: r}
	for _, name := range names {
		if f := faultNamed(name); f != nil && (!f.podmanOnly || backend == backendPodman) && !slices.Contains(b.all, f) {
			b.all = append(b.all, f)
		}
	}
	return b
}

func (b *faultBag) next() *fault {
	if len(b.left) == 0 {
		b.left = slices.Clone(b.all)
		b.r.Shuffle(len(b.left), func(i, j int) { b.left[i], b.left[j] = b.left[j], b.left[i] })
	}
	f := b.left[0]
	b.left = b.left[1:]
	return f
}
