package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUserNamespaces runs pods with hostUsers: false as the upstream
// [Feature:UserNamespacesSupport] specs do: each in a user namespace of its
// own, with a range of 65536 IDs, and its volumes' files owned by its own
// root (or by its fsGroup).
func TestUserNamespaces(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	long := usernsPod(rl.NodeName, ns, "userns-long", "cat /proc/self/uid_map; trap 'exit 0' TERM; while true; do sleep 1; done")
	framework.CreatePod(t, long)
	t.Run("pods", func(t *testing.T) {
		t.Run("OwnRanges", func(t *testing.T) { t.Parallel(); testOwnRanges(t, rl.NodeName, ns) })
		t.Run("VolumesOwnedByPodRoot", func(t *testing.T) { t.Parallel(); testUsernsVolumes(t, rl.NodeName, ns) })
		t.Run("HostUsersTrue", func(t *testing.T) {
			t.Parallel()
			pod := usernsPod(rl.NodeName, ns, "host-users", "cat /proc/self/uid_map")
			pod.Spec.HostUsers = boolp(true)
			if _, out := runToEnd(t, pod); !strings.Contains(out, "4294967295") {
				t.Errorf("hostUsers: true: uid_map %q; want the host's whole range", out)
			}
		})
	})
	// A restart of runlet restarts nothing, and the pod keeps its range.
	p := framework.WaitForPodReady(t, ns, long.Name, 90*time.Second)
	before := kubectlExec(t, ns, long.Name, "c", "cat", "/proc/self/uid_map")
	rl.Restart()
	time.Sleep(5 * time.Second) // a few sync rounds after the sources were seen
	q := framework.WaitForPodReady(t, ns, long.Name, 60*time.Second)
	if a, b := q.Status.ContainerStatuses[0], p.Status.ContainerStatuses[0]; a.ContainerID != b.ContainerID || a.RestartCount != 0 {
		t.Errorf("after the restart: container %s, restartCount %d; want %s, 0", a.ContainerID, a.RestartCount, b.ContainerID)
	}
	if after := kubectlExec(t, ns, long.Name, "c", "cat", "/proc/self/uid_map"); after != before {
		t.Errorf("the pod's range after the restart %q; want %q", after, before)
	}
	framework.DeletePod(t, ns, long.Name, nil)
	framework.WaitForPodGone(t, ns, long.Name, 90*time.Second)
}

func usernsPod(node, ns, name, script string) *v1.Pod {
	pod := framework.PodFor(node, ns, name, sh("c", script))
	pod.Spec.HostUsers = boolp(false)
	return pod
}

// testOwnRanges: two pods get ranges of 65536 that differ.
func testOwnRanges(t *testing.T, node, ns string) {
	var maps []string
	for _, name := range []string{"userns-a", "userns-b"} {
		p, out := runToEnd(t, usernsPod(node, ns, name, "cat /proc/self/uid_map"))
		if p.Status.Phase != v1.PodSucceeded {
			t.Fatalf("pod %s: %s\n%s", name, p.Status.Phase, framework.DescribePod(ns, name))
		}
		f := strings.Fields(out)
		if len(f) != 3 || f[0] != "0" || f[2] != "65536" || f[1] == "0" {
			t.Errorf("pod %s: uid_map %q; want root mapped to a host range of 65536", name, out)
		}
		maps = append(maps, out)
	}
	if len(maps) == 2 && maps[0] == maps[1] {
		t.Errorf("two pods share the range %q", maps[0])
	}
}

// testUsernsVolumes: configMap, secret, downwardAPI and projected files
// show as root's group in the pod, and as the fsGroup's where it is set;
// an image volume's files as the pod's root's.
func testUsernsVolumes(t *testing.T, node, ns string) {
	c := framework.Get(t).Client.CoreV1()
	ctx := context.Background()
	if _, err := c.ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "userns-cm"},
		Data: map[string]string{"a": "1", "b": "2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "userns-secret"},
		Data: map[string][]byte{"s": []byte("x")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	items := []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}
	volumes := []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "userns-cm"}}}},
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "userns-secret"}}},
		{Name: "downward", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items}}},
		{Name: "projected", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{DownwardAPI: &v1.DownwardAPIProjection{Items: items}},
			{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "userns-secret"}}}}}}},
	}
	// The upstream spec's check: the group of every file below /vol.
	script := "stat -c='%g' $(find /vol/ -type f)"
	pod := usernsPod(node, ns, "userns-volumes", script)
	for _, v := range volumes {
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, v1.VolumeMount{Name: v.Name, MountPath: "/vol/" + v.Name})
	}
	pod.Spec.Volumes = volumes
	// 2 configMap keys, 1 secret key, 1 downward file, and 1 + 1 projected.
	if _, out := runToEnd(t, pod); out != strings.Repeat("=0\n", 6) {
		t.Errorf("volume files' groups %q; want =0 for each of 6 files", out)
	}
	fs := usernsPod(node, ns, "userns-fsgroup", script)
	fs.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/vol/cfg"}}
	fs.Spec.Volumes = volumes[:1]
	fs.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: i64(200)}
	if _, out := runToEnd(t, fs); out != strings.Repeat("=200\n", 2) {
		t.Errorf("fsGroup 200: volume files' groups %q; want =200 for each of 2 files", out)
	}
	img := usernsPod(node, ns, "userns-image", "stat -c %u:%g /img/bin/busybox")
	img.Spec.Volumes = []v1.Volume{{Name: "img", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{
		Reference: framework.BusyboxImage, PullPolicy: v1.PullIfNotPresent}}}}
	img.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "img", MountPath: "/img"}}
	if p, out := runToEnd(t, img); p.Status.Phase != v1.PodSucceeded || strings.TrimSpace(out) != "0:0" {
		t.Errorf("image volume: pod %s, owner of its files %q; want 0:0 (the pod's root)\n%s", p.Status.Phase, out, framework.DescribePod(ns, img.Name))
	}
}
