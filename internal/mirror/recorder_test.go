package mirror

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// lastObject records what each event was about.
type lastObject struct {
	record.EventRecorder
	obj runtime.Object
}

func (l *lastObject) Event(obj runtime.Object, _, _, _ string) { l.obj = obj }

func TestRecorderUsesMirrorPod(t *testing.T) {
	e := newEnv(t)
	sp := staticPod("web", "h1")
	e.m.Sync([]*v1.Pod{sp}, nil, true)
	rec := &lastObject{}
	r := NewRecorder(rec, e.m)

	r.Event(sp, v1.EventTypeNormal, "Pulled", "before the mirror exists")
	if rec.obj != sp {
		t.Errorf("without a mirror the event is about %v, want the static pod", rec.obj)
	}
	e.step(t)
	r.Event(sp, v1.EventTypeNormal, "Pulled", "with a mirror")
	if p, ok := rec.obj.(*v1.Pod); !ok || p.UID == sp.UID || p.Name != sp.Name {
		t.Errorf("with a mirror the event is about %v, want the mirror pod", rec.obj)
	}
}
