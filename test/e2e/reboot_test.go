package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rebootPods are the pods TestRebootWithAPIServerDown runs: web reads a configMap and a secret into
// an emptyDir at every start and is probed; gone is deleted while its node is down; idle only runs.
const (
	rebootWeb  = "web"
	rebootGone = "gone"
	rebootIdle = "idle"
)

// TestRebootWithAPIServerDown reboots a node while its apiserver cannot be reached, on the backend
// the run names (podman, or runc with RUNLET_E2E_RUNTIME=runc): runlet, its pods' processes, the
// backend's runtime state on /run, the pods' network namespaces and mounts and the node's bridge all
// go (framework.SimulateReboot). A pod is deleted while the node is down, then the apiserver is
// stopped and runlet started. From its checkpoint alone, every pod runs again: its containers started
// anew with each restart counted, its address from the node's podCIDR, its volumes with their last
// content (the emptyDir's file and the configMap and secret as the API last had them), its readiness
// probe reporting. Then the apiserver comes back: the API's view wins, as a sync: no container
// restarts again, the pods' statuses from the outage reach the API, and the deleted pod is stopped
// with its grace period. One sandbox per pod, and one address lease per pod, are left.
func TestRebootWithAPIServerDown(t *testing.T) {
	opts := framework.RunletOptions{ExtraArgs: []string{"--offline-start-after=5s",
		// The kubelet port then answers offline, where a SubjectAccessReview cannot be made.
		"--authorization-mode=AlwaysAllow"}}
	var pm *framework.PodmanService
	if os.Getenv(framework.RuntimeEnv) != framework.RuntimeRunc {
		pm = framework.PrivatePodman(t)
		opts.PodmanSocket = pm.Socket
	}
	rl := framework.StartRunlet(t, opts)
	c := framework.Get(t).Client
	ctx := context.Background()
	ns := framework.Namespace(t)
	node, err := c.CoreV1().Nodes().Get(ctx, rl.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cidr, err := framework.PodCIDR(node)
	if err != nil {
		t.Fatal(err)
	}
	goneDir := t.TempDir()
	uids := createRebootPods(t, rl.NodeName, ns, goneDir)
	before := map[string]string{} // each pod's container before the reboot
	for name := range uids {
		before[name] = framework.WaitForPodReady(t, ns, name, 120*time.Second).Status.ContainerStatuses[0].ContainerID
	}
	waitCheckpointed(t, rl.RootDir, uids)

	framework.SimulateReboot(t, rl, pm)
	zero := int64(0)
	framework.DeletePod(t, ns, rebootGone, &zero) // gone from the API at once, while the node is down

	resume := framework.PauseAPIServer(t)
	if pm != nil {
		if err := pm.Start(); err != nil {
			t.Fatalf("start the podman service after the reboot: %v", err)
		}
	}
	rl.StartProcess()

	offline := waitOfflineRunning(t, rl, uids, before, cidr)
	for name, p := range offline {
		if p.Status.ContainerStatuses[0].RestartCount != 1 {
			t.Errorf("%s offline: restart count %d; want 1 (the reboot's)", name, p.Status.ContainerStatuses[0].RestartCount)
		}
	}
	if boots := readBoots(t, rl.RootDir, uids[rebootWeb]); boots != strings.Repeat("from-configmap\nfrom-secret\n", 2) {
		t.Errorf("web's emptyDir after the reboot holds %q; want its first start's lines and the same again from the checkpoint's configMap and secret", boots)
	}

	resume()
	back := time.Now()
	for _, name := range []string{rebootWeb, rebootIdle} {
		want := offline[name]
		framework.WaitForPod(t, ns, name, 60*time.Second, func(p *v1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].ContainerID == want.Status.ContainerStatuses[0].ContainerID &&
				p.Status.PodIP == want.Status.PodIP && framework.PodReady(p)
		})
	}
	framework.Eventually(t, 60*time.Second, "the pod deleted while the node was down stopped, with its grace period", func() (bool, error) {
		_, err := os.Stat(filepath.Join(goneDir, "term"))
		return err == nil && len(backendRunning(t, pm, uids[rebootGone])) == 0, nil
	})
	framework.Eventually(t, 60*time.Second, "the node's lease renewed once the apiserver is back", func() (bool, error) {
		l, err := c.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, rl.NodeName, metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(back), nil
	})
	framework.WaitForNodeReady(t, rl.NodeName, 60*time.Second)

	for _, name := range []string{rebootWeb, rebootIdle} {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := p.Status.ContainerStatuses[0], offline[name].Status.ContainerStatuses[0]; got.ContainerID != want.ContainerID || got.RestartCount != 1 {
			t.Errorf("%s after the reconnect: container %s, %d restarts; want %s, 1: no restart", name, got.ContainerID, got.RestartCount, want.ContainerID)
		}
		if n := len(backendSandboxes(t, pm, p.UID)); n != 1 {
			t.Errorf("%s has %d sandboxes in the backend; want 1", name, n)
		}
		if n := len(backendRunning(t, pm, p.UID)); n != 1 {
			t.Errorf("%s has %d running containers in the backend; want 1", name, n)
		}
	}
	if leases := framework.KubenetLeases(rl.RootDir, rl.NodeName); len(leases) != 2 {
		t.Errorf("address leases %v; want one for each of the 2 pods left", leases)
	}
}

