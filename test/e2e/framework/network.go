package framework

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The pod network as runlet lays it out on a host (internal/network/cni), spelled here so that the
// harness does not import the code under test.
const (
	// NetNSDir is where runlet pins pods' network namespaces.
	NetNSDir = "/run/netns"
)

// KubenetBridge is the bridge runlet's own (kubenet) network makes for a node.
func KubenetBridge(node string) string {
	sum := sha256.Sum256([]byte(node))
	return "runlet-" + hex.EncodeToString(sum[:])[:8]
}

// KubenetLeases lists the IPAM leases runlet's kubenet network holds for a node whose --root-dir
// is rootDir: the addresses its pods hold.
func KubenetLeases(rootDir, node string) []string {
	entries, _ := os.ReadDir(filepath.Join(rootDir, "network", "networks", KubenetBridge(node)))
	var out []string
	for _, e := range entries {
		if net.ParseIP(e.Name()) != nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// NetworkAttachment is runlet's record of a pod network it set up (internal/network's attachment).
type NetworkAttachment struct {
	ID    string `json:"id"`
	NetNS string `json:"netns"`
	Pod   struct {
		UID, Namespace, Name string
	} `json:"pod"`
}

// NetworkAttachmentRecords lists the pod networks runlet has recorded under rootDir (set up and not
// yet torn down).
func NetworkAttachmentRecords(rootDir string) []NetworkAttachment {
	dir := filepath.Join(rootDir, "network", "attachments")
	entries, _ := os.ReadDir(dir)
	var out []NetworkAttachment
	for _, e := range entries {
		var rec NetworkAttachment
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && json.Unmarshal(b, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}

// NetworkAttachments lists the pod network namespaces runlet has recorded under rootDir.
func NetworkAttachments(rootDir string) []string {
	var out []string
	for _, rec := range NetworkAttachmentRecords(rootDir) {
		out = append(out, rec.NetNS)
	}
	return out
}

// PodCIDR is the node's first pod range, as the controller-manager allocated it.
func PodCIDR(n *v1.Node) (*net.IPNet, error) {
	c := n.Spec.PodCIDR
	if len(n.Spec.PodCIDRs) > 0 {
		c = n.Spec.PodCIDRs[0]
	}
	_, ipn, err := net.ParseCIDR(c)
	if err != nil {
		return nil, fmt.Errorf("node %s has no pod CIDR: %q", n.Name, c)
	}
	return ipn, nil
}

// RemoveNodeNetwork takes away what a stopped runlet's network left on the host (hack/lib.sh's
// remove_node_network, which make conformance and make stop use too): the namespaces and hostPort rules
// of pods it did not get to tear down, its bridge and its NAT rule. A real node keeps them for its next start; a test node
// does not come back. It returns what it removed, as the script says it.
func RemoveNodeNetwork(rootDir, node string) (string, error) {
	return runLib("remove_node_network", node, rootDir)
}

// RemovePodCgroups takes away the cgroups a stopped runlet's pods left (hack/lib.sh's remove_pod_cgroups):
// a test node does not come back to remove them once its pods are gone.
func RemovePodCgroups(rootDir, node string) (string, error) {
	return runLib("remove_pod_cgroups", node, rootDir)
}

// runLib runs one of hack/lib.sh's functions that take a node and its root dir, and returns what it said.
func runLib(fn, node, rootDir string) (string, error) {
	root := ""
	if cluster != nil {
		root = cluster.RepoRoot
	} else if r, err := repoRoot(); err == nil {
		root = r
	}
	script := `. "$0"; ` + fn + ` "$1" "$2"`
	out, err := exec.Command("bash", "-c", script, filepath.Join(root, "hack", "lib.sh"), node, rootDir).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("hack/lib.sh %s %s: %v: %s", fn, node, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}
