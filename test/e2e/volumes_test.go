package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestVolumes runs the volume scenarios against one runlet node: what the
// containers see (files, modes, owners, mounts) and what is left on the
// node's disk.
func TestVolumes(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	v := &volumesEnv{node: rl.NodeName, ns: ns, root: rl.RootDir}
	t.Cleanup(func() { v.deleteAll(t) })
	t.Run("EmptyDir", func(t *testing.T) { t.Parallel(); v.testEmptyDir(t) })
	t.Run("ConfigMapAndSecret", func(t *testing.T) { t.Parallel(); v.testConfigMapAndSecret(t) })
	t.Run("MissingConfigMap", func(t *testing.T) { t.Parallel(); v.testMissingConfigMap(t) })
	t.Run("ServiceAccountToken", func(t *testing.T) { t.Parallel(); v.testServiceAccountToken(t) })
	t.Run("DownwardAPI", func(t *testing.T) { t.Parallel(); v.testDownwardAPI(t) })
	t.Run("HostPath", func(t *testing.T) { t.Parallel(); v.testHostPath(t) })
	t.Run("PersistentVolumeClaim", func(t *testing.T) { t.Parallel(); v.testClaim(t) })
	t.Run("SubPathAndReadOnly", func(t *testing.T) { t.Parallel(); v.testSubPath(t) })
	t.Run("LiveUpdate", func(t *testing.T) { t.Parallel(); v.testLiveUpdate(t) })
	t.Run("ClusterTrustBundle", func(t *testing.T) { t.Parallel(); v.testClusterTrustBundle(t) })
	t.Run("PodCertificate", func(t *testing.T) { t.Parallel(); v.testPodCertificate(t) })
	t.Run("ImageVolume", func(t *testing.T) { t.Parallel(); v.testImageVolume(t) })
	t.Run("PodDirRemoved", func(t *testing.T) { t.Parallel(); v.testPodDirRemoved(t) })
}

type volumesEnv struct {
	node, ns, root string
}

// pod is a busybox pod on the node that sleeps in container "main".
func (v *volumesEnv) pod(name string, vols []v1.Volume, mounts ...v1.VolumeMount) *v1.Pod {
	p := framework.PodFor(v.node, v.ns, name, framework.Busybox("main", "sleep", "3600"))
	p.Spec.Volumes = vols
	p.Spec.Containers[0].VolumeMounts = mounts
	return p
}

func (v *volumesEnv) run(t *testing.T, p *v1.Pod) *v1.Pod {
	t.Helper()
	framework.CreatePod(t, p)
	return framework.WaitForPodPhase(t, v.ns, p.Name, v1.PodRunning, 2*time.Minute)
}

// sh runs a shell command in the pod's container and returns its output.
func (v *volumesEnv) sh(t *testing.T, pod, container, cmd string) string {
	t.Helper()
	out, err := v.shE(pod, container, cmd)
	if err != nil {
		t.Fatalf("%s in %s: %v", cmd, pod, err)
	}
	return out
}

func (v *volumesEnv) shE(pod, container, cmd string) (string, error) {
	out, err := framework.KubectlE("exec", "-n", v.ns, pod, "-c", container, "--", "sh", "-c", cmd)
	return strings.TrimSpace(out), err
}

func (v *volumesEnv) expect(t *testing.T, pod, cmd, want string) {
	t.Helper()
	if got := v.sh(t, pod, "main", cmd); got != want {
		t.Errorf("%s: %q, want %q", cmd, got, want)
	}
}

func (v *volumesEnv) createConfigMap(t *testing.T, cm *v1.ConfigMap) {
	t.Helper()
	cm.Namespace = v.ns
	if _, err := framework.Get(t).Client.CoreV1().ConfigMaps(v.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podDir is the pod's directory under runlet's --root-dir.
func (v *volumesEnv) podDir(uid types.UID) string { return filepath.Join(v.root, "pods", string(uid)) }

func emptyDir(name string, medium v1.StorageMedium, size string) v1.Volume {
	e := &v1.EmptyDirVolumeSource{Medium: medium}
	if size != "" {
		q := resource.MustParse(size)
		e.SizeLimit = &q
	}
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: e}}
}

