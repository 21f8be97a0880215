package node

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourcePID is the reservable process count (the kubelet's pidlimit.PIDs).
const ResourcePID v1.ResourceName = "pid"

// ParseReservation reads a --system-reserved or --kube-reserved map
// ("cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000"), refusing what the
// kubelet refuses: other resources, unparsable or negative quantities.
func ParseReservation(m map[string]string) (v1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := v1.ResourceList{}
	for _, k := range keys {
		name := v1.ResourceName(k)
		switch name {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, ResourcePID:
		default:
			return nil, fmt.Errorf("cannot reserve %q resource", k)
		}
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", k, m[k], err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("resource quantity for %q cannot be negative: %v", k, m[k])
		}
		out[name] = q
	}
	return out, nil
}

// Allocatable is capacity minus the reservations, floored at zero, as the
// kubelet's node allocatable (without eviction thresholds: runlet evicts
// nothing). A reserved pid count has no capacity to come off: runlet reports
// no pid resource.
func Allocatable(capacity v1.ResourceList, reserved ...v1.ResourceList) v1.ResourceList {
	out := capacity.DeepCopy()
	for name, q := range out {
		for _, r := range reserved {
			if v, ok := r[name]; ok {
				q.Sub(v)
			}
		}
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[name] = q
	}
	return out
}
