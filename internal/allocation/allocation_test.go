package allocation

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runlet/runlet/internal/podtest"
)

func pod(cpu string) *v1.Pod {
	p := podtest.New("", podtest.UID("uid"), podtest.Containers(v1.Container{
		Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}))
	p.Generation = 1
	return p
}

func cpuOf(p *v1.Pod) string {
	q := p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]
	return q.String()
}

func TestAllocationSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	m, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Admit(pod("100m")); err != nil {
		t.Fatal(err)
	}
	resized := pod("200m")
	if !m.ResizeRequested(resized) {
		t.Fatal("a spec asking for more is not a resize request")
	}
	if got := cpuOf(m.Allocated(resized)); got != "100m" {
		t.Errorf("allocated cpu before the resize is accepted = %s, want 100m", got)
	}
	if err := m.SetActuated("uid", "c", pod("100m").Spec.Containers[0].Resources); err != nil {
		t.Fatal(err)
	}
	if err := m.SetAllocated(resized); err != nil {
		t.Fatal(err)
	}

	m2, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Admit(pod("100m")); err != nil { // the pod seen again after the restart
		t.Fatal(err)
	}
	if got := cpuOf(m2.Allocated(pod("100m"))); got != "200m" {
		t.Errorf("allocation after a restart = %s, want the accepted 200m", got)
	}
	act, ok := m2.Actuated("uid", "c")
	if q := act.Requests[v1.ResourceCPU]; !ok || q.String() != "100m" {
		t.Errorf("actuated after a restart = %v %v, want 100m", act, ok)
	}
	if err := m2.RemoveOrphans(func(types.UID) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if m2.Has("uid") {
		t.Error("an orphan's allocation was kept")
	}
}

func TestUnreadableCheckpointIsSetAside(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CheckpointFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := New(dir)
	if err == nil {
		t.Error("an unreadable checkpoint gave no error")
	}
	if m == nil || m.Has("uid") {
		t.Fatal("the manager does not start empty")
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile+".bad")); err != nil {
		t.Errorf("the unreadable checkpoint was not set aside: %v", err)
	}
}

func TestResizeConditions(t *testing.T) {
	m, _ := New(t.TempDir())
	if !m.SetPending("uid", v1.PodReasonDeferred, "no room", 2) {
		t.Error("a new pending condition is no change")
	}
	if m.SetPending("uid", v1.PodReasonDeferred, "no room", 2) {
		t.Error("the same pending condition again is a change")
	}
	m.ClearPending("uid")
	m.SetInProgress("uid", "", "", 2, true)
	m.SetInProgress("uid", v1.PodReasonError, "cannot decrease", 3, false)
	conds := m.Conditions("uid")
	if len(conds) != 1 || conds[0].Type != v1.PodResizeInProgress || conds[0].ObservedGeneration != 2 || conds[0].Reason != v1.PodReasonError {
		t.Errorf("conditions = %+v; want InProgress, Error, generation 2 (an error keeps the resize's generation)", conds)
	}
	if gen, ok := m.ClearInProgress("uid"); !ok || gen != 2 {
		t.Errorf("ClearInProgress = %d %v, want 2 true", gen, ok)
	}
	if len(m.Conditions("uid")) != 0 {
		t.Error("conditions left after clearing")
	}
}

// withPodCPU is pod(cpu) with pod-level resources asking for podCPU.
func withPodCPU(cpu, podCPU string) *v1.Pod {
	p := pod(cpu)
	q := v1.ResourceList{v1.ResourceCPU: resource.MustParse(podCPU)}
	p.Spec.Resources = &v1.ResourceRequirements{Requests: q, Limits: q}
	return p
}

// TestPodLevelResources: the pod's own resources are allocated, resized and
// actuated as a container's are, and survive a restart.
func TestPodLevelResources(t *testing.T) {
	dir := t.TempDir()
	m, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Admit(withPodCPU("100m", "1")); err != nil {
		t.Fatal(err)
	}
	if m.ResizeRequested(withPodCPU("100m", "1")) {
		t.Error("the admitted spec is a resize request")
	}
	resized := withPodCPU("100m", "2")
	if !m.ResizeRequested(resized) {
		t.Fatal("a pod-level change is not a resize request")
	}
	if got := m.Allocated(resized).Spec.Resources.Limits[v1.ResourceCPU]; got.String() != "1" {
		t.Errorf("allocated pod cpu before the resize is accepted = %s, want 1", got.String())
	}
	if err := m.SetAllocated(resized); err != nil {
		t.Fatal(err)
	}
	act, ok := m.Actuated("uid", PodLevel)
	if q := act.Limits[v1.ResourceCPU]; !ok || q.String() != "1" {
		t.Errorf("actuated pod-level after the allocation moved = %v %v, want the old 1", act, ok)
	}
	m2, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := m2.Allocated(withPodCPU("100m", "1")).Spec.Resources.Limits[v1.ResourceCPU]; got.String() != "2" {
		t.Errorf("pod-level allocation after a restart = %s, want the accepted 2", got.String())
	}
	if err := m2.SetActuated("uid", PodLevel, *resized.Spec.Resources); err != nil {
		t.Fatal(err)
	}
	if act, _ := m2.Actuated("uid", PodLevel); act.Limits.Cpu().String() != "2" {
		t.Errorf("actuated pod-level once applied = %v, want 2", act)
	}
	dropped := pod("100m")
	if !m2.ResizeRequested(dropped) || m2.Allocated(dropped).Spec.Resources == nil {
		t.Error("a spec without the allocated pod-level resources is not told apart from its allocation")
	}
}

// TestPodLevelResourcesAdded: a resize that gives a pod its first pod-level
// resources leaves them unapplied until the pod cgroup takes them.
func TestPodLevelResourcesAdded(t *testing.T) {
	m, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Admit(pod("100m")); err != nil {
		t.Fatal(err)
	}
	added := withPodCPU("100m", "1")
	if !m.ResizeRequested(added) {
		t.Fatal("adding pod-level resources is not a resize request")
	}
	if err := m.SetAllocated(added); err != nil {
		t.Fatal(err)
	}
	if act, ok := m.Actuated("uid", PodLevel); !ok || len(act.Limits)+len(act.Requests) != 0 {
		t.Errorf("actuated pod-level after they were added = %v %v, want none applied", act, ok)
	}
	if err := m.SetActuated("uid", PodLevel, *added.Spec.Resources); err != nil {
		t.Fatal(err)
	}
	if act, _ := m.Actuated("uid", PodLevel); act.Limits.Cpu().String() != "1" {
		t.Errorf("actuated pod-level once applied = %v, want 1", act)
	}
}

// TestCheckpointWithoutPodLevel: a pod allocated before pod-level resources
// were kept is no resize request when seen again after an upgrade.
func TestCheckpointWithoutPodLevel(t *testing.T) {
	dir := t.TempDir()
	old := `{"allocated":{"uid":{"c":{"requests":{"cpu":"100m"}}}},"actuated":{}}`
	if err := os.WriteFile(filepath.Join(dir, CheckpointFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := withPodCPU("100m", "1")
	if err := m.Admit(p); err != nil {
		t.Fatal(err)
	}
	if m.ResizeRequested(p) {
		t.Error("the pod's unchanged pod-level resources are a resize request after an upgrade")
	}
}