// testEmptyDir: a disk emptyDir (0777) and a tmpfs one of the requested
// size, both written by an init container and read by the regular one.
func (v *volumesEnv) testEmptyDir(t *testing.T) {
	p := v.pod("emptydir", []v1.Volume{emptyDir("cache", "", ""), emptyDir("mem", v1.StorageMediumMemory, "32Mi")},
		v1.VolumeMount{Name: "cache", MountPath: "/cache"}, v1.VolumeMount{Name: "mem", MountPath: "/mem"})
	init := framework.Busybox("init", "sh", "-c", "echo disk > /cache/f && echo memory > /mem/f")
	init.VolumeMounts = p.Spec.Containers[0].VolumeMounts
	p.Spec.InitContainers = []v1.Container{init}
	got := v.run(t, p)
	v.expect(t, p.Name, "cat /cache/f /mem/f", "disk\nmemory")
	v.expect(t, p.Name, "stat -c %a /cache", "777")
	v.expect(t, p.Name, "stat -c %a /mem", "1777") // a tmpfs root, as on the kubelet
	v.expect(t, p.Name, "grep ' /mem ' /proc/mounts | cut -d' ' -f1,3", "tmpfs tmpfs")
	v.expect(t, p.Name, "df -k /mem | tail -1 | awk '{print $2}'", "32768")
	host := filepath.Join(v.podDir(got.UID), "volumes/kubernetes.io~empty-dir/cache/f")
	if b, err := os.ReadFile(host); err != nil || string(b) != "disk\n" {
		t.Errorf("on the host, %s: %q %v", host, b, err)
	}
}

// testConfigMapAndSecret: items at their paths with their modes,
// binaryData, the default mode, a secret on tmpfs; both read-only.
func (v *volumesEnv) testConfigMapAndSecret(t *testing.T) {
	v.createConfigMap(t, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config"},
		Data: map[string]string{"a": "alpha", "b": "beta"}, BinaryData: map[string][]byte{"bin": []byte("\x01\x02")}})
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret", Namespace: v.ns}, Data: map[string][]byte{"user": []byte("admin")}}
	if _, err := framework.Get(t).Client.CoreV1().Secrets(v.ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mode := func(m int32) *int32 { return &m }
	p := v.pod("cm-secret", []v1.Volume{
		{Name: "items", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}, DefaultMode: mode(0640),
			Items: []v1.KeyToPath{{Key: "a", Path: "sub/a-file", Mode: mode(0400)}, {Key: "bin", Path: "bin"}}}}},
		{Name: "all", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}}}},
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "app-secret", DefaultMode: mode(0400)}}},
	}, v1.VolumeMount{Name: "items", MountPath: "/etc/items"}, v1.VolumeMount{Name: "all", MountPath: "/etc/all"},
		v1.VolumeMount{Name: "secret", MountPath: "/etc/secret"})
	v.run(t, p)
	v.expect(t, p.Name, "ls /etc/items; ls /etc/all", "bin\nsub\na\nb\nbin")
	v.expect(t, p.Name, "cat /etc/items/sub/a-file; echo; stat -L -c %a /etc/items/sub/a-file /etc/items/bin /etc/all/b", "alpha\n400\n640\n644")
	v.expect(t, p.Name, "od -An -tx1 /etc/items/bin | tr -d ' '", "0102")
	v.expect(t, p.Name, "cat /etc/secret/user; echo; stat -L -c %a /etc/secret/user", "admin\n400")
	v.expect(t, p.Name, "grep ' /etc/secret ' /proc/mounts | cut -d' ' -f3,4 | cut -d, -f1", "tmpfs ro")
	if out, err := v.shE(p.Name, "main", "touch /etc/all/new"); err == nil {
		t.Errorf("a configMap volume is writable: %s", out)
	}
}

