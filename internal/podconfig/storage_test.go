package podconfig

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/runlet/runlet/internal/podtest"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

func mkPod(uid, name string, mods ...func(*v1.Pod)) *v1.Pod {
	p := podtest.New(name, podtest.Namespace("ns"), podtest.UID(uid),
		podtest.Labels(map[string]string{"app": name}), podtest.Annotations(map[string]string{"a": "1"}),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
	for _, m := range mods {
		m(p)
	}
	return p
}

func withImage(img string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Image = img }
}
func withAnn(k, v string) func(*v1.Pod) { return func(p *v1.Pod) { p.Annotations[k] = v } }
func withLabel(k, v string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Labels[k] = v }
}
func withPhase(ph v1.PodPhase) func(*v1.Pod) { return func(p *v1.Pod) { p.Status.Phase = ph } }
func deleted(grace int64) func(*v1.Pod) {
	return func(p *v1.Pod) {
		ts := metav1.NewTime(t0)
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &ts, &grace
	}
}

type recorded struct {
	updates chan PodUpdate
	rec     *record.FakeRecorder
	s       *storage
}

func newRecorded() *recorded {
	ch := make(chan PodUpdate, 100)
	rec := record.NewFakeRecorder(100)
	s := newStorage(ch, rec)
	s.now = func() time.Time { return t0 }
	return &recorded{updates: ch, rec: rec, s: s}
}

// merge applies a snapshot and returns what it emitted, as "OP:uid,uid".
func (r *recorded) merge(source string, pods ...*v1.Pod) ([]string, []PodUpdate) {
	r.s.merge(source, pods)
	var out []string
	var ups []PodUpdate
	for {
		select {
		case u := <-r.updates:
			ups = append(ups, u)
			uids := make([]string, 0, len(u.Pods))
			for _, p := range u.Pods {
				uids = append(uids, string(p.UID))
			}
			if u.Source != source {
				out = append(out, "wrong source "+u.Source)
			}
			out = append(out, u.Op.String()+":"+strings.Join(uids, ","))
		default:
			return out, ups
		}
	}
}

