package podconfig

import (
	"reflect"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
)

// storage keeps pods[source][uid] and turns each snapshot into the minimal
// set of updates, emitted in the kubelet's order.
type storage struct {
	// sendMu serialises merges so that each one's updates leave in order; mu
	// guards the maps only and is never held while sending, so seenAll (read
	// by the updates' consumer) cannot wait on a merge blocked on a full
	// channel, as the kubelet's updateLock/podLock split ensures.
	sendMu sync.Mutex
	mu     sync.Mutex
	pods   map[string]map[types.UID]*v1.Pod
	// sent holds, per source, the very objects its last snapshot carried.
	// A source never changes a pod it has sent (see Config.Channel), so
	// one sent again is unchanged and skips the copy and the compare: a
	// snapshot of N pods with one change costs one compare, not N, which
	// a burst of pods otherwise pays N times over.
	sent    map[string]map[types.UID]*v1.Pod
	seen    sets.Set[string]
	updates chan<- PodUpdate
	rec     record.EventRecorder
	now     func() time.Time
}

func newStorage(updates chan<- PodUpdate, rec record.EventRecorder) *storage {
	return &storage{
		pods:    map[string]map[types.UID]*v1.Pod{},
		sent:    map[string]map[types.UID]*v1.Pod{},
		seen:    sets.New[string](),
		updates: updates,
		rec:     rec,
		now:     time.Now,
	}
}

// merge diffs a full snapshot of source against what it sent before and
// emits REMOVE, ADD, UPDATE, DELETE, the first-seen marker, then RECONCILE.
func (s *storage) merge(source string, snapshot []*v1.Pod) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	firstSet := !s.seen.Has(source)
	s.seen.Insert(source)
	d := s.diff(source, snapshot)
	s.mu.Unlock()
	for _, u := range []PodUpdate{
		{Op: REMOVE, Pods: d.removes}, {Op: ADD, Pods: d.adds},
		{Op: UPDATE, Pods: d.updates}, {Op: DELETE, Pods: d.deletes},
	} {
		if len(u.Pods) > 0 {
			u.Source = source
			s.updates <- u
		}
	}
	if firstSet && len(d.adds)+len(d.updates)+len(d.deletes) == 0 {
		// An empty ADD tells the loop this source has been seen.
		s.updates <- PodUpdate{Op: ADD, Source: source}
	}
	if len(d.reconciles) > 0 {
		s.updates <- PodUpdate{Op: RECONCILE, Pods: d.reconciles, Source: source}
	}
}

type diffResult struct {
	adds, updates, deletes, removes, reconciles []*v1.Pod
}

func (s *storage) diff(source string, snapshot []*v1.Pod) diffResult {
	var d diffResult
	old, before := s.pods[source], s.sent[source]
	cur := make(map[types.UID]*v1.Pod, len(snapshot))
	sent := make(map[types.UID]*v1.Pod, len(snapshot))
	for _, ref := range s.filterDuplicates(source, snapshot) {
		sent[ref.UID] = ref
		if existing, found := old[ref.UID]; found && before[ref.UID] == ref {
			cur[ref.UID] = existing
			continue
		}
		ref = ref.DeepCopy()
		if ref.Annotations == nil {
			ref.Annotations = map[string]string{}
		}
		ref.Annotations[ConfigSourceAnnotation] = source
		existing, found := old[ref.UID]
		if !found {
			ref.Annotations[ConfigFirstSeenAnnotation] = s.now().UTC().Format(time.RFC3339Nano)
			cur[ref.UID] = ref
			d.adds = append(d.adds, ref.DeepCopy())
			continue
		}
		cur[ref.UID] = existing
		switch checkAndUpdatePod(existing, ref) {
		case changeUpdate:
			d.updates = append(d.updates, existing.DeepCopy())
		case changeDelete:
			d.deletes = append(d.deletes, existing.DeepCopy())
		case changeReconcile:
			d.reconciles = append(d.reconciles, existing.DeepCopy())
		}
	}
	for uid, existing := range old {
		if _, ok := cur[uid]; !ok {
			d.removes = append(d.removes, existing.DeepCopy())
		}
	}
	s.pods[source], s.sent[source] = cur, sent
	return d
}