// testMissingConfigMap: the pod waits in ContainerCreating with the
// kubelet's FailedMount event, and starts once the configMap exists.
func (v *volumesEnv) testMissingConfigMap(t *testing.T) {
	p := v.pod("cm-missing", []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "later"}}}}}, v1.VolumeMount{Name: "cfg", MountPath: "/etc/cfg"})
	framework.CreatePod(t, p)
	framework.Eventually(t, time.Minute, "a FailedMount event naming the configMap", func() (bool, error) {
		return hasEvent(t, v.ns, p.Name, "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "later" not found`), nil
	})
	got := framework.WaitForPod(t, v.ns, p.Name, 10*time.Second, func(*v1.Pod) bool { return true })
	if cs := got.Status.ContainerStatuses; got.Status.Phase != v1.PodPending || len(cs) != 1 || cs[0].State.Waiting == nil ||
		cs[0].State.Waiting.Reason != "ContainerCreating" {
		t.Fatalf("phase %s, statuses %+v; want Pending, ContainerCreating", got.Status.Phase, cs)
	}
	v.createConfigMap(t, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later"}, Data: map[string]string{"k": "here"}})
	framework.WaitForPodPhase(t, v.ns, p.Name, v1.PodRunning, 2*time.Minute)
	v.expect(t, p.Name, "cat /etc/cfg/k", "here")
}

// testServiceAccountToken: the kube-api-access volume the apiserver adds
// to every pod lets an in-cluster client (client-go's InClusterConfig)
// authenticate: token, ca.crt and namespace are where it looks. The pod
// uses the host's network: the test apiserver listens on 127.0.0.1.
func (v *volumesEnv) testServiceAccountToken(t *testing.T) {
	c := framework.Get(t)
	bin := filepath.Join(t.TempDir(), "incluster")
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./test/e2e/testdata/incluster")
	build.Dir, build.Env = c.RepoRoot, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the in-cluster client: %v\n%s", err, out)
	}
	host, port, err := net.SplitHostPort(strings.TrimPrefix(c.Server, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	file := v1.HostPathFile
	p := framework.PodFor(v.node, v.ns, "incluster", framework.Busybox("main", "/incluster"))
	p.Spec.RestartPolicy, p.Spec.HostNetwork = v1.RestartPolicyNever, true
	p.Spec.Volumes = []v1.Volume{{Name: "bin", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: bin, Type: &file}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "bin", MountPath: "/incluster", ReadOnly: true}}
	p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: host}, {Name: "KUBERNETES_SERVICE_PORT", Value: port}}
	created := framework.CreatePod(t, p)
	if len(created.Spec.Volumes) != 2 || !strings.HasPrefix(created.Spec.Volumes[1].Name, "kube-api-access-") {
		t.Fatalf("the apiserver added no kube-api-access volume: %+v", created.Spec.Volumes)
	}
	framework.WaitForPodPhase(t, v.ns, p.Name, v1.PodSucceeded, 2*time.Minute)
	out, err := framework.KubectlE("logs", "-n", v.ns, p.Name)
	if want := "system:serviceaccount:" + v.ns + ":default\n"; err != nil || out != want {
		t.Fatalf("in-cluster client said %q (%v), want %q", out, err, want)
	}
}

// testDownwardAPI: pod fields and a container's resources as files; a
// label change reaches the file in the running pod.
func (v *volumesEnv) testDownwardAPI(t *testing.T) {
	field := func(path string) *v1.ObjectFieldSelector { return &v1.ObjectFieldSelector{FieldPath: path} }
	p := v.pod("downward", []v1.Volume{{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: field("metadata.name")},
			{Path: "uid", FieldRef: field("metadata.uid")},
			{Path: "labels", FieldRef: field("metadata.labels")},
			{Path: "annotations", FieldRef: field("metadata.annotations['note']")},
			{Path: "cpu_millis", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
			{Path: "mem_mib", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "main", Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}},
		}}}}}, v1.VolumeMount{Name: "info", MountPath: "/etc/info"})
	p.Labels["tier"] = "one"
	p.Annotations = map[string]string{"note": "hello"}
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("64Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
	}
	got := v.run(t, p)
	v.expect(t, p.Name, "cat /etc/info/name; echo; cat /etc/info/uid", "downward\n"+string(got.UID))
	v.expect(t, p.Name, "cat /etc/info/labels", "app=\"downward\"\ntier=\"one\"")
	v.expect(t, p.Name, "cat /etc/info/annotations; echo; cat /etc/info/cpu_millis; echo; cat /etc/info/mem_mib", "hello\n250\n32")

	patch := []byte(`{"metadata":{"labels":{"tier":"two"}}}`)
	if _, err := framework.Get(t).Client.CoreV1().Pods(v.ns).Patch(context.Background(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, "the new label in the volume", func() (bool, error) {
		out, err := v.shE(p.Name, "main", "cat /etc/info/labels")
		return out == "app=\"downward\"\ntier=\"two\"", err
	})
}

