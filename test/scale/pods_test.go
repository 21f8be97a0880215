package scale

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	"golang.org/x/time/rate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// podStarts is one set's pods: when each was created and when a watch first
// saw it Running, on the harness's clock.
type podStarts struct {
	mu      sync.Mutex
	created map[string]time.Time
	running map[string]time.Time
	nodes   map[string]string
}

// scalePod is a pod as SIG-scalability's density tests make them: one
// container that asks for little, steered to the set's nodes. No service
// account token: what the node costs the apiserver is measured, not the
// token requests of its pods' volumes.
func scalePod(ns, name, kind string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "scale"}},
		Spec: v1.PodSpec{
			NodeSelector: map[string]string{setLabel: kind},
			Tolerations: []v1.Toleration{{Key: framework.TaintKey, Operator: v1.TolerationOpEqual, Value: framework.TaintValue,
				Effect: v1.TaintEffectNoSchedule}},
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: v1.PullIfNotPresent}},
		},
	}
}

// createPods creates n pods in ns at the run's pace while a watch records
// when each runs; it returns once every pod is Running.
func (h *harness) createPods(ns, kind string, n int, timeout time.Duration) *podStarts {
	t := h.t
	ps := &podStarts{created: map[string]time.Time{}, running: map[string]time.Time{}, nodes: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := h.c.Client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	allRunning := make(chan struct{})
	go ps.watch(w, n, allRunning)
	err = h.paced(n, func(i int) error {
		name, t0 := podName(i), time.Now()
		if _, err := h.c.Client.CoreV1().Pods(ns).Create(ctx, scalePod(ns, name, kind), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		ps.mu.Lock()
		ps.created[name] = t0
		ps.mu.Unlock()
		if i%500 == 499 {
			progress("%s: %d pods created, %d Running", kind, i+1, ps.count())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-allRunning:
	case <-time.After(timeout):
		t.Fatalf("%s: %d of %d pods Running after %v", kind, ps.count(), n, timeout)
	}
	return ps
}

func podName(i int) string { return fmt.Sprintf("p-%04d", i) }

// paced calls fn for 0 … n-1 at the run's pace (RUNLET_SCALE_QPS), four
// calls at a time, as clusterloader2 paces its creates and deletes; it
// returns the first error.
func (h *harness) paced(n int, fn func(i int) error) error {
	limiter := rate.NewLimiter(rate.Limit(h.cfg.createQPS), 1)
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		_ = limiter.Wait(context.Background())
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// watch records the first time each pod is seen Running, until n are.
func (ps *podStarts) watch(w watch.Interface, n int, allRunning chan<- struct{}) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		pod, ok := ev.Object.(*v1.Pod)
		if !ok || pod.Status.Phase != v1.PodRunning {
			continue
		}
		now := time.Now()
		ps.mu.Lock()
		if _, seen := ps.running[pod.Name]; !seen {
			ps.running[pod.Name], ps.nodes[pod.Name] = now, pod.Spec.NodeName
		}
		done := len(ps.running) == n
		ps.mu.Unlock()
		if done {
			close(allRunning)
			return
		}
	}
}

func (ps *podStarts) count() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.running)
}

// latencies are create → Running of every pod, sorted. A pod seen Running
// before its Create call returned on the harness counts from the call's start.
func (ps *podStarts) latencies() []time.Duration {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]time.Duration, 0, len(ps.running))
	for name, r := range ps.running {
		if c, ok := ps.created[name]; ok {
			out = append(out, r.Sub(c))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// perNode is the fewest and most pods a node of the set got.
func (ps *podStarts) perNode() (lo, hi int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	counts := map[string]int{}
	for _, n := range ps.nodes {
		counts[n]++
	}
	lo = -1
	for _, c := range counts {
		if lo < 0 || c < lo {
			lo = c
		}
		hi = max(hi, c)
	}
	return lo, hi
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
