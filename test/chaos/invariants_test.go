package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// settleTimeout is how long the node has, after a fault ends, to run every pod the API holds as its
// spec says and to drop everything of the pods the API does not: past it, the pods that do not run
// are lost, and what is left leaked.
const settleTimeout = 6 * time.Minute

// checker holds the invariants. After each fault it polls the API and the host until they agree (the
// node settled) and fails the run at once on what may never happen, whether settled or not.
type checker struct {
	t       *testing.T
	n       *node
	backend string
	seed    uint64
	ns      string
	api     kubernetes.Interface
	seen    *uidSet
	// base is each pod as the last check found it settled: the restart counts and containers that
	// the next fault may change only as it is allowed to.
	base map[types.UID]podBase

	history []string // what was done so far, for the report of a breach
	byFault map[string]int
	slowest time.Duration
}

type podBase struct {
	phase    v1.PodPhase
	restarts map[string]int32
	running  map[string]string // the ID of each container that ran
}

func newChecker(t *testing.T, n *node, w *workload, seed uint64) *checker {
	return &checker{t: t, n: n, backend: n.backend, seed: seed, ns: w.ns, api: w.api, seen: watchUIDs(t, w.ns), byFault: map[string]int{}}
}

// uidSet is every pod UID the namespace ever had: a cgroup of one of them is the node's.
type uidSet struct {
	mu   sync.Mutex
	uids map[types.UID]string
}

