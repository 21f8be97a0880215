package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// TestDiskPressureEvicts is fault test 5. runlet's --root-dir is a 64Mi
// tmpfs and the default thresholds apply (nodefs.available<10%). Of two
// pods with an emptyDir each, one fills its own past the threshold: the
// node reports DiskPressure, that pod is evicted with the kubelet's status,
// message and event, its emptyDir goes and the space comes back, the other
// pod keeps running, and DiskPressure stays for the transition period.
func TestDiskPressureEvicts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting the test filesystem needs root")
	}
	root := mountTmpfs(t, t.TempDir(), "64m")
	if framework.Runtime() == "runc" {
		// runc's image store on a filesystem of its own, as a host's imagefs
		// apart from its nodefs: the 64Mi root holds what the pods write.
		mountTmpfs(t, filepath.Join(root, "runc", "images"), "2g")
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{RootDir: root})
	ns := framework.Namespace(t)
	c := framework.Get(t)
	ctx := context.Background()

	// Burstable and idle; BestEffort and filling: the rank is by use of the
	// filesystem over requests, not by QoS.
	bystander := diskPod(rl.NodeName, ns, "bystander", "sleep 3600")
	bystander.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m"), v1.ResourceMemory: resource.MustParse("16Mi")}
	framework.CreatePod(t, bystander)
	framework.WaitForPodReady(t, ns, "bystander", 90*time.Second)
	framework.CreatePod(t, diskPod(rl.NodeName, ns, "filler",
		"echo filling; dd if=/dev/zero of=/data/fill bs=1M count=60; echo filled; sleep 3600"))

	framework.Eventually(t, 90*time.Second, "node DiskPressure", func() (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, rl.NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cond := nodeCondition(n, v1.NodeDiskPressure)
		return cond.Status == v1.ConditionTrue && cond.Reason == "KubeletHasDiskPressure", nil
	})
	filler := framework.WaitForPod(t, ns, "filler", 60*time.Second, func(p *v1.Pod) bool { return p.Status.Reason == "Evicted" })
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		t.Fatal(err)
	}
	threshold := int64(float64(int64(st.Blocks)*st.Bsize) * float64(float32(0.1))) // as the kubelet computes 10 %
	prefix := fmt.Sprintf("The node was low on resource: ephemeral-storage. Threshold quantity: %d, available: ", threshold)
	msg := filler.Status.Message
	t.Logf("filler: %s/%s %q", filler.Status.Phase, filler.Status.Reason, msg)
	if filler.Status.Phase != v1.PodFailed || !strings.HasPrefix(msg, prefix) ||
		!strings.Contains(msg, ". Container filler was using ") ||
		!strings.HasSuffix(msg, ", request is 0, has larger consumption of ephemeral-storage. ") {
		t.Errorf("filler status %s/%s %q; want Failed/Evicted with the kubelet's message starting %q", filler.Status.Phase, filler.Status.Reason, msg, prefix)
	}
	if cond := podCondition(filler, v1.DisruptionTarget); cond == nil || cond.Status != v1.ConditionTrue || cond.Reason != v1.PodReasonTerminationByKubelet {
		t.Errorf("DisruptionTarget condition %+v", cond)
	}
	if cs := filler.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil {
		t.Errorf("filler's container %+v; want terminated", cs)
	}
	framework.Eventually(t, 30*time.Second, "the Evicted event", func() (bool, error) {
		return hasPodEvent(ctx, c.Client, ns, "filler", v1.EventTypeWarning, "Evicted", msg)
	})

	// The evicted pod's emptyDir goes with it: the space comes back, and
	// nothing else is evicted while DiskPressure holds.
	framework.Eventually(t, 60*time.Second, "the filler's space released", func() (bool, error) {
		if err := unix.Statfs(root, &st); err != nil {
			return false, err
		}
		return int64(st.Bavail) > threshold/int64(st.Bsize), nil
	})
	time.Sleep(25 * time.Second) // two more monitoring rounds
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "bystander", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.Phase != v1.PodRunning || !framework.PodReady(p) || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("bystander %s ready=%v restarts=%d reason %q; want it running untouched\n%s", p.Status.Phase, framework.PodReady(p),
			p.Status.ContainerStatuses[0].RestartCount, p.Status.Reason, framework.DescribePod(ns, "bystander"))
	}
	if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "filler", metav1.GetOptions{}); err != nil || p.Status.Phase != v1.PodFailed {
		t.Errorf("the evicted pod left the API or changed: %v %v", err, p.Status.Phase)
	}
	n, err := c.Client.CoreV1().Nodes().Get(ctx, rl.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cond := nodeCondition(n, v1.NodeDiskPressure); cond.Status != v1.ConditionTrue {
		t.Errorf("DiskPressure %+v after the signal cleared; want True for the 5m transition period", cond)
	}
	if ok, err := hasNodeEvent(ctx, c.Client, rl.NodeName, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage"); !ok {
		t.Errorf("no EvictionThresholdMet event on the node (%v)", err)
	}
}

// mountTmpfs mounts a tmpfs of the given size on dir, made if need be, and
// unmounts it at the end of the test, unless the runlet's clean-up did
// (EINVAL: dir is no mount point any more).
func mountTmpfs(t *testing.T, dir, size string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// diskPod runs script with an emptyDir at /data and the default grace period.
func diskPod(node, ns, name, script string) *v1.Pod {
	p := framework.PodFor(node, ns, name, framework.Busybox(name, "sh", "-c", script))
	p.Spec.TerminationGracePeriodSeconds = nil
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return p
}

func nodeCondition(n *v1.Node, t v1.NodeConditionType) v1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.NodeCondition{}
}

func podCondition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func hasPodEvent(ctx context.Context, client kubernetes.Interface, ns, pod, typ, reason, message string) (bool, error) {
	evs, err := client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": pod, "reason": reason}.String()})
	if err != nil {
		return false, err
	}
	for _, e := range evs.Items {
		if e.Type == typ && e.Message == message {
			return true, nil
		}
	}
	return false, nil
}

func hasNodeEvent(ctx context.Context, client kubernetes.Interface, node, reason, message string) (bool, error) {
	evs, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Node", "involvedObject.name": node, "reason": reason}.String()})
	if err != nil {
		return false, err
	}
	for _, e := range evs.Items {
		if e.Message == message {
			return true, nil
		}
	}
	return false, nil
}
