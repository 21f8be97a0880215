package syncloop

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmitOS: a pod for another OS is refused even with no node to check
// it against (static pods before the node is registered).
func TestAdmitOS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := "windows"
	if goruntime.GOOS == other {
		other = "linux"
	}
	for _, tc := range []struct {
		name       string
		labels     map[string]string
		os         v1.OSName
		wantReason string
	}{
		{name: "nothing set"},
		{name: "matching field and label", labels: map[string]string{v1.LabelOSStable: goruntime.GOOS}, os: v1.OSName(goruntime.GOOS)},
		{name: "other OS field", os: v1.OSName(other), wantReason: "PodOSNotSupported"},
		{name: "other OS label", labels: map[string]string{v1.LabelOSStable: other}, wantReason: "PodOSSelectorNodeLabelDoesNotMatch"},
	} {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
		if tc.os != "" {
			p.Spec.OS = &v1.PodOS{Name: tc.os}
		}
		l := New(Config{})
		l.workers = newPodWorkers(ctx, &fakeSyncer{calls: make(chan call, 1)}, l.queue, time.Hour, time.Hour)
		r := l.admit(p)
		if r.Admit != (tc.wantReason == "") || r.Reason != tc.wantReason || (!r.Admit && r.Message == "") {
			t.Errorf("%s: admit = %+v; want reason %q", tc.name, r, tc.wantReason)
		}
	}
}
