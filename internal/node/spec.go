// Package node describes the virtual node: its labels, taint, capacity,
// addresses and conditions, and keeps Ready honest.
package node

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Options are the node's settings.
type Options struct {
	Name        string
	InternalIP  string
	KubeletPort int32
	MaxPods     int
	// StoragePath is measured for ephemeral-storage capacity.
	StoragePath string
	Version     string
	Host        runtime.HostInfo
	// Reserved is what the node keeps from pods (--system-reserved and
	// --kube-reserved): allocatable is capacity minus it.
	Reserved []v1.ResourceList
	// Taints the node registers with (--register-with-taints).
	Taints []v1.Taint
	// Labels are added to runlet's own labels (--node-labels), and win over them.
	Labels map[string]string
	// PodCIDR is registered as the node's pod range (--pod-cidr), for
	// clusters that allocate none.
	PodCIDR string
	// NotReady is why the node registers NotReady (a pod network that is
	// not ready yet); nil: Ready.
	NotReady error
}

// RegisteredByAnnotation marks a Node runlet registered, tainted or not, so
// that runlet never takes over a kubelet's node of the same name.
const RegisteredByAnnotation = "runlet.dev/registered-by"

// Fill writes the node's spec and status into n (the framework's template).
func Fill(n *v1.Node, o Options) error {
	capacity, err := Capacity(o)
	if err != nil {
		return err
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[RegisteredByAnnotation] = "runlet"
	for k, v := range map[string]string{
		"type":                   "virtual-kubelet",
		"kubernetes.io/os":       goruntime.GOOS,
		"kubernetes.io/arch":     goruntime.GOARCH,
		"kubernetes.io/hostname": o.Name,
	} {
		n.Labels[k] = v
	}
	for k, v := range o.Labels {
		n.Labels[k] = v
	}
	n.Spec.Taints = append([]v1.Taint(nil), o.Taints...)
	n.Status.Capacity = capacity
	n.Status.Allocatable = Allocatable(capacity, o.Reserved...)
	n.Status.Addresses = []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: o.InternalIP},
		{Type: v1.NodeHostName, Address: o.Name},
	}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = o.KubeletPort
	n.Status.NodeInfo = nodeInfo(o)
	n.Status.DeclaredFeatures = DeclaredFeatures(o.Version)
	n.Status.Phase = v1.NodeRunning
	n.Status.Conditions = Conditions(o.NotReady)
	if o.PodCIDR != "" {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = o.PodCIDR, []string{o.PodCIDR}
	}
	return nil
}

// Capacity reads cpu, memory and ephemeral storage from the host.
func Capacity(o Options) (v1.ResourceList, error) {
	mem, err := memTotal()
	if err != nil {
		return nil, err
	}
	var st unix.Statfs_t
	path := o.StoragePath
	if path == "" {
		path = "/"
	}
	if err := unix.Statfs(path, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", path, err)
	}
	cpus := int64(goruntime.NumCPU())
	if o.Host.Remote && o.Host.CPUs > 0 && o.Host.MemoryBytes > 0 {
		// Pods run on the backend's host: schedule against its size.
		cpus, mem = int64(o.Host.CPUs), o.Host.MemoryBytes
	}
	return v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(cpus, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(mem, resource.BinarySI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(int64(st.Blocks)*st.Bsize, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(int64(o.MaxPods), resource.DecimalSI),
	}, nil
}

func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		var kb int64
		if n, _ := fmt.Sscanf(s.Text(), "MemTotal: %d kB", &kb); n == 1 {
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("MemTotal not found in /proc/meminfo")
}

func nodeInfo(o Options) v1.NodeSystemInfo {
	var u unix.Utsname
	_ = unix.Uname(&u)
	kernel := o.Host.KernelVersion
	if kernel == "" {
		kernel = unix.ByteSliceToString(u.Release[:])
	}
	return v1.NodeSystemInfo{
		MachineID:               readTrim("/etc/machine-id"),
		BootID:                  readTrim("/proc/sys/kernel/random/boot_id"),
		KernelVersion:           kernel,
		OSImage:                 osImage(),
		OperatingSystem:         goruntime.GOOS,
		Architecture:            goruntime.GOARCH,
		ContainerRuntimeVersion: o.Host.RuntimeName + "://" + o.Host.RuntimeVersion,
		KubeletVersion:          o.Version,
	}
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

func osImage() string {
	f, err := os.Open("/etc/os-release")
	if err != nil {
		return "Linux"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

// Conditions returns the node conditions; notReady, when set, is why the
// node is not ready, and pressure lists the pressure conditions that hold
// (the eviction manager's).
func Conditions(notReady error, pressure ...v1.NodeConditionType) []v1.NodeCondition {
	now := metav1.Now()
	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
		Message: "runlet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}
	if notReady != nil {
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, "KubeletNotReady", notReady.Error()
	}
	conds := []v1.NodeCondition{ready}
	for _, pc := range pressureConditions {
		c := v1.NodeCondition{Type: pc.typ, Status: v1.ConditionFalse, Reason: pc.falseReason, Message: pc.falseMessage,
			LastHeartbeatTime: now, LastTransitionTime: now}
		if slices.Contains(pressure, pc.typ) {
			c.Status, c.Reason, c.Message = v1.ConditionTrue, pc.trueReason, pc.trueMessage
		}
		conds = append(conds, c)
	}
	return append(conds, v1.NodeCondition{Type: v1.NodeNetworkUnavailable, Status: v1.ConditionFalse, Reason: "RouteCreated",
		Message: "runlet configures the pod network (CNI)", LastHeartbeatTime: now, LastTransitionTime: now})
}

// pressureCondition is how the kubelet's node status setters word one
// pressure condition, and the events they record when it changes.
type pressureCondition struct {
	typ                       v1.NodeConditionType
	trueReason, trueMessage   string
	falseReason, falseMessage string
	trueEvent, falseEvent     string
}

var pressureConditions = []pressureCondition{
	{v1.NodeMemoryPressure, "KubeletHasInsufficientMemory", "runlet has insufficient memory available",
		"KubeletHasSufficientMemory", "runlet has sufficient memory available", "NodeHasInsufficientMemory", "NodeHasSufficientMemory"},
	{v1.NodeDiskPressure, "KubeletHasDiskPressure", "runlet has disk pressure",
		"KubeletHasNoDiskPressure", "runlet has no disk pressure", "NodeHasDiskPressure", "NodeHasNoDiskPressure"},
	{v1.NodePIDPressure, "KubeletHasInsufficientPID", "runlet has insufficient PID available",
		"KubeletHasSufficientPID", "runlet has sufficient PID available", "NodeHasInsufficientPID", "NodeHasSufficientPID"},
}
