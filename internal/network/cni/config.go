package cni

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"

	"github.com/containernetworking/cni/libcni"
)

// Plugin modes (--network-plugin).
const (
	ModeAuto    = "auto"
	ModeCNI     = "cni"
	ModeKubenet = "kubenet"
)

// cniVersion is what runlet's own configurations speak: Debian 12's
// plugins (1.1) support up to 1.0.0.
const cniVersion = "1.0.0"

// podmanNetwork is the name of podman's default network, whose
// configuration podman's packages drop into /etc/cni/net.d.
const podmanNetwork = "podman"

// ErrNoConfig says the conf dir holds no usable network configuration.
var ErrNoConfig = errors.New("no network config found")

// loadConfDir returns the first usable configuration of dir in lexical
// order, as the kubelet's and containerd's CNI loaders pick it. skipPodman
// passes over podman's own default network.
func loadConfDir(dir string, skipPodman bool) (*libcni.NetworkConfigList, error) {
	files, err := libcni.ConfFiles(dir, []string{".conf", ".conflist", ".json"})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	sort.Strings(files)
	var errs []error
	for _, f := range files {
		list, err := libcni.NetworkConfFromFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		if len(list.Plugins) == 0 {
			errs = append(errs, fmt.Errorf("%s: no plugins", f))
			continue
		}
		if skipPodman && list.Name == podmanNetwork {
			continue
		}
		return list, nil
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w in %s: %w", ErrNoConfig, dir, errors.Join(errs...))
	}
	return nil, fmt.Errorf("%w in %s", ErrNoConfig, dir)
}

// kubenetName is the network's and its bridge's name for a node: several
// runlets on one host each get their own bridge. Link names hold at most 15
// bytes.
func kubenetName(node string) string {
	sum := sha256.Sum256([]byte(node))
	return "runlet-" + hex.EncodeToString(sum[:])[:8]
}

// kubenetConfig is runlet's own network over the node's pod CIDRs: a
// bridge that is the pods' gateway, host-local leases kept under dataDir,
// and portmap for hostPort (snat lets the host reach a hostPort on
// 127.0.0.1). Masquerading is not the bridge's: it would hide pod
// addresses from pods of other nodes (see masquerade.go).
func kubenetConfig(node string, cidrs []string, dataDir string, withPorts bool) (*libcni.NetworkConfigList, error) {
	if len(cidrs) == 0 {
		return nil, errors.New("kubenet does not have netConfig. This is most likely due to lack of PodCIDR")
	}
	var ranges [][]map[string]string
	var routes []map[string]string
	for _, c := range cidrs {
		ip, n, err := net.ParseCIDR(c)
		if err != nil {
			return nil, fmt.Errorf("pod CIDR %q: %w", c, err)
		}
		ranges = append(ranges, []map[string]string{{"subnet": n.String()}})
		if ip.To4() != nil {
			routes = append(routes, map[string]string{"dst": "0.0.0.0/0"})
		} else {
			routes = append(routes, map[string]string{"dst": "::/0"})
		}
	}
	name := kubenetName(node)
	// forceAddress: a node whose pod CIDR changed moves its bridge to the new
	// gateway, as flannel's and kops' bridges do; pods of the old range keep
	// their address but lose the host's route to it until they are recreated.
	plugins := []any{map[string]any{
		"type": "bridge", "bridge": name, "isGateway": true, "ipMasq": false, "hairpinMode": true, "forceAddress": true,
		"ipam": map[string]any{"type": "host-local", "ranges": ranges, "routes": routes, "dataDir": dataDir},
	}}
	if withPorts {
		plugins = append(plugins, map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}, "snat": true})
	}
	conf := map[string]any{"cniVersion": cniVersion, "name": name, "plugins": plugins}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	return libcni.NetworkConfFromBytes(b)
}