// createRebootPods creates web, gone and idle and returns their UIDs by name. Each tolerates the
// node's unreachable taint without tolerationSeconds, as docs/autonomy.md advises for long outages.
func createRebootPods(t *testing.T, node, ns, goneDir string) map[string]types.UID {
	c := framework.Get(t).Client
	ctx := context.Background()
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"key": "from-configmap"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"},
		StringData: map[string]string{"key": "from-secret"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := framework.PodFor(node, ns, rebootWeb, framework.Busybox("main", "sh", "-c",
		"{ cat /cfg/key; echo; cat /sec/key; echo; } >> /data/boots; trap 'exit 0' TERM; sleep 3600 & wait"))
	web.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"},
		{Name: "cfg", MountPath: "/cfg"}, {Name: "sec", MountPath: "/sec"}}
	web.Spec.Containers[0].ReadinessProbe = &v1.Probe{PeriodSeconds: 1,
		ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"grep", "-q", "from-secret", "/data/boots"}}}}
	web.Spec.Volumes = []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "sec"}}},
	}
	// Stopped with its grace period, it takes 5 s to write that it was: a stop at once kills it first.
	gone := framework.PodFor(node, ns, rebootGone, framework.Busybox("main", "sh", "-c",
		"trap 'sleep 5; echo term > /out/term; exit 0' TERM; sleep 3600 & wait"))
	gone.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "out", MountPath: "/out"}}
	gone.Spec.Volumes = []v1.Volume{{Name: "out", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: goneDir}}}}
	idle := framework.PodFor(node, ns, rebootIdle, framework.Sleeper("main"))
	uids := map[string]types.UID{}
	for _, p := range []*v1.Pod{web, gone, idle} {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
		uids[p.Name] = framework.CreatePod(t, p).UID
	}
	return uids
}

// waitCheckpointed waits until the checkpoint under rootDir holds each pod Ready: what the reboot
// must not lose has reached the disk.
func waitCheckpointed(t *testing.T, rootDir string, uids map[string]types.UID) {
	framework.Eventually(t, 30*time.Second, "the pods checkpointed Ready", func() (bool, error) {
		for _, uid := range uids {
			if p, ok := framework.CheckpointedPod(rootDir, uid); !ok || !framework.PodReady(p) {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitOfflineRunning waits until runlet's kubelet port shows every pod of uids Running and Ready in a
// container other than its container before the reboot (which the checkpoint's status names until
// runlet reports anew), with an address in cidr, and returns them by name: /runningpods/, the pods
// runlet runs with its own statuses (/pods is the API's view).
func waitOfflineRunning(t *testing.T, rl *framework.Runlet, uids map[string]types.UID, before map[string]string, cidr *net.IPNet) map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	seen := ""
	framework.Eventually(t, 120*time.Second, "every checkpointed pod Running and Ready offline", func() (bool, error) {
		code, body, err := kubeletGet(t, rl, "/runningpods/", "", nil)
		if err != nil || code != 200 {
			if now := fmt.Sprintf("kubelet port: %d %v", code, err); now != seen {
				seen = now
				t.Log(now)
			}
			return false, nil
		}
		var list v1.PodList
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			return false, err
		}
		var states []string
		for i := range list.Items {
			p := &list.Items[i]
			states = append(states, fmt.Sprintf("%s %s ready=%v ip=%s %d containers", p.Name, p.Status.Phase, framework.PodReady(p), p.Status.PodIP, len(p.Status.ContainerStatuses)))
			cs := p.Status.ContainerStatuses
			if uids[p.Name] == p.UID && p.Status.Phase == v1.PodRunning && framework.PodReady(p) && len(cs) == 1 &&
				cs[0].ContainerID != before[p.Name] && cidr.Contains(net.ParseIP(p.Status.PodIP)) {
				out[p.Name] = p
			}
		}
		if now := strings.Join(states, "; "); now != seen {
			seen = now
			t.Logf("offline, the kubelet port shows: %s", now)
		}
		return len(out) == len(uids), nil
	})
	return out
}

// readBoots is web's emptyDir file, as it is on the host.
func readBoots(t *testing.T, rootDir string, uid types.UID) string {
	b, err := os.ReadFile(filepath.Join(rootDir, "pods", string(uid), "volumes", "kubernetes.io~empty-dir", "data", "boots"))
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.ReplaceAll(b, []byte("\r"), nil))
}

// backendSandboxes and backendRunning are the backend's own record of a pod: the private podman's
// (pm), or the runc backend's.
func backendSandboxes(t *testing.T, pm *framework.PodmanService, uid types.UID) []string {
	var ids []string
	if pm == nil {
		for _, sb := range framework.Sandboxes(t, uid) {
			ids = append(ids, sb.ID)
		}
		return ids
	}
	pods, err := pm.PodsOf(uid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		ids = append(ids, p.ID)
	}
	return ids
}

// backendRunning lists the pod's containers that run (a restarted one's predecessor stays, exited,
// for its logs).
func backendRunning(t *testing.T, pm *framework.PodmanService, uid types.UID) []string {
	var ids []string
	if pm == nil {
		for _, c := range framework.Containers(t, uid) {
			if c.Running {
				ids = append(ids, c.ID)
			}
		}
		return ids
	}
	cs, err := pm.ContainersOf(uid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.State == "running" || c.State == "stopping" {
			ids = append(ids, c.ID)
		}
	}
	return ids
}
