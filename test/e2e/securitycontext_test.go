package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestSecurityContext checks, from inside the containers, what each
// securityContext field does on a runlet node with the defaults a user gets.
func TestSecurityContext(t *testing.T) {
	t.Parallel()
	numeric, named := userImages(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{Images: []string{numeric, named}})
	ns := framework.Namespace(t)
	node := rl.NodeName
	t.Run("UserGroupsFSGroup", func(t *testing.T) { t.Parallel(); testIDs(t, node, ns) })
	t.Run("RunAsNonRoot", func(t *testing.T) { t.Parallel(); testRunAsNonRoot(t, node, ns) })
	t.Run("ReadOnlyRootFilesystem", func(t *testing.T) { t.Parallel(); testReadOnlyRootfs(t, node, ns) })
	t.Run("Capabilities", func(t *testing.T) { t.Parallel(); testCapabilities(t, node, ns) })
	t.Run("NoNewPrivs", func(t *testing.T) { t.Parallel(); testNoNewPrivs(t, node, ns) })
	t.Run("Privileged", func(t *testing.T) { t.Parallel(); testPrivileged(t, node, ns) })
	t.Run("Seccomp", func(t *testing.T) { t.Parallel(); testSeccomp(t, rl, ns) })
	t.Run("Sysctls", func(t *testing.T) { t.Parallel(); testSysctls(t, node, ns) })
	t.Run("HostPIDAndIPC", func(t *testing.T) { t.Parallel(); testHostNamespaces(t, node, ns) })
	t.Run("UnhonouredFields", func(t *testing.T) { t.Parallel(); testUnhonoured(t, node, ns) })
}

// runToEnd runs a pod whose containers end on their own (restartPolicy Never)
// and returns it once it has finished, with the first container's log.
func runToEnd(t *testing.T, pod *v1.Pod) (*v1.Pod, string) {
	t.Helper()
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, pod)
	p := framework.WaitForPod(t, pod.Namespace, pod.Name, 2*time.Minute, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	})
	return p, framework.Kubectl(t, "logs", "-n", pod.Namespace, pod.Name, "-c", pod.Spec.Containers[0].Name)
}

func sh(name, script string) v1.Container { return framework.Busybox(name, "sh", "-c", script) }

func i64(v int64) *int64 { return &v }
func boolp(v bool) *bool { return &v }

func testIDs(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "ids", sh("c", "id -u; id -g; id -G"))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: i64(1000), RunAsGroup: i64(2000),
		SupplementalGroups: []int64{3000}, FSGroup: i64(4000)}
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{RunAsUser: i64(1001)} // the container's wins
	p, out := runToEnd(t, pod)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if p.Status.Phase != v1.PodSucceeded || len(lines) != 3 {
		t.Fatalf("phase %s, output %q", p.Status.Phase, out)
	}
	if lines[0] != "1001" || lines[1] != "2000" {
		t.Errorf("uid %s gid %s; want 1001 (the container's) and 2000 (the pod's)", lines[0], lines[1])
	}
	groups := strings.Fields(lines[2])
	for _, g := range []string{"2000", "3000", "4000"} {
		if !contains(groups, g) {
			t.Errorf("groups %v lack %s (primary, supplementalGroups, fsGroup)", groups, g)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	imageOnce sync.Once
	imageErr  error
)

// userImages builds images with USER 1234 and USER nobody from the test
// image, once per test binary (podman commit; no registry).
func userImages(t *testing.T) (numeric, named string) {
	numeric, named = "localhost/runlet/busybox-uid1234:e2e", "localhost/runlet/busybox-nobody:e2e"
	imageOnce.Do(func() {
		framework.EnsureImages(t)
		for img, user := range map[string]string{numeric: "1234", named: "nobody"} {
			ctr := "runlet-e2e-img-" + strings.NewReplacer("/", "-", ":", "-").Replace(img)
			_, _ = framework.PodmanCLIE("rm", "-f", ctr)
			if _, imageErr = framework.PodmanCLIE("create", "--name", ctr, framework.BusyboxImage, "true"); imageErr != nil {
				return
			}
			_, imageErr = framework.PodmanCLIE("commit", "-q", "--change", "USER "+user, ctr, img)
			_, _ = framework.PodmanCLIE("rm", "-f", ctr)
			if imageErr != nil {
				return
			}
		}
	})
	if imageErr != nil {
		t.Fatalf("building the user images: %v", imageErr)
	}
	return numeric, named
}

func testRunAsNonRoot(t *testing.T, node, ns string) {
	numeric, named := userImages(t)
	nonRoot := &v1.SecurityContext{RunAsNonRoot: boolp(true)}

	// The image's own user (1234) is checked and kept.
	ok := framework.PodFor(node, ns, "nonroot-image", sh("c", "id -u"))
	ok.Spec.Containers[0].Image, ok.Spec.Containers[0].SecurityContext = numeric, nonRoot
	if p, out := runToEnd(t, ok); p.Status.Phase != v1.PodSucceeded || strings.TrimSpace(out) != "1234" {
		t.Errorf("non-root image: phase %s, uid %q; want Succeeded as 1234", p.Status.Phase, out)
	}

	for _, tc := range []struct{ name, image, msg string }{
		{"root-image", framework.BusyboxImage, "container has runAsNonRoot and image will run as root"},
		{"named-user-image", named, "container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root"},
	} {
		pod := framework.PodFor(node, ns, tc.name, sh("c", "id -u"))
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		pod.Spec.Containers[0].Image, pod.Spec.Containers[0].SecurityContext = tc.image, nonRoot
		created := framework.CreatePod(t, pod)
		want := fmt.Sprintf("%s (pod: %q, container: c)", tc.msg, fmt.Sprintf("%s_%s(%s)", pod.Name, ns, created.UID))
		p := framework.WaitForPod(t, ns, pod.Name, 90*time.Second, func(p *v1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError"
		})
		if w := p.Status.ContainerStatuses[0].State.Waiting; w.Message != want || p.Status.Phase != v1.PodPending {
			t.Errorf("%s: phase %s, waiting message %q; want Pending, %q", tc.name, p.Status.Phase, w.Message, want)
		}
		framework.Eventually(t, 30*time.Second, "a Failed event with the kubelet's message", func() (bool, error) {
			return hasEvent(t, ns, pod.Name, "Failed", "Error: "+want), nil
		})
		for _, c := range framework.Containers(t, created.UID) {
			t.Errorf("%s: container %s created; want none", tc.name, c.Name())
		}
	}
}

func testReadOnlyRootfs(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "readonly", sh("c", "touch /checkfile || echo root-denied; touch /tmp/x || echo tmp-denied; exit 0"))
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{ReadOnlyRootFilesystem: boolp(true)}
	_, out := runToEnd(t, pod)
	if !strings.Contains(out, "Read-only file system") || !strings.Contains(out, "root-denied") || !strings.Contains(out, "tmp-denied") {
		t.Errorf("output %q; want writes to / and /tmp refused", out)
	}
	rw := framework.PodFor(node, ns, "readwrite", sh("c", "touch /checkfile && echo written"))
	rw.Spec.Containers[0].SecurityContext = &v1.SecurityContext{ReadOnlyRootFilesystem: boolp(false)}
	if p, out := runToEnd(t, rw); p.Status.Phase != v1.PodSucceeded || !strings.Contains(out, "written") {
		t.Errorf("readOnlyRootFilesystem=false: phase %s, %q", p.Status.Phase, out)
	}
}

