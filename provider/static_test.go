package provider

import (
	"context"
	"testing"

	"github.com/runlet/runlet/internal/podconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeleteMirrorPodKeepsStaticPod: deleting a mirror pod in the API must
// not reach the api source (nor stop anything): it is only recreated.
func TestDeleteMirrorPodKeepsStaticPod(t *testing.T) {
	mirror := ppod("web-n1", "mirror-uid")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
	now := metav1.Now()
	mirror.DeletionTimestamp = &now
	f := newFixture(t, mirror)
	if err := f.p.DeletePod(context.Background(), mirror); err != nil {
		t.Fatalf("DeletePod(mirror) = %v", err)
	}
	if got := f.source.Pods(); len(got) != 0 {
		t.Errorf("the api source now holds %v", got)
	}
}
