package mirror

import (
	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// NewRecorder wraps rec so that events about a static pod are recorded on its
// mirror pod when there is one: the static pod's UID exists nowhere in the
// API, so `kubectl describe` of the mirror would not show them otherwise.
func NewRecorder(rec record.EventRecorder, m *Manager) record.EventRecorder {
	return &recorder{rec: rec, m: m}
}

type recorder struct {
	rec record.EventRecorder
	m   *Manager
}

func (r *recorder) target(obj runtime.Object) runtime.Object {
	if p, ok := obj.(*v1.Pod); ok && podconfig.IsStatic(p) {
		if mp, ok := r.m.MirrorPod(p); ok {
			return mp
		}
	}
	return obj
}

func (r *recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.rec.Event(r.target(obj), eventtype, reason, message)
}

func (r *recorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.rec.Eventf(r.target(obj), eventtype, reason, messageFmt, args...)
}

func (r *recorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	r.rec.AnnotatedEventf(r.target(obj), annotations, eventtype, reason, messageFmt, args...)
}