// testHostPath: DirectoryOrCreate creates the directory the container then
// writes to; a socket passes the Socket check; a File that does not exist
// keeps its pod waiting with the kubelet's message.
func (v *volumesEnv) testHostPath(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "app.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	typ := func(ht v1.HostPathType) *v1.HostPathType { return &ht }
	p := v.pod("hostpath", []v1.Volume{
		{Name: "made", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: filepath.Join(dir, "made/here"), Type: typ(v1.HostPathDirectoryOrCreate)}}},
		{Name: "sock", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: sock, Type: typ(v1.HostPathSocket)}}},
		{Name: "null", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/dev/null", Type: typ(v1.HostPathCharDev)}}},
	}, v1.VolumeMount{Name: "made", MountPath: "/made"}, v1.VolumeMount{Name: "sock", MountPath: "/run/app.sock"},
		v1.VolumeMount{Name: "null", MountPath: "/mnt/null"})
	v.run(t, p)
	v.sh(t, p.Name, "main", "echo from-pod > /made/f")
	if b, err := os.ReadFile(filepath.Join(dir, "made/here/f")); err != nil || string(b) != "from-pod\n" {
		t.Errorf("the pod's file on the host: %q %v", b, err)
	}
	v.expect(t, p.Name, "test -S /run/app.sock && test -c /mnt/null && echo ok", "ok")

	missing := filepath.Join(dir, "missing")
	bad := v.pod("hostpath-bad", []v1.Volume{{Name: "f", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: missing, Type: typ(v1.HostPathFile)}}}},
		v1.VolumeMount{Name: "f", MountPath: "/f"})
	framework.CreatePod(t, bad)
	want := fmt.Sprintf(`MountVolume.SetUp failed for volume "f" : hostPath type check failed, %s is not a file, unable to determine its type: path %q does not exist`, missing, missing)
	framework.Eventually(t, time.Minute, "FailedMount for the missing file", func() (bool, error) {
		return hasEvent(t, v.ns, bad.Name, "FailedMount", want), nil
	})
	if got := framework.WaitForPod(t, v.ns, bad.Name, 10*time.Second, func(*v1.Pod) bool { return true }); got.Status.Phase != v1.PodPending {
		t.Errorf("pod with a missing hostPath file: phase %s", got.Status.Phase)
	}
}

// testClaim: a pod whose claim is not bound waits with FailedMount; once a
// hostPath persistentVolume is bound to it, the pod runs on that directory.
func (v *volumesEnv) testClaim(t *testing.T) {
	c := framework.Get(t).Client
	ctx := context.Background()
	dir := t.TempDir()
	pvName := "pv-" + v.ns
	class := "manual"
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: v.ns},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: pvName, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if _, err := c.CoreV1().PersistentVolumeClaims(v.ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := v.pod("claim", []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		v1.VolumeMount{Name: "data", MountPath: "/data"})
	// The scheduler holds back a pod whose claim is unbound: bound to the
	// node directly, it shows what the node does with one.
	p.Spec.NodeName = v.node
	framework.CreatePod(t, p)
	framework.Eventually(t, time.Minute, "FailedMount for the unbound claim", func() (bool, error) {
		return hasEvent(t, v.ns, p.Name, "FailedMount", `MountVolume.SetUp failed for volume "data" : error processing PVC `+v.ns+`/data: PVC is not bound`), nil
	})
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}}}}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	framework.WaitForPodPhase(t, v.ns, p.Name, v1.PodRunning, 3*time.Minute)
	v.sh(t, p.Name, "main", "echo persisted > /data/f")
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "persisted\n" {
		t.Errorf("the claim's directory on the host: %q %v", b, err)
	}
}

