package vknode

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// NewEventRecorder records events as component on the node through the
// API (a client of their own, as the kubelet's EventClient); the returned
// function stops the broadcaster.
func NewEventRecorder(events corev1client.EventsGetter, component, nodeName string) (record.EventRecorder, func()) {
	eb := record.NewBroadcaster()
	eb.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: events.Events(v1.NamespaceAll)})
	rec := eb.NewRecorder(scheme.Scheme, v1.EventSource{Component: component, Host: nodeName})
	return rec, eb.Shutdown
}
