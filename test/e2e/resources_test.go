package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	systemReservedCPU = "500m"
	kubeReservedCPU   = "500m"
	reservedMemory    = "512Mi"
	podMaxPids        = 32
)

// TestResources runs a node that reserves resources and caps pods'
// processes, and checks node allocatable, admission, the cgroups the
// containers get, OOM kills and the downward API's default limits.
func TestResources(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{
		"--system-reserved", "cpu=" + systemReservedCPU + ",memory=" + reservedMemory,
		"--kube-reserved", "cpu=" + kubeReservedCPU,
		"--pod-max-pids", fmt.Sprint(podMaxPids),
		"--allowed-unsafe-sysctls", "kernel.msg*",
	}})
	ns := framework.Namespace(t)
	n, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), rl.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkAllocatable(t, n)
	// Admission first, alone: "used" in its messages counts the other pods.
	t.Run("Admission", func(t *testing.T) { testAdmission(t, n, ns) })
	t.Run("Group", func(t *testing.T) {
		t.Run("CgroupLimits", func(t *testing.T) { t.Parallel(); testCgroupLimits(t, rl.NodeName, ns) })
		t.Run("PodMaxPids", func(t *testing.T) { t.Parallel(); testPodMaxPids(t, rl.NodeName, ns) })
		t.Run("OOMKilled", func(t *testing.T) { t.Parallel(); testOOMKilled(t, rl.NodeName, ns) })
		t.Run("DownwardAPIDefaultLimits", func(t *testing.T) { t.Parallel(); testDefaultLimits(t, n, ns) })
		t.Run("AllowedUnsafeSysctl", func(t *testing.T) { t.Parallel(); testAllowedUnsafeSysctl(t, rl.NodeName, ns) })
	})
}

func checkAllocatable(t *testing.T, n *v1.Node) {
	want := n.Status.Capacity.Cpu().DeepCopy()
	want.Sub(resource.MustParse(systemReservedCPU))
	want.Sub(resource.MustParse(kubeReservedCPU))
	if got := n.Status.Allocatable.Cpu(); got.Cmp(want) != 0 {
		t.Errorf("allocatable cpu %s; want capacity %s - %s - %s", got, n.Status.Capacity.Cpu(), systemReservedCPU, kubeReservedCPU)
	}
	// The kubelet also keeps the hard eviction threshold of memory
	// (memory.available<100Mi by default) from pods.
	wantMem := n.Status.Capacity.Memory().DeepCopy()
	wantMem.Sub(resource.MustParse(reservedMemory))
	wantMem.Sub(resource.MustParse("100Mi"))
	if got := n.Status.Allocatable.Memory(); got.Cmp(wantMem) != 0 {
		t.Errorf("allocatable memory %s; want capacity %s - %s - 100Mi (eviction-hard)", got, n.Status.Capacity.Memory(), reservedMemory)
	}
}

// testAdmission binds pods straight to the node (the scheduler would not
// place them): the node rejects them as the kubelet does.
func testAdmission(t *testing.T, n *v1.Node, ns string) {
	alloc := n.Status.Allocatable
	overCPU := alloc.Cpu().MilliValue() + 100
	overMem := alloc.Memory().Value() + 1<<20
	for _, tc := range []struct {
		name, reason string
		req          v1.ResourceList
		msg          string
	}{
		{"out-of-cpu", "OutOfcpu", v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(overCPU, resource.DecimalSI)},
			fmt.Sprintf("Node didn't have enough resource: cpu, requested: %d, used: 0, capacity: %d", overCPU, alloc.Cpu().MilliValue())},
		{"out-of-memory", "OutOfmemory", v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(overMem, resource.BinarySI)},
			fmt.Sprintf("Node didn't have enough resource: memory, requested: %d, used: 0, capacity: %d", overMem, alloc.Memory().Value())},
	} {
		pod := framework.PodFor(n.Name, ns, tc.name, framework.Busybox("c", "true"))
		pod.Spec.NodeSelector, pod.Spec.NodeName = nil, n.Name
		pod.Spec.Containers[0].Resources.Requests = tc.req
		created := framework.CreatePod(t, pod)
		p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodFailed, 90*time.Second)
		if p.Status.Reason != tc.reason || p.Status.Message != "Pod was rejected: "+tc.msg {
			t.Errorf("%s: reason %q message %q; want %q %q", tc.name, p.Status.Reason, p.Status.Message, tc.reason, "Pod was rejected: "+tc.msg)
		}
		framework.Eventually(t, 30*time.Second, "a "+tc.reason+" event", func() (bool, error) {
			return hasEvent(t, ns, pod.Name, tc.reason, tc.msg), nil
		})
		if len(framework.Sandboxes(t, created.UID)) != 0 {
			t.Errorf("%s: a rejected pod reached the backend", tc.name)
		}
	}
	// What fits is admitted.
	fits := framework.PodFor(n.Name, ns, "fits", framework.Busybox("c", "true"))
	fits.Spec.NodeSelector, fits.Spec.NodeName = nil, n.Name
	fits.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *alloc.Cpu()}
	if p, _ := runToEnd(t, fits); p.Status.Phase != v1.PodSucceeded {
		t.Errorf("a pod requesting all allocatable cpu: %s %s", p.Status.Phase, p.Status.Message)
	}
}

