// Package soak is `make soak`: one runlet node creates and deletes 500 pods
// in waves against the real control plane and podman, and its goroutines,
// open file descriptors and resident memory must come back once the pods are
// gone. It is a test binary that does nothing unless RUNLET_SOAK=1, so
// `go test ./...` skips it at once.
package soak

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Tolerances: what runlet may hold more, at rest after the last pod is
// gone, than at rest before the first. Goroutines and descriptors come
// back to where they were, give or take connections the clients keep in
// their pools. The heap keeps what client-go's event correlator caches
// (three LRUs of 4096 events, as on the kubelet; some 10 MiB once full),
// and RSS more, as Go returns freed pages to the system only slowly; a
// leak of 50 KiB a pod would still show.
const (
	goroutineTolerance = 10
	fdTolerance        = 5
	heapTolerance      = 24 << 20
	rssTolerance       = 64 << 20
)

func TestMain(m *testing.M) {
	if os.Getenv("RUNLET_SOAK") != "1" {
		os.Exit(m.Run())
	}
	framework.Main(m)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestSoak(t *testing.T) {
	if os.Getenv("RUNLET_SOAK") != "1" {
		t.Skip("the soak runs with RUNLET_SOAK=1 (make soak)")
	}
	total, wave := envInt("RUNLET_SOAK_PODS", 500), envInt("RUNLET_SOAK_WAVE", 50)
	rl := framework.StartRunlet(t, framework.RunletOptions{LogLevel: "info"})
	ns := framework.Namespace(t)
	s := &soak{t: t, rl: rl, ns: ns}
	s.createConfigMap()

	fresh := s.atRest("before the first pod")
	// One pod first brings up what runlet keeps per namespace for a while
	// (the services informers of the pod's namespace and of "default", for
	// the service links, dropped 10 minutes after their last use): the
	// figures after the soak are compared with those after this pod.
	s.deleteWave(s.waitSettled(s.createWave(-1, 1)))
	before := s.atRest("after one pod came and went")
	stacksBefore, heapBefore := s.goroutineStacks(), s.heapSites()
	for i := 0; i*wave < total; i++ {
		n := min(wave, total-i*wave)
		t0 := time.Now()
		pods := s.waitSettled(s.createWave(i, n))
		up := time.Since(t0)
		s.deleteWave(pods)
		r := s.read()
		t.Logf("wave %2d: %d pods settled in %v, all gone %v later; runlet now: %s", i+1, n,
			up.Round(time.Second), (time.Since(t0) - up).Round(time.Second), r)
	}
	after := s.atRest(fmt.Sprintf("after %d pods came and went", total))

	if grown := grownStacks(stacksBefore, s.goroutineStacks()); grown != "" {
		t.Logf("goroutines that are more numerous than before:\n%s", grown)
	}
	heapAfter := s.heapSites()
	t.Logf("heap in use by the profile's count: %.1f MiB before, %.1f MiB after; grown most, by allocation site:\n%s",
		mib(sum(heapBefore)), mib(sum(heapAfter)), grownHeap(heapBefore, heapAfter))
	t.Logf("runlet at start:              %s", fresh)
	t.Logf("runlet before (after 1 pod):  %s", before)
	t.Logf("runlet after %d pods:         %s", total, after)
	t.Logf("tolerances: goroutines +%d, open fds +%d, heap in use +%d MiB, RSS +%d MiB",
		goroutineTolerance, fdTolerance, heapTolerance>>20, rssTolerance>>20)
	if d := after.goroutines - before.goroutines; d > goroutineTolerance {
		t.Errorf("goroutines grew by %d (from %d to %d)", d, before.goroutines, after.goroutines)
	}
	if d := after.fds - before.fds; d > fdTolerance {
		t.Errorf("open fds grew by %d (from %d to %d)", d, before.fds, after.fds)
	}
	if d := after.heap - before.heap; d > heapTolerance {
		t.Errorf("heap in use grew by %.1f MiB (from %.1f to %.1f MiB)", mib(d), mib(before.heap), mib(after.heap))
	}
	if d := after.rss - before.rss; d > rssTolerance {
		t.Errorf("RSS grew by %d MiB (from %d to %d MiB)", d>>20, before.rss>>20, after.rss>>20)
	}
	leases, attached := framework.KubenetLeases(rl.RootDir, rl.NodeName), framework.NetworkAttachments(rl.RootDir)
	t.Logf("pod network after %d pods: %d IPAM leases, %d attachments", total, len(leases), len(attached))
	if len(leases) > 0 || len(attached) > 0 {
		t.Errorf("the pod network still holds %d IPAM leases %v and %d attachments %v", len(leases), leases, len(attached), attached)
	}
}

type soak struct {
	t  *testing.T
	rl *framework.Runlet
	ns string
}

// reading is runlet's footprint from its own /metrics; heap is the Go
// heap in use, which tells live memory from pages Go did not return yet.
type reading struct {
	goroutines, fds, rss, heap int64
}

func (r reading) String() string {
	return fmt.Sprintf("%d goroutines, %d open fds, RSS %.1f MiB (heap in use %.1f MiB)", r.goroutines, r.fds, mib(r.rss), mib(r.heap))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func (s *soak) read() reading {
	s.t.Helper()
	families := s.scrape()
	value := func(name string) int64 {
		f := families[name]
		if f == nil || len(f.GetMetric()) == 0 {
			s.t.Fatalf("runlet's /metrics has no %s", name)
		}
		return int64(f.GetMetric()[0].GetGauge().GetValue())
	}
	return reading{goroutines: value("go_goroutines"), fds: value("process_open_fds"), rss: value("process_resident_memory_bytes"),
		heap: value("go_memstats_heap_inuse_bytes")}
}

// collectGarbage has runlet collect its garbage (a heap profile with gc=1),
// so that the heap in use is what it holds, not what it has yet to free.
func (s *soak) collectGarbage() {
	s.t.Helper()
	if _, err := s.rl.KubeletGet("/debug/pprof/heap?gc=1"); err != nil {
		s.t.Fatalf("heap profile: %v", err)
	}
}

func (s *soak) scrape() map[string]*dto.MetricFamily {
	s.t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(s.rl.MetricsURL() + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return families
}

// backendCalls counts runlet's calls to its backend so far, by operation.
func (s *soak) backendCalls() map[string]uint64 {
	out := map[string]uint64{}
	if f := s.scrape()["runlet_runtime_operations_total"]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					out[l.GetValue()] += uint64(m.GetCounter().GetValue())
				}
			}
		}
	}
	return out
}

