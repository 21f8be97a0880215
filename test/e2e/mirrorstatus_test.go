package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestMirrorPodKeepsForeignConditions: a condition someone else sets on a
// mirror pod survives runlet's later writes of the static pod's status, as
// on an API pod (the kubelet's mergePodStatus). The container exits after a
// few seconds, so runlet writes the mirror's status again after the
// condition was set.
func TestMirrorPodKeepsForeignConditions(t *testing.T) {
	t.Parallel()
	ns := framework.Namespace(t)
	dir := t.TempDir()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: gated
  namespace: %s
spec:
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sh", "-c", "sleep 8; exit 1"]
`, ns, framework.BusyboxImage)
	if err := os.WriteFile(filepath.Join(dir, "gated.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{PodManifestPath: dir})
	name := "gated-" + rl.NodeName
	mirror := waitMirror(t, ns, name, rl.NodeName)
	restarts := mirror.Status.ContainerStatuses[0].RestartCount

	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	patch := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"conditions":[{"type":"example.com/gate","status":"True"}]}}`, mirror.UID)
	if _, err := pods.Patch(context.Background(), name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("set a condition on the mirror pod: %v", err)
	}
	p := framework.WaitForPod(t, ns, name, 120*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount > restarts
	})
	gate := false
	for _, c := range p.Status.Conditions {
		gate = gate || (c.Type == "example.com/gate" && c.Status == v1.ConditionTrue)
	}
	if !gate {
		t.Errorf("after runlet's write (restart count %d) the mirror's conditions are %+v; want example.com/gate=True kept",
			p.Status.ContainerStatuses[0].RestartCount, p.Status.Conditions)
	}
}
