package syncloop

import (
	goruntime "runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdmitOS(t *testing.T) {
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
		reason, msg, ok := admitOS(p)
		if ok != (tc.wantReason == "") || reason != tc.wantReason || (!ok && msg == "") {
			t.Errorf("%s: admitOS = %q, %q, %v; want reason %q", tc.name, reason, msg, ok, tc.wantReason)
		}
	}
}