// atRest reads runlet's footprint once it stopped changing: the lowest of
// a minute of readings, taken after the last status went out and the
// housekeeping dropped the pods' leftovers.
func (s *soak) atRest(what string) reading {
	s.t.Helper()
	time.Sleep(15 * time.Second)
	s.collectGarbage()
	low, reqs := s.read(), s.backendCalls()
	for i := 0; i < 12; i++ {
		time.Sleep(5 * time.Second)
		s.collectGarbage()
		r := s.read()
		low = reading{goroutines: min(low.goroutines, r.goroutines), fds: min(low.fds, r.fds), rss: min(low.rss, r.rss), heap: min(low.heap, r.heap)}
	}
	var calls []string
	for op, n := range s.backendCalls() {
		if d := n - reqs[op]; d > 0 {
			calls = append(calls, fmt.Sprintf("%s %d", op, d))
		}
	}
	sort.Strings(calls)
	s.t.Logf("at rest %s: %s; backend calls in that minute: %v", what, low, calls)
	return low
}

const configMapName = "soak-config"

func (s *soak) createConfigMap() {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName, Namespace: s.ns}, Data: map[string]string{"key": "value"}}
	if _, err := framework.Get(s.t).Client.CoreV1().ConfigMaps(s.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		s.t.Fatal(err)
	}
}

// kind is one sort of pod of a wave, and how it settles.
type kind struct {
	name    string
	shape   func(p *v1.Pod)
	settled func(p *v1.Pod) bool
}

func running(p *v1.Pod) bool { return p.Status.Phase == v1.PodRunning }

func waiting(reason string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == reason {
				return true
			}
		}
		return false
	}
}

// kinds mix what a node sees: pods that stop on SIGTERM and pods that wait
// for the end of the default 30 s grace period, pods with a configMap volume
// and env (watches come and go), pods that complete, and pods that never
// start for a missing image or configMap.
var kinds = []kind{
	{"stops on TERM", func(p *v1.Pod) {
		p.Spec.Containers[0].Command = []string{"sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`}
	}, running},
	{"ignores TERM", func(*v1.Pod) {}, running},
	{"configMap", func(p *v1.Pod) {
		p.Spec.Containers[0].Command = []string{"sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`}
		p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: configMapName}}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
		p.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: configMapName}}}}
	}, running},
	{"completes", func(p *v1.Pod) {
		p.Spec.Containers[0].Command, p.Spec.RestartPolicy = []string{"true"}, v1.RestartPolicyNever
	}, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodSucceeded }},
	{"missing image", func(p *v1.Pod) {
		p.Spec.Containers[0].Image = "localhost/runlet/soak-no-such-image:1"
	}, func(p *v1.Pod) bool { return waiting("ErrImagePull")(p) || waiting("ImagePullBackOff")(p) }},
	{"missing configMap", func(p *v1.Pod) {
		p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "soak-no-such-config"}, Key: "k"}}}}
	}, waiting("CreateContainerConfigError")},
}

// kindOf spreads a wave's pods: mostly running ones, a few of each other.
func kindOf(i int) kind {
	switch i % 10 {
	case 0:
		return kinds[1]
	case 1, 2:
		return kinds[2]
	case 3:
		return kinds[3]
	case 4:
		return kinds[4]
	case 5:
		return kinds[5]
	}
	return kinds[0]
}

