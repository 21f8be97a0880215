package syncloop

import (
	"github.com/runlet/runlet/internal/admission"
	"github.com/runlet/runlet/internal/admission/predicate"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Admitter decides whether the node takes a new pod, given the pods it
// already runs (internal/admission).
type Admitter interface {
	Admit(pod *v1.Pod, others []*v1.Pod) admission.Result
}

// admit runs admission on a pod the node does not run yet, as the
// kubelet's HandlePodAdditions does; without an Admitter only the pod
// count is checked.
func (l *Loop) admit(p *v1.Pod) admission.Result {
	if l.workers.known(p.UID) {
		return admission.Result{Admit: true}
	}
	if l.cfg.Admit != nil {
		// Node pressure first, as the kubelet's eviction admit handler.
		if ok, reason, msg := l.cfg.Admit(p); !ok {
			return admission.Result{Reason: reason, Message: msg}
		}
	}
	// The OS needs no node, so it is checked even before the node exists.
	if r := predicate.AdmitOS(p); !r.Admit {
		return admission.Result{Reason: r.Reason, Message: r.Message}
	}
	others := l.otherActivePods(p.UID)
	if l.cfg.Admission != nil {
		return l.cfg.Admission.Admit(p, others)
	}
	if l.cfg.MaxPods > 0 && len(others) >= l.cfg.MaxPods {
		return admission.Result{Reason: "OutOfpods", Message: "Node didn't have enough resource: pods"}
	}
	return admission.Result{Admit: true}
}

// otherActivePods are the admitted pods whose containers may still run,
// except uid: what the node's resources are already committed to. A pod
// whose containers have stopped for good no longer holds any, as on the
// kubelet (filterOutInactivePods): its phase in the API is already
// terminal, and the scheduler has already given its ports and resources to
// the pods that come next, while its sandbox may still be coming down.
func (l *Loop) otherActivePods(uid types.UID) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range l.pods.list() {
		if p.UID != uid && !l.workers.isTerminated(p.UID) {
			out = append(out, l.allocated(p))
		}
	}
	return out
}
