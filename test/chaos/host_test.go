package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	"k8s.io/apimachinery/pkg/types"
)

// hostView is the node's ground truth, read from the backend and the host rather than from runlet.
type hostView struct {
	sandboxes  []sandbox
	containers []container
	// leases are the host-local leases of the node's network: address → the attachment holding it.
	leases map[string]string
	// attachments are runlet's records of the pod networks it set up, by ID.
	attachments map[string]framework.NetworkAttachment
	// bridgePorts are the veths on the node's bridge: one per pod network set up.
	bridgePorts []string
	// mounts are the mount points under the node's directories (runlet's root, podman's store and
	// runtime state); merged maps podman's root filesystem mounts to their containers.
	mounts []string
	merged map[string]string
	// cgroups are the pod cgroups on the host (runlet/pod<uid>, every hierarchy), by pod UID.
	cgroups map[types.UID][]string
	// podDirs are the pods with a directory under runlet's root.
	podDirs []types.UID
}

type sandbox struct {
	id      string
	pod     types.UID
	running bool
	infra   string // podman's infra container
}

type container struct {
	id, name string
	pod      types.UID
	running  bool
	attempt  string    // the attempt runlet labelled it with
	created  time.Time // podman's creation, runc's start
}

// view reads the host. An error is a backend that does not answer (podman down), for the caller to
// wait out.
func (n *node) view() (*hostView, error) {
	v := &hostView{leases: map[string]string{}, attachments: map[string]framework.NetworkAttachment{}, cgroups: map[types.UID][]string{}, merged: map[string]string{}}
	var err error
	if n.pm != nil {
		err = n.podmanObjects(v)
	} else {
		err = n.runcObjects(v)
	}
	if err != nil {
		return nil, err
	}
	root := n.rl.RootDir
	leaseDir := filepath.Join(root, "network", "networks", framework.KubenetBridge(n.rl.NodeName))
	for _, ip := range framework.KubenetLeases(root, n.rl.NodeName) {
		b, _ := os.ReadFile(filepath.Join(leaseDir, ip))
		id, _, _ := strings.Cut(string(b), "\r\n")
		v.leases[ip] = strings.TrimSpace(id)
	}
	for _, a := range framework.NetworkAttachmentRecords(root) {
		v.attachments[a.ID] = a
	}
	ports, _ := os.ReadDir(filepath.Join("/sys/class/net", framework.KubenetBridge(n.rl.NodeName), "brif"))
	for _, p := range ports {
		v.bridgePorts = append(v.bridgePorts, p.Name())
	}
	v.mounts = framework.MountsUnder(n.dirs()...)
	cgs, _ := filepath.Glob("/sys/fs/cgroup/*/runlet/pod*")
	unified, _ := filepath.Glob("/sys/fs/cgroup/runlet/pod*")
	for _, cg := range append(cgs, unified...) {
		uid := types.UID(strings.ReplaceAll(strings.TrimPrefix(filepath.Base(cg), "pod"), "_", "-"))
		v.cgroups[uid] = append(v.cgroups[uid], cg)
	}
	dirs, _ := os.ReadDir(filepath.Join(root, "pods"))
	for _, d := range dirs {
		v.podDirs = append(v.podDirs, types.UID(d.Name()))
	}
	return v, nil
}

// dirs are where the node's mounts live.
func (n *node) dirs() []string {
	if n.pm == nil {
		return []string{n.rl.RootDir}
	}
	return []string{n.rl.RootDir, n.pm.Root, n.pm.RunRoot, n.pm.TmpDir}
}

func (n *node) podmanObjects(v *hostView) error {
	owner := "label=" + framework.LabelOwner + "=" + n.rl.NodeName
	pods, err := n.pm.PodsWith(owner)
	if err != nil {
		return err
	}
	for _, p := range pods {
		v.sandboxes = append(v.sandboxes, sandbox{id: p.ID, pod: types.UID(p.Labels[framework.LabelPodUID]), running: p.InfraRunning(), infra: p.InfraID})
	}
	ctrs, err := n.pm.ContainersWith(owner)
	if err != nil {
		return err
	}
	if err := n.mergedDirs(v); err != nil {
		return err
	}
	for _, c := range ctrs {
		if !c.IsInfra {
			// podman says "stopping" while a stop waits out the grace period
			v.containers = append(v.containers, container{id: c.ID, name: c.Labels[framework.LabelContainerName],
				pod: types.UID(c.Labels[framework.LabelPodUID]), running: c.State == "running" || c.State == "stopping",
				attempt: c.Labels[framework.LabelContainerAttempt], created: time.Unix(c.Created, 0)})
		}
	}
	return nil
}

// mergedDirs maps the root filesystem mounts of every container of the node's podman (its own
// alone), infra ones included, to their containers.
func (n *node) mergedDirs(v *hostView) error {
	ids, err := n.pm.CLI("ps", "-aq", "--no-trunc")
	if err != nil || strings.TrimSpace(ids) == "" {
		return err
	}
	out, err := n.pm.CLI(append([]string{"container", "inspect", "--format", "{{.Id}} {{.GraphDriver.Data.MergedDir}}"}, strings.Fields(ids)...)...)
	if err != nil && !strings.Contains(err.Error(), "no such container") {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if id, dir, ok := strings.Cut(strings.TrimSpace(line), " "); ok && dir != "" {
			v.merged[dir] = id
		}
	}
	return nil
}

func (n *node) runcObjects(v *hostView) error {
	sbs, err := framework.RuncNodeSandboxes(n.rl.RootDir)
	if err != nil {
		return err
	}
	for _, s := range sbs {
		v.sandboxes = append(v.sandboxes, sandbox{id: s.ID, pod: types.UID(s.Labels[framework.LabelPodUID]), running: s.Running})
	}
	ctrs, err := framework.RuncNodeContainers(n.rl.RootDir)
	if err != nil {
		return err
	}
	for _, c := range ctrs {
		v.containers = append(v.containers, container{id: c.ID, name: c.Name(), pod: types.UID(c.Labels[framework.LabelPodUID]), running: c.Running,
			attempt: c.Labels[framework.LabelContainerAttempt], created: c.StartedAt})
	}
	return nil
}