// testCgroupLimits reads the container's own cgroup from inside it.
func testCgroupLimits(t *testing.T, node, ns string) {
	script := `if [ -e /sys/fs/cgroup/cpu/cpu.shares ]; then
  cat /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us /sys/fs/cgroup/memory/memory.limit_in_bytes
  cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || echo no-swap-accounting
else
  cat /sys/fs/cgroup/cpu.weight /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max
fi`
	c := sh("c", script)
	c.Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	p, out := runToEnd(t, framework.PodFor(node, ns, "cgroups", c))
	if p.Status.Phase != v1.PodSucceeded {
		t.Fatalf("phase %s: %s", p.Status.Phase, out)
	}
	lines := strings.Fields(out)
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.shares"); err == nil { // cgroup v1, as on these machines
		want := []string{"256", "50000", "100000", "67108864"}
		if len(lines) != 5 || strings.Join(lines[:4], " ") != strings.Join(want, " ") ||
			lines[4] != "67108864" && lines[4] != "no-swap-accounting" {
			t.Errorf("cgroup v1: shares, quota, period, memory, memory+swap = %v; want %v and no swap above the limit", lines, want)
		}
		return
	}
	if want := "10 50000 100000 67108864"; strings.Join(lines, " ") != want { // weight of 256 shares
		t.Errorf("cgroup v2: %v; want %s", lines, want)
	}
}

// testPodMaxPids: the pod's cgroup caps its processes; the container
// cannot fork past the limit.
func testPodMaxPids(t *testing.T, node, ns string) {
	// sh counts the sleeps it started; its fork fails (and it exits) at the
	// limit, a few processes short of it (sh itself, the pod's infra).
	pod := framework.PodFor(node, ns, "pids", sh("c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do sleep 60 & i=$((i+1)); echo $i; done 2>&1", 2*podMaxPids)))
	p, out := runToEnd(t, pod)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var started int
	if len(lines) > 1 {
		_, _ = fmt.Sscan(lines[len(lines)-2], &started)
	}
	if !strings.Contains(lines[len(lines)-1], "can't fork") || started < podMaxPids-8 || started >= podMaxPids {
		t.Errorf("output %q; want forks refused after about %d processes", out, podMaxPids)
	}
	sbs := framework.Sandboxes(t, p.UID)
	if len(sbs) != 1 {
		t.Fatalf("%d sandboxes in the backend", len(sbs))
	}
	cg := sbs[0].CgroupParent
	for _, f := range []string{filepath.Join("/sys/fs/cgroup/pids", cg, "pids.max"), filepath.Join("/sys/fs/cgroup", cg, "pids.max")} {
		if b, err := os.ReadFile(f); err == nil {
			if strings.TrimSpace(string(b)) != fmt.Sprint(podMaxPids) {
				t.Errorf("%s = %s; want %d", f, b, podMaxPids)
			}
			return
		}
	}
	t.Errorf("no pids.max for the pod's cgroup %s", cg)
}

func testOOMKilled(t *testing.T, node, ns string) {
	// The upstream OOM target (e2e_node's oomkiller test): a 20M buffer under
	// a 15Mi limit, allocated once the container has run for a while.
	c := sh("c", "sleep 5 && dd if=/dev/zero of=/dev/null bs=20M")
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("15Mi")}
	p, _ := runToEnd(t, framework.PodFor(node, ns, "oom", c))
	term := p.Status.ContainerStatuses[0].State.Terminated
	if p.Status.Phase != v1.PodFailed || term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Fatalf("phase %s, terminated %+v; want Failed, OOMKilled with exit code 137", p.Status.Phase, term)
	}
	// The status stays so: later relists re-read podman.
	time.Sleep(3 * time.Second)
	p = framework.WaitForPod(t, ns, "oom", 10*time.Second, func(*v1.Pod) bool { return true })
	if r := p.Status.ContainerStatuses[0].State.Terminated.Reason; r != "OOMKilled" {
		t.Errorf("later: reason %q", r)
	}
}

// testDefaultLimits: without limits, limits.cpu and limits.memory are the
// node's allocatable (the upstream "default limits.cpu/memory from node
// allocatable" spec, against this node's reserved resources).
func testDefaultLimits(t *testing.T, n *v1.Node, ns string) {
	c := sh("c", "echo cpu=$CPU_LIMIT mem=$MEMORY_LIMIT millis=$CPU_MILLIS")
	ref := func(name, res, divisor string) v1.EnvVar {
		sel := &v1.ResourceFieldSelector{Resource: res}
		if divisor != "" {
			sel.Divisor = resource.MustParse(divisor)
		}
		return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: sel}}
	}
	c.Env = []v1.EnvVar{ref("CPU_LIMIT", "limits.cpu", ""), ref("MEMORY_LIMIT", "limits.memory", ""), ref("CPU_MILLIS", "limits.cpu", "1m")}
	_, out := runToEnd(t, framework.PodFor(n.Name, ns, "default-limits", c))
	alloc := n.Status.Allocatable
	cores := (alloc.Cpu().MilliValue() + 999) / 1000
	want := fmt.Sprintf("cpu=%d mem=%d millis=%d\n", cores, alloc.Memory().Value(), alloc.Cpu().MilliValue())
	if out != want {
		t.Errorf("env %q; want %q (node allocatable)", out, want)
	}
}

func testAllowedUnsafeSysctl(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "msgmax", sh("c", "cat /proc/sys/kernel/msgmax"))
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{{Name: "kernel.msgmax", Value: "12345"}}}
	if p, out := runToEnd(t, pod); p.Status.Phase != v1.PodSucceeded || out != "12345\n" {
		t.Errorf("allowed unsafe sysctl: phase %s %s, %q", p.Status.Phase, p.Status.Message, out)
	}
}