func (s *soak) createWave(w, n int) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		p := framework.PodFor(s.rl.NodeName, s.ns, fmt.Sprintf("w%02d-p%03d", w+1, i), framework.Busybox("main", "sleep", "3600"))
		p.Spec.TerminationGracePeriodSeconds = nil // the default a user gets: 30 s
		kindOf(i).shape(p)
		out = append(out, framework.CreatePod(s.t, p))
	}
	return out
}

func (s *soak) waitSettled(pods []*v1.Pod) []*v1.Pod {
	s.t.Helper()
	for i, p := range pods {
		framework.WaitForPod(s.t, s.ns, p.Name, 5*time.Minute, kindOf(i).settled)
	}
	return pods
}

// deleteWave deletes the pods with their grace period and waits until the
// API and podman hold nothing of them.
func (s *soak) deleteWave(pods []*v1.Pod) {
	s.t.Helper()
	for _, p := range pods {
		framework.DeletePod(s.t, s.ns, p.Name, nil)
	}
	for _, p := range pods {
		framework.WaitForPodGone(s.t, s.ns, p.Name, 3*time.Minute)
	}
	framework.Eventually(s.t, 2*time.Minute, "no podman object of the wave left", func() (bool, error) {
		var left []string
		for _, p := range pods {
			if n := len(framework.PodContainers(s.t, types.UID(p.UID))); n > 0 {
				left = append(left, p.Name)
			}
		}
		if len(left) > 0 {
			return false, fmt.Errorf("containers left of %s", strings.Join(left, ", "))
		}
		return true, nil
	})
}

// goroutineStacks counts runlet's goroutines by stack, from its kubelet
// API's /debug/pprof.
func (s *soak) goroutineStacks() map[string]int {
	s.t.Helper()
	out, err := s.rl.KubeletGet("/debug/pprof/goroutine?debug=1")
	if err != nil {
		s.t.Fatalf("goroutine dump: %v", err)
	}
	stacks := map[string]int{}
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		var n int
		if _, err := fmt.Sscanf(lines[0], "%d @", &n); err != nil {
			continue // the header
		}
		var frames []string
		for _, l := range lines[1:] {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "#" {
				frames = append(frames, f[2])
			}
		}
		stacks[strings.Join(frames, "\n\t")] += n
	}
	return stacks
}

// grownStacks lists the stacks with more goroutines after than before.
func grownStacks(before, after map[string]int) string {
	var b strings.Builder
	for stack, n := range after {
		if d := n - before[stack]; d > 0 {
			fmt.Fprintf(&b, "+%d (%d -> %d):\n\t%s\n", d, before[stack], n, stack)
		}
	}
	return b.String()
}

// heapSites sums runlet's heap in use by allocation site (the first frames
// outside the runtime), from /debug/pprof/heap after a garbage collection.
// The text profile holds the sampled allocations; each is scaled by the
// odds of sampling an object of its size, as pprof does.
func (s *soak) heapSites() map[string]int64 {
	s.t.Helper()
	out, err := s.rl.KubeletGet("/debug/pprof/heap?gc=1&debug=1")
	if err != nil {
		s.t.Fatalf("heap profile: %v", err)
	}
	sites := map[string]int64{}
	var rate float64 // the sampling rate: the header says heap/<2*rate>
	var site []string
	var bytes int64
	flush := func() {
		if site != nil {
			sites[strings.Join(site, " < ")] += bytes
		}
		site = nil
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "# runtime.MemStats") {
			break
		}
		if _, after, ok := strings.Cut(l, "@ heap/"); ok && strings.HasPrefix(l, "heap profile:") {
			var twice float64
			fmt.Sscanf(after, "%g", &twice)
			rate = twice / 2
			continue
		}
		var objects, b int64
		if _, err := fmt.Sscanf(l, "%d: %d [", &objects, &b); err == nil { // a record: "in use objects: bytes [...] @ ..."
			flush()
			site, bytes = []string{}, b
			if objects > 0 && rate > 0 {
				bytes = int64(float64(b) / (1 - math.Exp(-float64(b)/float64(objects)/rate)))
			}
			continue
		}
		f := strings.Fields(l)
		if site == nil || len(f) < 3 || f[0] != "#" || !strings.HasPrefix(f[1], "0x") || strings.HasPrefix(f[2], "runtime.") || len(site) == 4 {
			continue
		}
		site = append(site, f[2])
	}
	flush()
	return sites
}

func sum(sites map[string]int64) int64 {
	var n int64
	for _, b := range sites {
		n += b
	}
	return n
}

// grownHeap lists the eight allocation sites whose heap in use grew most
// (by 64 KiB at least).
func grownHeap(before, after map[string]int64) string {
	type growth struct {
		site string
		d    int64
	}
	var gs []growth
	for site, n := range after {
		if d := n - before[site]; d >= 64<<10 {
			gs = append(gs, growth{site, d})
		}
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].d > gs[j].d })
	var b strings.Builder
	for i, g := range gs {
		if i == 8 {
			break
		}
		fmt.Fprintf(&b, "  +%.1f MiB  %s\n", mib(g.d), g.site)
	}
	return b.String()
}
