package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNetworkFaults: what the kubelet gives when the pod network cannot work, or fails one pod. The
// node says why it is NotReady; a pod whose ADD fails gets FailedCreatePodSandBox and keeps retrying,
// and every other pod keeps running.
func TestNetworkFaults(t *testing.T) {
	t.Parallel()
	t.Run("MissingPlugin", func(t *testing.T) {
		t.Parallel()
		rl := framework.StartRunlet(t, framework.RunletOptions{NoWaitReady: true,
			ExtraArgs: []string{"--network-plugin=kubenet", "--cni-bin-dir=" + t.TempDir()}})
		var ready v1.NodeCondition
		framework.Eventually(t, time.Minute, "node "+rl.NodeName+" NotReady for its network", func() (bool, error) {
			n, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), rl.NodeName, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady {
					ready = c
				}
			}
			return strings.Contains(ready.Message, "failed to find plugin"), nil
		})
		if ready.Status != v1.ConditionFalse || !strings.Contains(ready.Message, "NetworkReady=false reason:NetworkPluginNotReady") ||
			!strings.Contains(ready.Message, `"bridge"`) {
			t.Errorf("Ready = %s %s: %q; want False, NetworkPluginNotReady, naming the bridge plugin", ready.Status, ready.Reason, ready.Message)
		}
		// A host-network pod needs no pod network; it runs on a node the scheduler skips when
		// bound to it directly, as the kubelet runs it.
		ns := framework.Namespace(t)
		p := framework.PodFor(rl.NodeName, ns, "hostnet", framework.Sleeper("c"))
		p.Spec.NodeSelector, p.Spec.NodeName, p.Spec.HostNetwork = nil, rl.NodeName, true
		framework.CreatePod(t, p)
		framework.WaitForPodPhase(t, ns, "hostnet", v1.PodRunning, 90*time.Second)
	})
	t.Run("AddFails", func(t *testing.T) {
		t.Parallel()
		confDir, bridge := t.TempDir(), "rlfault"+fmt.Sprint(time.Now().UnixNano()%1e6)
		// A /30 has one address for a pod: the bridge takes .1.
		conf := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"%s","plugins":[{"type":"bridge","bridge":"%s","isGateway":true,
			"ipam":{"type":"host-local","ranges":[[{"subnet":"10.250.250.0/30"}]],"dataDir":"%s"}}]}`, bridge, bridge, filepath.Join(t.TempDir(), "leases"))
		if err := os.WriteFile(filepath.Join(confDir, "10-small.conflist"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", bridge).Run() })
		rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{"--network-plugin=cni", "--cni-conf-dir=" + confDir}})
		ns := framework.Namespace(t)
		framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "first", framework.Sleeper("c")))
		first := framework.WaitForPodPhase(t, ns, "first", v1.PodRunning, 90*time.Second)
		if first.Status.PodIP != "10.250.250.2" {
			t.Errorf("first pod's IP %q; want 10.250.250.2, the conf dir's network", first.Status.PodIP)
		}
		framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "second", framework.Sleeper("c")))
		framework.Eventually(t, time.Minute, "a FailedCreatePodSandBox event for the second pod", func() (bool, error) {
			return hasEvent(t, ns, "second", "FailedCreatePodSandBox", "no IP addresses available"), nil
		})
		p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), "first", metav1.GetOptions{})
		if err != nil || p.Status.Phase != v1.PodRunning || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Fatalf("the first pod did not keep running: %v %s", err, framework.DescribePod(ns, "first"))
		}
		framework.DeletePod(t, ns, "first", nil)
		framework.WaitForPodGone(t, ns, "first", time.Minute)
		second := framework.WaitForPodPhase(t, ns, "second", v1.PodRunning, 2*time.Minute)
		if second.Status.PodIP != "10.250.250.2" {
			t.Errorf("second pod's IP %q after the retry; want the released 10.250.250.2", second.Status.PodIP)
		}
	})
}