// testSubPath: subPath and subPathExpr mount directories of an emptyDir
// (created when missing, shared with the init container), a subPath of a
// configMap mounts one file; readOnly mounts refuse writes; a subPathExpr
// that expands to a backstep keeps the container from being created.
func (v *volumesEnv) testSubPath(t *testing.T) {
	v.createConfigMap(t, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "one-file"}, Data: map[string]string{"key": "value"}})
	p := v.pod("subpath", []v1.Volume{emptyDir("data", "", ""),
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "one-file"}}}}},
		v1.VolumeMount{Name: "data", MountPath: "/from-init", SubPath: "init"},
		v1.VolumeMount{Name: "data", MountPath: "/mine", SubPathExpr: "pods/$(POD_NAME)"},
		v1.VolumeMount{Name: "data", MountPath: "/ro", ReadOnly: true},
		v1.VolumeMount{Name: "cfg", MountPath: "/etc/key.conf", SubPath: "key"})
	p.Spec.Containers[0].Env = []v1.EnvVar{{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	init := framework.Busybox("init", "sh", "-c", "echo from-init > /out/f")
	init.VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/out", SubPath: "init"}}
	p.Spec.InitContainers = []v1.Container{init}
	got := v.run(t, p)
	v.expect(t, p.Name, "cat /from-init/f /etc/key.conf", "from-init\nvalue")
	v.sh(t, p.Name, "main", "echo mine > /mine/f")
	v.expect(t, p.Name, "cat /ro/pods/subpath/f; stat -c %a /ro/pods/subpath", "mine\n777")
	if out, err := v.shE(p.Name, "main", "touch /ro/new"); err == nil || !strings.Contains(out+err.Error(), "Read-only file system") {
		t.Errorf("write to a readOnly mount: %q %v", out, err)
	}
	host := filepath.Join(v.podDir(got.UID), "volumes/kubernetes.io~empty-dir/data/pods/subpath/f")
	if b, err := os.ReadFile(host); err != nil || string(b) != "mine\n" {
		t.Errorf("on the host, %s: %q %v", host, b, err)
	}

	bad := v.pod("subpath-bad", []v1.Volume{emptyDir("data", "", "")}, v1.VolumeMount{Name: "data", MountPath: "/x", SubPathExpr: "$(UP)/etc"})
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "UP", Value: ".."}}
	seen := watchWaitingReasons(t, v.ns, bad.Name, "CreateContainerConfigError")
	framework.CreatePod(t, bad)
	select {
	case <-seen:
	case <-time.After(time.Minute):
		t.Fatalf("no CreateContainerConfigError for a subPathExpr with '..'\n%s", framework.DescribePod(v.ns, bad.Name))
	}
	framework.Eventually(t, 30*time.Second, "an event naming the subPath", func() (bool, error) {
		return hasEvent(t, v.ns, bad.Name, "Failed", "unable to provision SubPath `../etc`: must not contain '..'"), nil
	})
}

// testLiveUpdate: a configMap's new data reaches the running pod's volume
// (the kubelet re-syncs within a minute or so); a subPath mount of it keeps
// the old content, as on the kubelet.
func (v *volumesEnv) testLiveUpdate(t *testing.T) {
	v.createConfigMap(t, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Data: map[string]string{"k": "v1"}})
	cfg := v1.Volume{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "live"}}}}
	p := v.pod("live", []v1.Volume{cfg}, v1.VolumeMount{Name: "cfg", MountPath: "/etc/cfg"},
		v1.VolumeMount{Name: "cfg", MountPath: "/etc/k-subpath", SubPath: "k"})
	v.run(t, p)
	v.expect(t, p.Name, "cat /etc/cfg/k /etc/k-subpath", "v1v1")
	cm, err := framework.Get(t).Client.CoreV1().ConfigMaps(v.ns).Get(context.Background(), "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "v2"
	if _, err := framework.Get(t).Client.CoreV1().ConfigMaps(v.ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, "the configMap's new data in the volume", func() (bool, error) {
		out, err := v.shE(p.Name, "main", "cat /etc/cfg/k")
		return out == "v2", err
	})
	v.expect(t, p.Name, "cat /etc/k-subpath", "v1")
}

