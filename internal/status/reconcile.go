package status

import (
	"sort"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reconcilePeriod is how often statuses are compared with the API's, as the
// kubelet's status manager does (syncPeriod).
const reconcilePeriod = 10 * time.Second

// APIPod returns the API object a pod's status goes to, if the API holds it.
type APIPod func(pod *v1.Pod) (*v1.Pod, bool)

// Reconcile queues again every status the API shows otherwise than runlet
// last set it, in the parts runlet owns, as the kubelet's needsReconcile: a
// write lost while the apiserver was away, or a status someone else
// overwrote, is written again. API pods the API holds as Succeeded or Failed
// are final there and left alone (mirror pods are not: a static pod that
// comes back runs again). It returns how many it queued.
func (m *Manager) Reconcile(api APIPod) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for uid, p := range m.statuses {
		if m.api.queued(uid) {
			continue
		}
		cur, ok := api(p)
		if !ok || (isTerminal(cur.Status.Phase) && !podconfig.IsStatic(p)) || ownedEqual(normalized(&p.Status), normalized(&cur.Status)) {
			continue
		}
		m.api.enqueue(uid, false)
		n++
	}
	return n
}

// ownedEqual compares two statuses as the kubelet's isPodStatusByKubeletEqual:
// owned conditions by status, reason and message; the rest field by field.
func ownedEqual(a, b *v1.PodStatus) bool {
	ca, cb := ownedConds(a.Conditions), ownedConds(b.Conditions)
	if len(ca) != len(cb) {
		return false
	}
	for t, c := range ca {
		o, ok := cb[t]
		if !ok || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message {
			return false
		}
	}
	x, y := *a, *b
	x.Conditions, y.Conditions = nil, nil
	x.ResourceClaimStatuses, y.ResourceClaimStatuses = nil, nil
	return apiequality.Semantic.DeepEqual(x, y)
}

func ownedConds(cs []v1.PodCondition) map[v1.PodConditionType]v1.PodCondition {
	out := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range cs {
		if ownedConditions[c.Type] {
			out[c.Type] = c
		}
	}
	return out
}

// normalized is a copy of st with times cut to the API's whole seconds and
// container statuses in name order, so a status that went through the API
// compares equal to the one sent.
func normalized(st *v1.PodStatus) *v1.PodStatus {
	out := st.DeepCopy()
	sec := func(t *metav1.Time) { *t = t.Rfc3339Copy() }
	if out.StartTime != nil {
		sec(out.StartTime)
	}
	for i := range out.Conditions {
		sec(&out.Conditions[i].LastProbeTime)
		sec(&out.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]v1.ContainerStatus{out.InitContainerStatuses, out.ContainerStatuses, out.EphemeralContainerStatuses} {
		for i := range list {
			for _, s := range []*v1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if s.Running != nil {
					sec(&s.Running.StartedAt)
				}
				if s.Terminated != nil {
					sec(&s.Terminated.StartedAt)
					sec(&s.Terminated.FinishedAt)
				}
			}
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	return out
}