func TestStorageOps(t *testing.T) {
	a, b := mkPod("a", "pa"), mkPod("b", "pb")
	cases := []struct {
		name          string
		before, after []*v1.Pod
		want          []string
	}{
		{"add", []*v1.Pod{a}, []*v1.Pod{a, b}, []string{"ADD:b"}},
		{"identical snapshot", []*v1.Pod{a, b}, []*v1.Pod{a, b}, nil},
		{"spec change", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", withImage("img:2"))}, []string{"UPDATE:a"}},
		{"label change", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", withLabel("x", "y"))}, []string{"UPDATE:a"}},
		{"annotation change", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", withAnn("a", "2"))}, []string{"UPDATE:a"}},
		{"annotation added", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", withAnn("b", "1"))}, []string{"UPDATE:a"}},
		{"local annotations ignored", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa",
			withAnn(ConfigSourceAnnotation, "file"), withAnn(ConfigFirstSeenAnnotation, "x"),
			withAnn(ConfigMirrorAnnotation, "h"))}, nil},
		{"deletion timestamp", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", deleted(30))}, []string{"DELETE:a"}},
		{"deletion grace shortened", []*v1.Pod{mkPod("a", "pa", deleted(30))},
			[]*v1.Pod{mkPod("a", "pa", deleted(0))}, []string{"DELETE:a"}},
		{"status only", []*v1.Pod{a}, []*v1.Pod{mkPod("a", "pa", withPhase(v1.PodRunning))}, []string{"RECONCILE:a"}},
		{"removed", []*v1.Pod{a, b}, []*v1.Pod{b}, []string{"REMOVE:a"}},
		{"order", []*v1.Pod{mkPod("r", "pr"), mkPod("u", "pu"), mkPod("d", "pd"), mkPod("s", "ps")},
			[]*v1.Pod{mkPod("s", "ps", withPhase(v1.PodFailed)), mkPod("d", "pd", deleted(1)),
				mkPod("u", "pu", withImage("img:2")), mkPod("n", "pn")},
			[]string{"REMOVE:r", "ADD:n", "UPDATE:u", "DELETE:d", "RECONCILE:s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorded()
			if first, _ := r.merge(APISource, tc.before...); len(first) != 1 || !strings.HasPrefix(first[0], "ADD:") {
				t.Fatalf("first snapshot emitted %v; want one ADD", first)
			}
			got, _ := r.merge(APISource, tc.after...)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("emitted %v; want %v", got, tc.want)
			}
		})
	}
}

func TestStorageFirstSnapshot(t *testing.T) {
	r := newRecorded()
	// An empty first snapshot sends the empty ADD that marks the source seen.
	got, ups := r.merge(HTTPSource)
	if fmt.Sprint(got) != "[ADD:]" || ups[0].Source != HTTPSource {
		t.Errorf("emitted %v; want [ADD:] from http", got)
	}
	if got, _ = r.merge(HTTPSource); len(got) != 0 {
		t.Errorf("second empty snapshot emitted %v; want nothing", got)
	}
	// A first snapshot with pods sends only their ADD.
	got, _ = r.merge(FileSource, mkPod("a", "pa"))
	if fmt.Sprint(got) != "[ADD:a]" {
		t.Errorf("emitted %v; want [ADD:a]", got)
	}
	// A later empty snapshot of a seen source is a REMOVE, not a marker.
	got, _ = r.merge(FileSource)
	if fmt.Sprint(got) != "[REMOVE:a]" {
		t.Errorf("emitted %v; want [REMOVE:a]", got)
	}
}

func TestStorageAnnotations(t *testing.T) {
	r := newRecorded()
	_, ups := r.merge(FileSource, mkPod("a", "pa"))
	added := ups[0].Pods[0]
	seen := t0.Format(time.RFC3339Nano)
	if added.Annotations[ConfigSourceAnnotation] != FileSource || added.Annotations[ConfigFirstSeenAnnotation] != seen {
		t.Fatalf("ADD annotations = %v", added.Annotations)
	}
	r.s.now = func() time.Time { return t0.Add(time.Hour) }
	_, ups = r.merge(FileSource, mkPod("a", "pa", withImage("img:2"), withAnn("new", "v")))
	if len(ups) != 1 || ups[0].Op != UPDATE {
		t.Fatalf("updates = %+v", ups)
	}
	got := ups[0].Pods[0]
	if got.Annotations[ConfigFirstSeenAnnotation] != seen || got.Annotations[ConfigSourceAnnotation] != FileSource ||
		got.Annotations["new"] != "v" || got.Spec.Containers[0].Image != "img:2" {
		t.Errorf("UPDATE pod annotations = %v, image %s; want seen kept, source kept, new added",
			got.Annotations, got.Spec.Containers[0].Image)
	}
}

func TestStorageDuplicates(t *testing.T) {
	r := newRecorded()
	// Within one source: the second pod with the same namespace/name is dropped.
	got, _ := r.merge(APISource, mkPod("a", "same"), mkPod("b", "same"))
	if fmt.Sprint(got) != "[ADD:a]" {
		t.Errorf("emitted %v; want [ADD:a]", got)
	}
	// Across sources: the name is owned by the api source.
	got, _ = r.merge(FileSource, mkPod("c", "same"), mkPod("d", "other"))
	if fmt.Sprint(got) != "[ADD:d]" {
		t.Errorf("emitted %v; want [ADD:d]", got)
	}
	close(r.rec.Events)
	var events []string
	for e := range r.rec.Events {
		events = append(events, e)
	}
	if len(events) != 2 {
		t.Fatalf("events = %v; want 2 FailedValidation", events)
	}
	for _, e := range events {
		if !strings.HasPrefix(e, "Warning FailedValidation") || !strings.Contains(e, "same") {
			t.Errorf("event %q; want a FailedValidation warning naming the pod", e)
		}
	}
}

// TestStorageSeenWhileSending: a merge blocked on a full updates channel
// must not block seenAll, which the loop (the channel's only reader) calls.
func TestStorageSeenWhileSending(t *testing.T) {
	ch := make(chan PodUpdate) // nobody reads yet: the merge blocks on send
	s := newStorage(ch, nil)
	go s.merge(APISource, []*v1.Pod{mkPod("a", "pa")})
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		done := make(chan bool, 1)
		go func() { done <- s.seenAll(APISource) }()
		select {
		case seen = <-done:
		case <-deadline:
			t.Fatal("seenAll blocked behind a merge waiting for the updates reader")
		}
	}
	if u := <-ch; u.Op != ADD || len(u.Pods) != 1 {
		t.Errorf("update = %+v; want the ADD", u)
	}
}

// BenchmarkMergeOneChange: the api source's snapshot during a burst, 300
// pods of which one is new or changed per merge.
func BenchmarkMergeOneChange(b *testing.B) {
	r := newRecorded()
	pods := make([]*v1.Pod, 300)
	for i := range pods {
		pods[i] = mkPod(fmt.Sprint(i), fmt.Sprint("p", i))
	}
	r.merge(APISource, pods...)
	b.ResetTimer()
	for i := range b.N {
		n := i % len(pods)
		pods[n] = mkPod(fmt.Sprint(n), fmt.Sprint("p", n), withPhase(v1.PodRunning), withAnn("rev", fmt.Sprint(i)))
		r.merge(APISource, pods...)
	}
}