// filterDuplicates drops a second pod with the same namespace/name within a
// source, and a pod whose namespace/name another source already owns.
func (s *storage) filterDuplicates(source string, pods []*v1.Pod) []*v1.Pod {
	owned := sets.New[string]()
	for src, m := range s.pods {
		if src == source {
			continue
		}
		for _, p := range m {
			owned.Insert(fullName(p))
		}
	}
	names := sets.New[string]()
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		name := fullName(p)
		if names.Has(name) || owned.Has(name) {
			if s.rec != nil {
				s.rec.Eventf(p, v1.EventTypeWarning, "FailedValidation",
					"Error validating pod %s from %s due to duplicate pod name %q, ignoring", name, source, p.Name)
			}
			continue
		}
		names.Insert(name)
		out = append(out, p)
	}
	return out
}

func fullName(p *v1.Pod) string { return p.Name + "_" + p.Namespace }

// seenAll reports whether every listed source has sent at least one snapshot.
func (s *storage) seenAll(sources ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen.HasAll(sources...)
}

type change int

const (
	changeNone change = iota
	changeUpdate
	changeDelete
	changeReconcile
)

// checkAndUpdatePod folds ref into existing and says what kind of change it was.
func checkAndUpdatePod(existing, ref *v1.Pod) change {
	if !podsDifferSemantically(existing, ref) {
		if !reflect.DeepEqual(existing.Status, ref.Status) {
			existing.Status = ref.Status
			return changeReconcile
		}
		return changeNone
	}
	ref.Annotations[ConfigFirstSeenAnnotation] = existing.Annotations[ConfigFirstSeenAnnotation]
	existing.Spec = ref.Spec
	existing.Labels = ref.Labels
	existing.DeletionTimestamp = ref.DeletionTimestamp
	existing.DeletionGracePeriodSeconds = ref.DeletionGracePeriodSeconds
	existing.Generation = ref.Generation
	existing.Status = ref.Status
	updateAnnotations(existing, ref)
	if ref.DeletionTimestamp != nil {
		return changeDelete
	}
	return changeUpdate
}

var localAnnotations = []string{ConfigSourceAnnotation, ConfigMirrorAnnotation, ConfigFirstSeenAnnotation}

func isLocalAnnotation(k string) bool {
	for _, l := range localAnnotations {
		if k == l {
			return true
		}
	}
	return false
}

// annotationsEqual compares two annotation maps, ignoring the kubelet's own.
func annotationsEqual(a, b map[string]string) bool {
	count := func(m map[string]string) int {
		n := 0
		for k := range m {
			if !isLocalAnnotation(k) {
				n++
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, v := range b {
		if isLocalAnnotation(k) {
			continue
		}
		if av, ok := a[k]; !ok || av != v {
			return false
		}
	}
	return true
}

func updateAnnotations(existing, ref *v1.Pod) {
	ann := make(map[string]string, len(ref.Annotations)+len(localAnnotations))
	for k, v := range ref.Annotations {
		ann[k] = v
	}
	for _, k := range localAnnotations {
		if v, ok := existing.Annotations[k]; ok {
			ann[k] = v
		}
	}
	existing.Annotations = ann
}

func podsDifferSemantically(existing, ref *v1.Pod) bool {
	return !(reflect.DeepEqual(existing.Spec, ref.Spec) &&
		reflect.DeepEqual(existing.Labels, ref.Labels) &&
		reflect.DeepEqual(existing.DeletionTimestamp, ref.DeletionTimestamp) &&
		reflect.DeepEqual(existing.DeletionGracePeriodSeconds, ref.DeletionGracePeriodSeconds) &&
		annotationsEqual(existing.Annotations, ref.Annotations))
}
