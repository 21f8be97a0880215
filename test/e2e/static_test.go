package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func staticManifest(ns, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
`, name, ns, framework.BusyboxImage)
}

// waitMirror waits until the mirror pod of a static pod runs and returns it.
func waitMirror(t *testing.T, ns, name, node string) *v1.Pod {
	p := framework.WaitForPod(t, ns, name, 120*time.Second, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && p.Annotations["kubernetes.io/config.mirror"] != ""
	})
	owners := p.OwnerReferences
	if len(owners) != 1 || owners[0].Kind != "Node" || owners[0].Name != node {
		t.Fatalf("mirror pod owner references %+v, want the Node %s", owners, node)
	}
	if p.Spec.NodeName != node {
		t.Fatalf("mirror pod bound to %q, want %q", p.Spec.NodeName, node)
	}
	return p
}

// TestStaticPodFromFile covers the file source: a manifest runs with a
// mirror pod; deleting the mirror recreates it without touching the
// container; removing the file removes the mirror and the containers.
func TestStaticPodFromFile(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	ns := framework.Namespace(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(staticManifest(ns, "web")), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true, PodManifestPath: dir})
	name := "web-" + rl.NodeName
	mirror := waitMirror(t, ns, name, rl.NodeName)
	containerID := mirror.Status.ContainerStatuses[0].ContainerID

	pods := c.Client.CoreV1().Pods(ns)
	if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete mirror pod: %v", err)
	}
	framework.Eventually(t, 60*time.Second, "mirror pod recreated", func() (bool, error) {
		p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return p.UID != mirror.UID && p.Status.Phase == v1.PodRunning, nil
	})
	again := waitMirror(t, ns, name, rl.NodeName)
	if got := again.Status.ContainerStatuses[0].ContainerID; got != containerID {
		t.Errorf("deleting the mirror pod restarted the static pod: container %s, want %s", got, containerID)
	}

	staticUID := again.Annotations["kubernetes.io/config.mirror"]
	if len(framework.Sandboxes(t, typesUID(staticUID))) == 0 {
		t.Fatalf("no sandbox in the backend labelled with the static pod's UID %s", staticUID)
	}
	if err := os.Remove(filepath.Join(dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 90*time.Second, "mirror pod and containers gone", func() (bool, error) {
		_, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		gone := apierrors.IsNotFound(err)
		return gone && len(framework.Sandboxes(t, typesUID(staticUID))) == 0, nil
	})
}

// TestStaticPodFromURL covers the http source with a PodList.
func TestStaticPodFromURL(t *testing.T) {
	t.Parallel()
	ns := framework.Namespace(t)
	body := "apiVersion: v1\nkind: PodList\nitems:\n- " + indent(staticManifest(ns, "api"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true, ManifestURL: "http://" + ln.Addr().String() + "/pods"})
	waitMirror(t, ns, "api-"+rl.NodeName, rl.NodeName)
}

// TestStaticPodReAdded moves a manifest out and back in, the usual way to
// restart a static pod: the pod keeps its UID (derived from the manifest)
// and must run again, with a new container, although it came back while
// its earlier self was still stopping (default 30 s grace; sleep ignores
// SIGTERM).
func TestStaticPodReAdded(t *testing.T) {
	t.Parallel()
	ns := framework.Namespace(t)
	dir, out := t.TempDir(), t.TempDir()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: restart-me
  namespace: %s
spec:
  containers:
  - name: main
    image: %s
    imagePullPolicy: IfNotPresent
    command: ["sleep", "3600"]
`, ns, framework.BusyboxImage)
	in := filepath.Join(dir, "restart-me.yaml")
	if err := os.WriteFile(in, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{PodManifestPath: dir})
	name := "restart-me-" + rl.NodeName
	first := waitMirror(t, ns, name, rl.NodeName)
	firstID := first.Status.ContainerStatuses[0].ContainerID

	if err := os.Rename(in, filepath.Join(out, "restart-me.yaml")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the file source has seen it go; the pod is stopping
	if err := os.Rename(filepath.Join(out, "restart-me.yaml"), in); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 120*time.Second, "static pod running again with a new container", func() (bool, error) {
		p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		cs := p.Status.ContainerStatuses[0]
		return cs.State.Running != nil && cs.ContainerID != firstID, nil
	})
}
