package vknode

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// EventComponent is the source of the node's events: the kubelet's, which
// users' and the e2e suite's field selectors (source=kubelet) look for.
const EventComponent = "kubelet"

// NewEventRecorder records events as component on the node through the
// API (a client of their own, as the kubelet's EventClient); the returned
// function stops the broadcaster.
func NewEventRecorder(events corev1client.EventsGetter, component, nodeName string) (record.EventRecorder, func()) {
	eb := record.NewBroadcaster()
	eb.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: events.Events(v1.NamespaceAll)})
	rec := eb.NewRecorder(scheme.Scheme, v1.EventSource{Component: component, Host: nodeName})
	return rec, eb.Shutdown
}

// warningsOnly passes on the pod controller's failures (ProviderCreateFailed
// and the like, which carry the provider's error) and drops its
// Provider*Success events: bookkeeping of the framework's that no kubelet
// writes, one more API write per pod created, updated or deleted.
type warningsOnly struct{ record.EventRecorder }

func (r warningsOnly) Event(obj runtime.Object, eventtype, reason, message string) {
	if eventtype == v1.EventTypeWarning {
		r.EventRecorder.Event(obj, eventtype, reason, message)
	}
}

func (r warningsOnly) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	if eventtype == v1.EventTypeWarning {
		r.EventRecorder.Eventf(obj, eventtype, reason, format, args...)
	}
}

func (r warningsOnly) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, format string, args ...any) {
	if eventtype == v1.EventTypeWarning {
		r.EventRecorder.AnnotatedEventf(obj, annotations, eventtype, reason, format, args...)
	}
}
