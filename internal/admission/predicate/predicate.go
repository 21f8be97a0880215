// Package predicate is the part of the kubelet's predicate admit handler
// (pkg/kubelet/lifecycle/predicate.go) that checks a pod against the node
// rather than against its resources: the OS, the node affinity and selector,
// free host ports and NoExecute taints. The scheduler checks the same before
// binding, so these refuse only pods that skipped it (spec.nodeName set by
// the user, static pods) or raced another pod onto the node.
package predicate

import (
	"fmt"
	goruntime "runtime"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// The kubelet's rejection reasons and the scheduler's predicate texts.
const (
	ReasonOSSelector      = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonOSNotSupported  = "PodOSNotSupported"
	ReasonNodeAffinity    = "NodeAffinity"
	ReasonNodePorts       = "NodePorts"
	ReasonTaintToleration = "TaintToleration"

	descNodeAffinity = "node(s) didn't match Pod's node affinity/selector"
	descNodePorts    = "node(s) didn't have free ports for the requested pod ports"
	descTaints       = "node(s) had taints that the pod didn't tolerate"
)

// Result is a decision; Reason and Message explain a refusal.
type Result struct {
	Admit           bool
	Reason, Message string
}

var admitted = Result{Admit: true}

// Admit checks pod against node and the pods the node already runs, in the
// kubelet's order; the first refusal wins.
func Admit(pod *v1.Pod, node *v1.Node, others []*v1.Pod) Result {
	if r := AdmitOS(pod); !r.Admit {
		return r
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return failed(ReasonNodeAffinity, descNodeAffinity)
	}
	if !portsFit(pod, others) {
		return failed(ReasonNodePorts, descNodePorts)
	}
	if !isStatic(pod) && untoleratedNoExecute(pod, node) {
		return failed(ReasonTaintToleration, descTaints)
	}
	return admitted
}

// AdmitOS is the OS part of Admit: a pod whose kubernetes.io/os label or
// spec.os names another OS is refused. The kubelet compares with its own OS,
// whatever the node's label says, so no node is needed.
func AdmitOS(pod *v1.Pod) Result {
	if osLabel, ok := pod.Labels[v1.LabelOSStable]; ok && osLabel != goruntime.GOOS {
		return Result{Reason: ReasonOSSelector,
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return Result{Reason: ReasonOSNotSupported, Message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	return admitted
}

// failed is the kubelet's PredicateFailureError.
func failed(name, desc string) Result {
	return Result{Reason: name, Message: fmt.Sprintf("Predicate %s failed: %s", name, desc)}
}

func untoleratedNoExecute(pod *v1.Pod, node *v1.Node) bool {
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *v1.Taint) bool { return t.Effect == v1.TaintEffectNoExecute }, false)
	return untolerated
}

// isStatic reports a pod from a file or http source (kubetypes.IsStaticPod).
func isStatic(pod *v1.Pod) bool {
	src := pod.Annotations["kubernetes.io/config.source"]
	return src != "" && src != "api"
}
