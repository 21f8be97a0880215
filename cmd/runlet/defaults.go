package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	nodeinfo "github.com/runlet/runlet/internal/node"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// runlet's ports sit outside 10248–10260, where a host's kubelet (10248
// healthz, 10250 API, 10255 read-only), kube-proxy (10249, 10256),
// kube-controller-manager (10257), cloud-controller-manager (10258) and
// kube-scheduler (10259) listen: under hostNetwork runlet shares the host's
// ports with them.
const (
	defaultKubeletPort = 10300
	defaultMetricsAddr = "127.0.0.1:10301"
)

// defaultNodeName is "runlet-<host>": unique per host and stable, and never
// the host's own node name, which a kubelet on the same host registers (the
// host name is what a pod with hostNetwork sees).
func defaultNodeName(host string) string {
	host = strings.ToLower(strings.SplitN(host, ".", 2)[0])
	host = strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, host), "-")
	if host == "" {
		return "runlet"
	}
	return "runlet-" + host
}

// defaultKnownHosts is the file podman's own ssh connections verify hosts with.
func defaultKnownHosts() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".ssh", "known_hosts")
}

// validateNode checks the node's name, ports, labels and taints before
// anything is started, so a typo is an error naming the flag.
func (o *options) validateNode() error {
	if errs := validation.IsDNS1123Subdomain(o.NodeName); len(errs) > 0 {
		return fmt.Errorf("--nodename %q is not a valid node name: %s", o.NodeName, strings.Join(errs, "; "))
	}
	if o.KubeletPort < 1 || o.KubeletPort > 65535 {
		return fmt.Errorf("--kubelet-port %d is not a port (1-65535)", o.KubeletPort)
	}
	return nil
}

// defaultOfflineStartAfter is --offline-start-after's default: long enough
// for an apiserver that is merely slow to answer a starting node, short
// enough that a box cut off from it runs its pods again soon after a reboot.
const defaultOfflineStartAfter = 30 * time.Second

// nodeCheckTimeout bounds the look at the node's object at start: an
// apiserver that accepts connections and does not answer must not hold
// runlet back from running its pods offline.
const nodeCheckTimeout = 10 * time.Second

// checkNodeNameWithin is checkNodeName within nodeCheckTimeout, or within
// --offline-start-after if that is shorter.
func checkNodeNameWithin(ctx context.Context, nodes corev1client.NodeInterface, o *options) (*v1.Node, error) {
	timeout := nodeCheckTimeout
	if o.OfflineStartAfter > 0 && o.OfflineStartAfter < timeout {
		timeout = o.OfflineStartAfter
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return checkNodeName(ctx, nodes, o.NodeName)
}

// checkNodeName refuses to take over a Node that runlet did not register:
// runlet would overwrite the status of a real kubelet's node (or another
// virtual kubelet's) and delete its pods. It returns the node a runlet
// registered before, if the API has it (nil when new or unreachable).
func checkNodeName(ctx context.Context, nodes corev1client.NodeInterface, name string) (*v1.Node, error) {
	n, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, nil // unreachable now: registering the node reports it
	}
	if n.Annotations[nodeinfo.RegisteredByAnnotation] == "runlet" {
		return n, nil
	}
	for _, t := range n.Spec.Taints {
		// Registered by a runlet that did not annotate its node yet.
		if t.Key == nodeinfo.ProviderTaintKey && t.Value == nodeinfo.ProviderTaintValue {
			return n, nil
		}
	}
	return nil, fmt.Errorf("node %q exists and was not registered by runlet (no %s annotation; a kubelet's node?): choose another --nodename",
		name, nodeinfo.RegisteredByAnnotation)
}