// procStatus is the value of a field of /proc/self/status in a log.
func procStatus(out, field string) string {
	m := regexp.MustCompile(`(?m)^` + field + `:\s*(\S+)`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

func testCapabilities(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "caps", sh("c", "cat /proc/self/status"))
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Capabilities: &v1.Capabilities{
		Drop: []v1.Capability{"ALL"}, Add: []v1.Capability{"NET_ADMIN", "CHOWN"}}}
	_, out := runToEnd(t, pod)
	// CAP_CHOWN is bit 0, CAP_NET_ADMIN bit 12.
	if got := procStatus(out, "CapEff"); got != "0000000000001001" {
		t.Errorf("CapEff %q; want 0000000000001001 (CHOWN and NET_ADMIN only)", got)
	}
}

func testNoNewPrivs(t *testing.T, node, ns string) {
	for _, tc := range []struct {
		name  string
		allow *bool
		want  string
	}{{"nnp-false", boolp(false), "1"}, {"nnp-unset", nil, "0"}, {"nnp-true", boolp(true), "0"}} {
		pod := framework.PodFor(node, ns, tc.name, sh("c", "cat /proc/self/status"))
		pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: tc.allow, RunAsUser: i64(1000)}
		if _, out := runToEnd(t, pod); procStatus(out, "NoNewPrivs") != tc.want {
			t.Errorf("%s: NoNewPrivs %q; want %s", tc.name, procStatus(out, "NoNewPrivs"), tc.want)
		}
	}
}

func testPrivileged(t *testing.T, node, ns string) {
	// The upstream spec's check: adding a link needs CAP_NET_ADMIN, which a
	// privileged container has (the link type may be missing from the kernel).
	script := "ip link add dummy0 type dummy || true; cat /proc/self/status"
	pod := framework.PodFor(node, ns, "privileged", sh("priv", script), sh("unpriv", script))
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: boolp(true)}
	pod.Spec.Containers[1].SecurityContext = &v1.SecurityContext{Privileged: boolp(false)}
	p, priv := runToEnd(t, pod)
	unpriv := framework.Kubectl(t, "logs", "-n", ns, pod.Name, "-c", "unpriv")
	if p.Status.Phase != v1.PodSucceeded || strings.Contains(priv, "Operation not permitted") || !hasCap(procStatus(priv, "CapEff"), 21) {
		t.Errorf("privileged: %q; want the link allowed and CAP_SYS_ADMIN", priv)
	}
	if !strings.Contains(unpriv, "Operation not permitted") || hasCap(procStatus(unpriv, "CapEff"), 21) {
		t.Errorf("unprivileged: %q; want Operation not permitted, no CAP_SYS_ADMIN", unpriv)
	}
}

