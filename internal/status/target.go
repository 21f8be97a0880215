package status

import (
	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
)

// Target is the lookup of the API object a pod's status is written to, as
// the kubelet's status manager translates a pod's UID: an API pod's own
// object (apiPods, by UID), or a static pod's mirror pod (mirrors), whose
// UID is not the static pod's. A mirror pod being deleted takes no status:
// the mirror manager replaces it.
func Target(apiPods, mirrors APIPod) APIPod {
	return func(pod *v1.Pod) (*v1.Pod, bool) {
		if !podconfig.IsStatic(pod) {
			return apiPods(pod)
		}
		if mirrors == nil {
			return nil, false
		}
		mp, ok := mirrors(pod)
		if !ok || mp.DeletionTimestamp != nil {
			return nil, false
		}
		return mp, true
	}
}