// testPodDirRemoved: once the pod is deleted, its directory under
// --root-dir is gone, with its tmpfs and subPath mounts.
func (v *volumesEnv) testPodDirRemoved(t *testing.T) {
	p := v.pod("gone", []v1.Volume{emptyDir("mem", v1.StorageMediumMemory, ""), emptyDir("disk", "", "")},
		v1.VolumeMount{Name: "mem", MountPath: "/mem"}, v1.VolumeMount{Name: "disk", MountPath: "/sub", SubPath: "dir"})
	got := v.run(t, p)
	dir := v.podDir(got.UID)
	mounts := strings.Join(hostMountsBelow(t, dir), "\n")
	for _, want := range []string{"/volumes/kubernetes.io~empty-dir/mem", "/volumes/kubernetes.io~projected/kube-api-access-", "/volume-subpaths/disk/main/1"} {
		if !strings.Contains(mounts, dir+want) {
			t.Fatalf("mounts below %s while the pod runs:\n%s\nwant one at %s", dir, mounts, want)
		}
	}
	framework.DeletePod(t, v.ns, p.Name, nil)
	framework.WaitForPodGone(t, v.ns, p.Name, time.Minute)
	framework.Eventually(t, 30*time.Second, "the pod's directory removed", func() (bool, error) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), nil
	})
	if mounts := hostMountsBelow(t, dir); len(mounts) != 0 {
		t.Errorf("mounts left below %s: %v", dir, mounts)
	}
}

// deleteAll deletes the test's pods with their default grace period and
// waits until runlet has removed every pod directory (and its mounts).
func (v *volumesEnv) deleteAll(t *testing.T) {
	c := framework.Get(t).Client
	if err := c.CoreV1().Pods(v.ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting the pods: %v", err)
		return
	}
	framework.Eventually(t, 2*time.Minute, "every pod directory removed", func() (bool, error) {
		entries, err := os.ReadDir(filepath.Join(v.root, "pods"))
		return len(entries) == 0, err
	})
	if mounts := hostMountsBelow(t, v.root); len(mounts) > 0 {
		t.Errorf("mounts left under runlet's root dir: %v", mounts)
	}
}

// hostMountsBelow lists the host's mount points below dir.
func hostMountsBelow(t *testing.T, dir string) []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			out = append(out, f[1])
		}
	}
	return out
}

// testImageVolume: an image volume mounts an image present on the node
// read-only; one whose image is missing (pull policy Never) keeps the
// container waiting with the kubelet's ErrImageNeverPull.
func (v *volumesEnv) testImageVolume(t *testing.T) {
	vol := func(ref string, policy v1.PullPolicy) v1.Volume {
		return v1.Volume{Name: "img", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: ref, PullPolicy: policy}}}
	}
	p := v.pod("image-vol", []v1.Volume{vol(framework.BusyboxImage, v1.PullIfNotPresent)}, v1.VolumeMount{Name: "img", MountPath: "/img"})
	v.run(t, p)
	v.expect(t, p.Name, "test -x /img/bin/busybox && echo present", "present")
	if out, err := v.shE(p.Name, "main", "touch /img/x"); err == nil {
		t.Errorf("wrote into an image volume: %q", out)
	}

	bad := v.pod("image-vol-missing", []v1.Volume{vol("localhost/runlet/no-such-image:1", v1.PullNever)}, v1.VolumeMount{Name: "img", MountPath: "/img"})
	framework.CreatePod(t, bad)
	framework.WaitForPod(t, v.ns, bad.Name, time.Minute, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ErrImageNeverPull"
	})
}