// hasCap reads a capability bit of a /proc/<pid>/status mask.
func hasCap(mask string, bit uint) bool {
	var v uint64
	if _, err := fmt.Sscanf(mask, "%x", &v); err != nil {
		return false
	}
	return v&(1<<bit) != 0
}

func testSeccomp(t *testing.T, rl *framework.Runlet, ns string) {
	dir := filepath.Join(rl.RootDir, "seccomp", "profiles")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	profile := `{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO"}]}`
	if err := os.WriteFile(filepath.Join(dir, "no-mkdir.json"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	local := "profiles/no-mkdir.json"
	for _, tc := range []struct {
		name    string
		profile *v1.SeccompProfile
		mode    string // /proc/self/status Seccomp: 0 off, 2 filter
		mkdir   bool
	}{
		{"seccomp-unset", nil, "0", true}, // the kubelet's default: Unconfined
		{"seccomp-runtimedefault", &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}, "2", true},
		{"seccomp-localhost", &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: &local}, "2", false},
	} {
		pod := framework.PodFor(rl.NodeName, ns, tc.name, sh("c", "cat /proc/self/status; mkdir /tmp/d && echo mkdir-ok; exit 0"))
		pod.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: tc.profile}
		_, out := runToEnd(t, pod)
		if got := procStatus(out, "Seccomp"); got != tc.mode || strings.Contains(out, "mkdir-ok") != tc.mkdir {
			t.Errorf("%s: Seccomp %q, mkdir allowed %v; want %s, %v\n%s", tc.name, got, strings.Contains(out, "mkdir-ok"), tc.mode, tc.mkdir, out)
		}
	}
}

func testSysctls(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "sysctl-safe", sh("c", "cat /proc/sys/kernel/shm_rmid_forced /proc/sys/net/ipv4/ip_unprivileged_port_start"))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{
		{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net/ipv4/ip_unprivileged_port_start", Value: "101"}}}
	if p, out := runToEnd(t, pod); p.Status.Phase != v1.PodSucceeded || out != "1\n101\n" {
		t.Errorf("safe sysctls: phase %s, %q; want 1 and 101", p.Status.Phase, out)
	}

	unsafe := framework.PodFor(node, ns, "sysctl-unsafe", sh("c", "true"))
	unsafe.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "10000"}}}
	created := framework.CreatePod(t, unsafe)
	p := framework.WaitForPodPhase(t, ns, unsafe.Name, v1.PodFailed, 90*time.Second)
	if p.Status.Reason != "SysctlForbidden" || p.Status.Message != `Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted` {
		t.Errorf("unsafe sysctl: reason %q message %q", p.Status.Reason, p.Status.Message)
	}
	framework.Eventually(t, 30*time.Second, "a SysctlForbidden event", func() (bool, error) {
		return hasEvent(t, ns, unsafe.Name, "SysctlForbidden", `forbidden sysctl: "kernel.msgmax" not allowlisted`), nil
	})
	if n := len(framework.Sandboxes(t, created.UID)); n != 0 {
		t.Errorf("a rejected pod got %d sandboxes in the backend", n)
	}
}

func testHostNamespaces(t *testing.T, node, ns string) {
	hostPID, _ := os.Readlink("/proc/self/ns/pid")
	hostIPC, _ := os.Readlink("/proc/self/ns/ipc")
	script := "readlink /proc/self/ns/pid; readlink /proc/self/ns/ipc"
	host := framework.PodFor(node, ns, "host-ns", sh("c", script))
	host.Spec.HostPID, host.Spec.HostIPC = true, true
	_, out := runToEnd(t, host)
	if out != hostPID+"\n"+hostIPC+"\n" {
		t.Errorf("hostPID/hostIPC pod: %q; want the host's %s %s", out, hostPID, hostIPC)
	}
	own := framework.PodFor(node, ns, "own-ns", sh("c", script))
	_, out = runToEnd(t, own)
	if strings.Contains(out, hostPID) || strings.Contains(out, hostIPC) {
		t.Errorf("plain pod: %q; want namespaces of its own", out)
	}
}

// testUnhonoured: SELinux is not enabled on these hosts; the pod runs and
// is told so. (User namespaces are honoured: TestUserNamespaces.)
func testUnhonoured(t *testing.T, node, ns string) {
	if _, err := os.Stat("/sys/fs/selinux/enforce"); err == nil {
		t.Skip("SELinux is enabled on this host")
	}
	pod := framework.PodFor(node, ns, "selinux", sh("c", "true"))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c123,c456"}}
	if p, _ := runToEnd(t, pod); p.Status.Phase != v1.PodSucceeded {
		t.Errorf("phase %s", p.Status.Phase)
	}
	framework.Eventually(t, 30*time.Second, "an UnsupportedField event naming seLinuxOptions", func() (bool, error) {
		return hasEvent(t, ns, pod.Name, "UnsupportedField", "spec.securityContext.seLinuxOptions (SELinux is not enabled on this host)"), nil
	})
}
