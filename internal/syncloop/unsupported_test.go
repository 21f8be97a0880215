package syncloop

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// TestWarnUnsupported: a new pod is told every field runlet ignores; an
// update only those it brings, once.
func TestWarnUnsupported(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	l := New(Config{Recorder: rec})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img"}}}}
	l.warnUnsupported(nil, pod)
	if len(rec.Events) != 0 {
		t.Fatalf("plain pod: event %q", <-rec.Events)
	}
	debugged := pod.DeepCopy()
	debugged.Spec.EphemeralContainers = []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "dbg", Image: "img"},
		TargetContainerName: "c"}}
	l.warnUnsupported(pod, debugged)
	if len(rec.Events) != 1 {
		t.Fatalf("ephemeral container targeting a container added: %d events, want 1", len(rec.Events))
	}
	if ev := <-rec.Events; !strings.HasPrefix(ev, "Warning UnsupportedField") || !strings.Contains(ev, "ephemeralContainers[dbg].targetContainerName") {
		t.Errorf("event %q", ev)
	}
	again := debugged.DeepCopy()
	again.Labels = map[string]string{"x": "y"}
	l.warnUnsupported(debugged, again)
	if len(rec.Events) != 0 {
		t.Errorf("unrelated update repeated the warning: %q", <-rec.Events)
	}
	l.warnUnsupported(nil, debugged)
	if len(rec.Events) != 1 {
		t.Errorf("new pod with an ephemeral container: %d events, want 1", len(rec.Events))
	}
}
