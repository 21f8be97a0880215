package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

const labelPodUID = framework.LabelPodUID

// benchRunlet measures runlet on the podman service the raw figures were taken on.
func benchRunlet(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, r *results) {
	c := be.Client()
	level := cmp.Or(os.Getenv("RUNLET_BENCH_LOG_LEVEL"), "info")
	rl := framework.StartRunlet(t, framework.RunletOptions{
		PodmanSocket: c.Socket(), LogLevel: level, MaxPods: cfg.burst + cfg.n + 10,
	})
	if keep := os.Getenv("RUNLET_BENCH_LOG"); keep != "" { // runlet's log outlives the test's temp dir
		t.Cleanup(func() {
			if err := os.WriteFile(keep, []byte(rl.Log()), 0o644); err != nil {
				t.Log(err)
			}
		})
	}
	ns := framework.Namespace(t)
	api := framework.Get(t).Client.CoreV1().Pods(ns)
	w := watchPods(t, ns)
	progress("runlet %s (pid %d) is Ready; settling %v", rl.NodeName, rl.PID(), cfg.settle)
	time.Sleep(cfg.settle)
	r.rss0 = rssMiB(t, rl.PID())

	createE := func(name string) (time.Time, *v1.Pod, error) {
		p := framework.PodFor(rl.NodeName, ns, name, framework.Busybox("c", "sleep", "3600"))
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		t0 := time.Now()
		created, err := api.Create(ctx, p, metav1.CreateOptions{})
		return t0, created, err
	}
	create := func(name string) (time.Time, *v1.Pod) {
		t0, p, err := createE(name)
		if err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		return t0, p
	}
	wait := func(what, name string, timeout time.Duration) time.Time {
		at, ok := w.wait(what+"/"+name, timeout)
		if !ok {
			t.Fatalf("pod %s/%s not %s within %v\n%s", ns, name, what, timeout, framework.DescribePod(ns, name))
		}
		return at
	}
	// gone deletes pods (grace 0) and waits until the API and podman have forgotten them.
	gone := func(pods []*v1.Pod) {
		for _, p := range pods {
			deletePod(t, ctx, api, p.Name)
		}
		for _, p := range pods {
			wait("gone", p.Name, 2*time.Minute)
			waitClean(t, ctx, c, p, 2*time.Minute)
		}
	}

	_, warm := create("warm-up")
	wait("running", warm.Name, 2*time.Minute)

	progress("runlet: %d sequential pod starts", cfg.n)
	ops0, _ := scrapeOps(rl.MetricsURL())
	var seq []*v1.Pod
	for i := range cfg.n {
		t0, p := create(fmt.Sprintf("s-%d", i))
		r.start = append(r.start, wait("running", p.Name, 2*time.Minute).Sub(t0))
		r.bound = append(r.bound, wait("bound", p.Name, time.Second).Sub(t0))
		seq = append(seq, p)
	}
	if ops1, err := scrapeOps(rl.MetricsURL()); err == nil {
		r.notes = append(r.notes, opsReport("sequential starts", ops0, ops1, cfg.n))
	}

	progress("runlet: %d container exits (exit → API terminated)", len(seq))
	for _, p := range seq {
		got, err := api.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Status.ContainerStatuses) != 1 {
			t.Fatalf("pod %s: container statuses %+v", p.Name, got.Status.ContainerStatuses)
		}
		id := strings.TrimPrefix(got.Status.ContainerStatuses[0].ContainerID, "podman://")
		t0 := time.Now()
		if err := c.KillContainer(ctx, id, "SIGKILL"); err != nil {
			t.Fatal(err)
		}
		at := wait("exited", p.Name, time.Minute)
		r.kill = append(r.kill, at.Sub(t0))
		in, err := c.InspectContainer(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// The container's own end, as conmon recorded it: the kill call
		// returns only after podman has waited for it.
		r.exit = append(r.exit, at.Sub(in.State.FinishedAt))
	}
	gone(append(seq, warm))

	progress("runlet: %d deletes with the default grace period (container exits on SIGTERM → API object gone)", cfg.n)
	var graceful []*v1.Pod
	for i := range cfg.n {
		p := framework.PodFor(rl.NodeName, ns, fmt.Sprintf("g-%d", i),
			framework.Busybox("c", "sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`))
		p.Spec.TerminationGracePeriodSeconds = nil // the API's default, 30 s
		created, err := api.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create pod %s: %v", p.Name, err)
		}
		graceful = append(graceful, created)
	}
	for _, p := range graceful {
		wait("running", p.Name, 2*time.Minute)
	}
	for _, p := range graceful {
		t0 := time.Now()
		if err := api.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete pod %s: %v", p.Name, err)
		}
		r.graceDel = append(r.graceDel, wait("gone", p.Name, time.Minute).Sub(t0))
	}

	progress("runlet: burst of %d pods", cfg.burst)
	burst := make([]*v1.Pod, cfg.burst)
	t0 := time.Now()
	err := parallel(20, cfg.burst, func(i int) (err error) {
		_, burst[i], err = createE(fmt.Sprintf("b-%d", i))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, p := range burst {
		if at := wait("running", p.Name, 5*time.Minute); at.After(last) {
			last = at
		}
	}
	r.burst = float64(cfg.burst) / last.Sub(t0).Seconds()

	progress("runlet: %d pods at rest: settling %v, then CPU over %v", cfg.burst, cfg.settle, cfg.cpuWindow)
	time.Sleep(cfg.settle)
	r.rss100, r.svcRSS = rssMiB(t, rl.PID()), rssMiB(t, be.ServicePID())
	cpu0, svc0, wall0 := cpuTicks(t, rl.PID()), cpuTicks(t, be.ServicePID()), time.Now()
	time.Sleep(cfg.cpuWindow)
	const clkTck = 100 // USER_HZ on Linux
	perCent := func(ticks int64) float64 { return float64(ticks) / clkTck / time.Since(wall0).Seconds() * 100 }
	r.cpu, r.svcCPU = perCent(cpuTicks(t, rl.PID())-cpu0), perCent(cpuTicks(t, be.ServicePID())-svc0)

	n := min(cfg.n, len(burst))
	progress("runlet: %d deletes (grace 0 → API object gone and podman pod removed)", n)
	for _, p := range burst[:n] {
		t0 := time.Now()
		deletePod(t, ctx, api, p.Name)
		clean := waitClean(t, ctx, c, p, time.Minute).Sub(t0)
		inAPI := wait("gone", p.Name, time.Minute).Sub(t0)
		r.del = append(r.del, max(clean, inAPI))
	}
	gone(burst[n:])
	benchProbes(t, ctx, cfg, be, rl, ns, w, r)
}

func deletePod(t *testing.T, ctx context.Context, api corev1.PodInterface, name string) {
	zero := int64(0)
	if err := api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

// waitClean polls podman until no pod carries the pod's UID and returns when that was seen.
func waitClean(t *testing.T, ctx context.Context, c *podman.Client, p *v1.Pod, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for {
		ps, err := c.ListPods(ctx, labelPodUID+"="+string(p.UID))
		if err == nil && len(ps) == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("podman pod of %s still there after %v (err %v)", p.Name, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marks records when the watch first saw something ("running/<pod>", "exited/<pod>", …).
type marks struct {
	mu sync.Mutex
	at map[string]time.Time
	ch map[string]chan struct{}
}

func (m *marks) chanFor(key string) chan struct{} {
	c, ok := m.ch[key]
	if !ok {
		c = make(chan struct{})
		m.ch[key] = c
	}
	return c
}

func (m *marks) set(key string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.at[key]; !ok {
		m.at[key] = now
		close(m.chanFor(key))
	}
}

func (m *marks) wait(key string, timeout time.Duration) (time.Time, bool) {
	m.mu.Lock()
	c := m.chanFor(key)
	m.mu.Unlock()
	select {
	case <-c:
	case <-time.After(timeout):
		return time.Time{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at[key], true
}

// watchPods runs an informer on the namespace and marks, at the moment the watch delivers them, a
// pod bound to a node, Running, with a terminated container, and deleted.
func watchPods(t *testing.T, ns string) *marks {
	m := &marks{at: map[string]time.Time{}, ch: map[string]chan struct{}{}}
	observe := func(obj any) {
		now := time.Now()
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		if p.Spec.NodeName != "" {
			m.set("bound/"+p.Name, now)
		}
		if p.Status.Phase == v1.PodRunning {
			m.set("running/"+p.Name, now)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				m.set("ready/"+p.Name, now)
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Terminated != nil {
				m.set("exited/"+p.Name, now)
			}
		}
	}
	lw := cache.NewListWatchFromClient(framework.Get(t).Client.CoreV1().RESTClient(), "pods", ns, fields.Everything())
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &v1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    observe,
			UpdateFunc: func(_, obj any) { observe(obj) },
			DeleteFunc: func(obj any) {
				now := time.Now()
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				if p, ok := obj.(*v1.Pod); ok {
					m.set("gone/"+p.Name, now)
				}
			},
		},
	})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go ctrl.Run(stop)
	if !cache.WaitForCacheSync(stop, ctrl.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	return m
}

// rssMiB reads VmRSS from /proc/<pid>/status.
func rssMiB(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// cpuTicks is utime+stime of a process from /proc/<pid>/stat, in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}