func watchUIDs(t *testing.T, ns string) *uidSet {
	s := &uidSet{uids: map[types.UID]string{}}
	factory := informers.NewSharedInformerFactoryWithOptions(framework.Get(t).Client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if p, ok := obj.(*v1.Pod); ok {
			s.mu.Lock()
			s.uids[p.UID] = p.Name
			s.mu.Unlock()
		}
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	return s
}

// name is a pod's name, if the namespace ever had it.
func (s *uidSet) name(uid types.UID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.uids[uid]
	return n, ok
}

// look is one reading of the API and of the host.
type look struct {
	pods        []v1.Pod
	deployments []appsv1.Deployment
	nodeReady   bool
	host        *hostView
}

func (c *checker) look() (*look, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*apiTimeout)
	defer cancel()
	pods, err := c.api.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	deps, err := c.api.AppsV1().Deployments(c.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nd, err := c.api.CoreV1().Nodes().Get(ctx, c.n.rl.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	h, err := c.n.view()
	if err != nil {
		return nil, fmt.Errorf("the backend: %w", err)
	}
	return &look{pods: pods.Items, deployments: deps.Items, nodeReady: framework.NodeReady(nd), host: h}, nil
}

// settle waits until the node settled after f (nil: the start), checking on the way what may never
// happen, then what must hold once settled, and keeps the pods' state as the next fault's base.
func (c *checker) settle(f *fault) {
	t0 := time.Now()
	l := c.wait(f, faultName(f), "the node did not settle")
	if b := c.restarts(l, f); len(b) > 0 {
		c.breach(faultName(f), "restarts that the fault did not cause, or that it caused and were not counted", b)
	}
	took := time.Since(t0)
	c.slowest = max(c.slowest, took)
	if f != nil {
		c.byFault[f.name]++
	}
	c.base = baseOf(l.pods)
	progress(c.backend, "checked after %s: settled in %v; %s", faultName(f), took.Round(time.Second), c.describe(l))
}

// empty checks, once every pod is deleted, that the node holds nothing of them.
func (c *checker) empty() {
	l := c.wait(nil, "every pod was deleted", "the node kept what its deleted pods had")
	progress(c.backend, "checked with every pod deleted: %s", c.describe(l))
}

// wait polls until nothing is pending, and fails the run on what may never happen, or at the
// settle timeout with what still is pending; after says what the breach came after.
func (c *checker) wait(f *fault, after, late string) *look {
	t0, told := time.Now(), time.Now()
	for {
		l, err := c.look()
		pending := []string{fmt.Sprint(err)}
		if err == nil {
			if b := c.never(l, f); len(b) > 0 {
				c.breach(after, "what may never happen happened", b)
			}
			if pending = c.pending(l, f); len(pending) == 0 {
				return l
			}
		}
		if time.Since(t0) > settleTimeout {
			c.breach(after, fmt.Sprintf("%s within %v", late, settleTimeout), pending)
		}
		if time.Since(told) > 30*time.Second {
			told = time.Now()
			progress(c.backend, "settling for %v: %d things pending, such as: %s", time.Since(t0).Round(time.Second), len(pending),
				strings.Join(pending[:min(3, len(pending))], "; "))
		}
		time.Sleep(3 * time.Second)
	}
}

// offline waits, after a reboot with the apiserver down, until every pod of the checkpoint under
// rootDir that should run runs again (each container running in the backend), and says how many.
// Jobs are left out: one may end, or fail under Never, before it is seen.
func (c *checker) offline(rootDir string) int {
	files, _ := filepath.Glob(filepath.Join(rootDir, "checkpoint", "pods", "*.json"))
	var want []*v1.Pod
	for _, f := range files {
		p, ok := framework.CheckpointedPod(rootDir, types.UID(strings.TrimSuffix(filepath.Base(f), ".json")))
		if ok && p.DeletionTimestamp == nil && !terminal(p.Status.Phase) && !completes(p.Labels[kindLabel]) {
			want = append(want, p)
		}
	}
	t0 := time.Now()
	for {
		h, err := c.n.view()
		missing := []string{fmt.Sprint(err)}
		if err == nil {
			if missing = notRunning(h, want); len(missing) == 0 {
				return len(want)
			}
		}
		if time.Since(t0) > settleTimeout {
			c.breach("reboot-offline", fmt.Sprintf("checkpointed pods not running offline %v after runlet's start", settleTimeout), missing)
		}
		time.Sleep(2 * time.Second)
	}
}

// notRunning lists the containers of pods that do not run in the backend.
func notRunning(h *hostView, pods []*v1.Pod) []string {
	running := map[string]bool{}
	for _, ct := range h.containers {
		if ct.running {
			running[string(ct.pod)+"/"+ct.name] = true
		}
	}
	var out []string
	for _, p := range pods {
		for _, ct := range p.Spec.Containers {
			if !running[string(p.UID)+"/"+ct.Name] {
				out = append(out, fmt.Sprintf("pod %s container %s does not run", p.Name, ct.Name))
			}
		}
	}
	return out
}

// breach fails the run with the seed, the breach, what led to it and what the API and the backend
// hold of each pod.
func (c *checker) breach(after, what string, details []string) {
	c.t.Fatalf("seed %d, backend %s: after %s, %s:\n  %s\nwhat happened so far:\n  %s\nthe pods in the API and the backend:\n  %s\nreplay: RUNLET_CHAOS_SEED=%d RUNLET_CHAOS_BACKENDS=%s",
		c.seed, c.backend, after, what, strings.Join(details, "\n  "), strings.Join(c.history, "\n  "), strings.Join(c.dump(), "\n  "), c.seed, c.backend)
}

// dump shows each pod as the API and the backend hold it, for the report of a breach.
func (c *checker) dump() []string {
	l, err := c.look()
	if err != nil {
		return []string{err.Error()}
	}
	byPod := map[types.UID][]string{}
	for _, sb := range l.host.sandboxes {
		byPod[sb.pod] = append(byPod[sb.pod], fmt.Sprintf("sandbox %s running=%v", short(sb.id), sb.running))
	}
	for _, ct := range l.host.containers {
		byPod[ct.pod] = append(byPod[ct.pod], fmt.Sprintf("container %s %s attempt=%s running=%v created %s", ct.name, short(ct.id), ct.attempt,
			ct.running, ct.created.Format("15:04:05")))
	}
	var out []string
	for _, p := range l.pods {
		out = append(out, fmt.Sprintf("%s %s %s: %s; backend: %s", p.Name, p.UID, p.Status.Phase, states(&p), strings.Join(byPod[p.UID], ", ")))
		delete(byPod, p.UID)
	}
	for uid, objs := range byPod {
		out = append(out, fmt.Sprintf("%s (not in the API): %s", c.podName(uid), strings.Join(objs, ", ")))
	}
	sort.Strings(out)
	return out
}

// note adds a line to the history that a breach reports.
func (c *checker) note(format string, args ...any) {
	c.history = append(c.history, time.Now().Format("15:04:05 ")+fmt.Sprintf(format, args...))
}

func baseOf(pods []v1.Pod) map[types.UID]podBase {
	out := map[types.UID]podBase{}
	for _, p := range pods {
		b := podBase{phase: p.Status.Phase, restarts: map[string]int32{}, running: map[string]string{}}
		for _, cs := range p.Status.ContainerStatuses {
			b.restarts[cs.Name] = cs.RestartCount
			if cs.State.Running != nil {
				b.running[cs.Name] = cs.ContainerID
			}
		}
		out[p.UID] = b
	}
	return out
}

func terminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// summary is the run's checks, by fault.
func (c *checker) summary() string {
	var parts []string
	total := 0
	for name, n := range c.byFault {
		parts = append(parts, fmt.Sprintf("%s %d", name, n))
		total += n
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d faults, each followed by the checks (%s); slowest settle %v", total, strings.Join(parts, ", "), c.slowest.Round(time.Second))
}
