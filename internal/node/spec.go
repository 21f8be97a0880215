// Package node describes the virtual node: its labels, taint, capacity,
// addresses and conditions, and keeps Ready honest.
package node

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Taint keeps ordinary workloads (and DaemonSets) off the virtual node.
var Taint = v1.Taint{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}

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
	// Labels and Taints are added to runlet's own; runlet's labels win.
	Labels map[string]string
	Taints []v1.Taint
}

// Fill writes the node's spec and status into n (the framework's template).
func Fill(n *v1.Node, o Options) error {
	capacity, err := Capacity(o)
	if err != nil {
		return err
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for k, v := range o.Labels {
		n.Labels[k] = v
	}
	for k, v := range map[string]string{
		"type":                   "virtual-kubelet",
		"kubernetes.io/role":     "agent",
		"kubernetes.io/os":       goruntime.GOOS,
		"kubernetes.io/arch":     goruntime.GOARCH,
		"kubernetes.io/hostname": o.Name,
	} {
		n.Labels[k] = v
	}
	n.Spec.Taints = []v1.Taint{Taint}
	for _, t := range o.Taints {
		if t.Key != Taint.Key || t.Effect != Taint.Effect {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
	n.Status.Capacity = capacity
	n.Status.Allocatable = capacity.DeepCopy()
	n.Status.Addresses = []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: o.InternalIP},
		{Type: v1.NodeHostName, Address: o.Name},
	}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = o.KubeletPort
	n.Status.NodeInfo = nodeInfo(o)
	n.Status.Phase = v1.NodeRunning
	n.Status.Conditions = Conditions(nil)
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
// node is not ready.
func Conditions(notReady error) []v1.NodeCondition {
	now := metav1.Now()
	ready := v1.NodeCondition{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady",
		Message: "runlet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}
	if notReady != nil {
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, "KubeletNotReady", notReady.Error()
	}
	cond := func(t v1.NodeConditionType, reason, msg string) v1.NodeCondition {
		return v1.NodeCondition{Type: t, Status: v1.ConditionFalse, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []v1.NodeCondition{
		ready,
		cond(v1.NodeMemoryPressure, "KubeletHasSufficientMemory", "runlet has sufficient memory available"),
		cond(v1.NodeDiskPressure, "KubeletHasNoDiskPressure", "runlet has no disk pressure"),
		cond(v1.NodePIDPressure, "KubeletHasSufficientPID", "runlet has sufficient PID available"),
		cond(v1.NodeNetworkUnavailable, "RouteCreated", "pod network is configured by the backend"),
	}
}
