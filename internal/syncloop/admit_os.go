package syncloop

import (
	goruntime "runtime"

	v1 "k8s.io/api/core/v1"
)

// admitOS is the OS part of the kubelet's predicate admission
// (pkg/kubelet/lifecycle/predicate.go): a pod whose kubernetes.io/os label
// or spec.os names another OS than the node's is rejected, with the kubelet's
// reasons and messages. The node's OS label is always GOOS on runlet.
func admitOS(p *v1.Pod) (reason, msg string, ok bool) {
	if os, set := p.Labels[v1.LabelOSStable]; set && os != goruntime.GOOS {
		return "PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label", false
	}
	if p.Spec.OS != nil && string(p.Spec.OS.Name) != goruntime.GOOS {
		return "PodOSNotSupported", "Failed to admit pod as the OS field doesn't match node OS", false
	}
	return "", "", true
}
