// Package podtest builds the pods of unit tests: a name, and only the fields
// a test sets through options, so that what a test depends on is written
// where the pod is made.
//
//	pod := podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid"),
//		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
package podtest

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Option sets a field of the pod New builds.
type Option func(*v1.Pod)

// New is a pod named name with nothing else set but what opts set, applied
// in order.
func New(name string, opts ...Option) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Namespace sets the pod's namespace.
func Namespace(ns string) Option { return func(p *v1.Pod) { p.Namespace = ns } }

// UID sets the pod's UID.
func UID(uid string) Option { return func(p *v1.Pod) { p.UID = types.UID(uid) } }

// Labels sets the pod's labels to l, which the pod then shares.
func Labels(l map[string]string) Option { return func(p *v1.Pod) { p.Labels = l } }

// Annotations sets the pod's annotations to a, which the pod then shares.
func Annotations(a map[string]string) Option { return func(p *v1.Pod) { p.Annotations = a } }

// NodeName binds the pod to node.
func NodeName(node string) Option { return func(p *v1.Pod) { p.Spec.NodeName = node } }

// Containers sets the pod's app containers.
func Containers(cs ...v1.Container) Option { return func(p *v1.Pod) { p.Spec.Containers = cs } }

// InitContainers sets the pod's init containers, sidecars included.
func InitContainers(cs ...v1.Container) Option {
	return func(p *v1.Pod) { p.Spec.InitContainers = cs }
}

// Volumes sets the pod's volumes.
func Volumes(vs ...v1.Volume) Option { return func(p *v1.Pod) { p.Spec.Volumes = vs } }

// RestartPolicy sets the pod's restart policy.
func RestartPolicy(policy v1.RestartPolicy) Option {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = policy }
}

// Priority sets the pod's priority, as admission would from its class.
func Priority(priority int32) Option { return func(p *v1.Pod) { p.Spec.Priority = &priority } }

// Resources sets the pod-level resources.
func Resources(r v1.ResourceRequirements) Option { return func(p *v1.Pod) { p.Spec.Resources = &r } }

// GracePeriod sets the pod's termination grace period in seconds.
func GracePeriod(seconds int64) Option {
	return func(p *v1.Pod) { p.Spec.TerminationGracePeriodSeconds = &seconds }
}

// ServiceAccount sets the pod's service account.
func ServiceAccount(name string) Option { return func(p *v1.Pod) { p.Spec.ServiceAccountName = name } }
