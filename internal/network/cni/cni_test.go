package cni

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/netns"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// debianPlugins is where Debian's containernetworking-plugins installs.
var pluginDirs = []string{"/opt/cni/bin", "/usr/lib/cni"}

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(os.Stderr)
	l.SetLevel(logrus.WarnLevel)
	return l
}

func TestKubenetConfigIsABridgeOverThePodCIDR(t *testing.T) {
	list, err := kubenetConfig("edge-1", []string{"10.244.3.0/24"}, "/var/lib/x", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Plugins) != 2 || list.Plugins[0].Network.Type != "bridge" || list.Plugins[1].Network.Type != "portmap" {
		t.Fatalf("plugins = %s", pluginTypes(list))
	}
	var bridge struct {
		Bridge string `json:"bridge"`
		IPMasq bool   `json:"ipMasq"`
		IPAM   struct {
			Type    string                `json:"type"`
			Ranges  [][]map[string]string `json:"ranges"`
			DataDir string                `json:"dataDir"`
		} `json:"ipam"`
	}
	if err := json.Unmarshal(list.Plugins[0].Bytes, &bridge); err != nil {
		t.Fatal(err)
	}
	if bridge.Bridge != kubenetName("edge-1") || len(bridge.Bridge) > 15 || bridge.IPMasq {
		t.Errorf("bridge %q (ipMasq %v): want %q, at most 15 bytes, no masquerading", bridge.Bridge, bridge.IPMasq, kubenetName("edge-1"))
	}
	if bridge.IPAM.Type != "host-local" || bridge.IPAM.Ranges[0][0]["subnet"] != "10.244.3.0/24" || bridge.IPAM.DataDir != "/var/lib/x" {
		t.Errorf("ipam = %+v", bridge.IPAM)
	}
	if kubenetName("edge-1") == kubenetName("edge-2") {
		t.Error("two nodes share a bridge name")
	}
	noPorts, err := kubenetConfig("edge-1", []string{"10.244.3.0/24"}, "/var/lib/x", false)
	if err != nil || len(noPorts.Plugins) != 1 || noPorts.Name != list.Name {
		t.Errorf("without ports: %v plugins, name %q, err %v", len(noPorts.Plugins), noPorts.Name, err)
	}
}

func TestKubenetWithoutPodCIDRSaysWhy(t *testing.T) {
	_, err := kubenetConfig("n", nil, "/x", true)
	if err == nil || !strings.Contains(err.Error(), "lack of PodCIDR") {
		t.Fatalf("err = %v", err)
	}
	if _, err := kubenetConfig("n", []string{"10.1.2.300/24"}, "/x", true); err == nil {
		t.Fatal("a malformed pod CIDR was accepted")
	}
}

func writeConf(t *testing.T, dir, file, name string) {
	t.Helper()
	b := `{"cniVersion":"1.0.0","name":"` + name + `","plugins":[{"type":"bridge","bridge":"x0"}]}`
	if err := os.WriteFile(filepath.Join(dir, file), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConfDirFirstConfigWinsAndPodmanIsPassedOver(t *testing.T) {
	dir := t.TempDir()
	if _, err := loadConfDir(dir, true); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("empty dir: err = %v", err)
	}
	writeConf(t, dir, "87-podman-bridge.conflist", "podman")
	if _, err := loadConfDir(dir, true); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("podman's network only: err = %v; want ErrNoConfig", err)
	}
	if l, err := loadConfDir(dir, false); err != nil || l.Name != "podman" {
		t.Fatalf("cni mode takes podman's network when told to: %v, %v", l, err)
	}
	writeConf(t, dir, "10-flannel.conflist", "cbr0")
	writeConf(t, dir, "20-other.conflist", "other")
	if l, err := loadConfDir(dir, true); err != nil || l.Name != "cbr0" {
		t.Fatalf("got %v, %v; want the lexically first, cbr0", l, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "05-broken.conflist"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := loadConfDir(dir, true); err != nil || l.Name != "cbr0" {
		t.Fatalf("a broken file before a good one: %v, %v", l, err)
	}
}

// netnsDir is a directory for pinned namespaces that New makes a mount
// point: it is unmounted at cleanup.
func netnsDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "netns")
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

func TestNotReadyIsTheKubeletsMessage(t *testing.T) {
	m, err := New(Config{Mode: ModeCNI, ConfDir: t.TempDir(), BinDirs: pluginDirs, StateDir: t.TempDir(), NetNSDir: netnsDir(t), Node: "n", Log: quietLog()})
	if err != nil {
		t.Skipf("needs root to make the netns dir shared: %v", err)
	}
	err = m.Status()
	if err == nil || !strings.Contains(err.Error(), "NetworkReady=false reason:NetworkPluginNotReady") || !strings.Contains(err.Error(), "no network config found") {
		t.Fatalf("status = %v", err)
	}
	if _, err := m.Setup(context.Background(), Pod{UID: "u", Namespace: "ns", Name: "p"}); err == nil {
		t.Fatal("Setup worked without a network")
	}
}

// newKubenet is a real kubenet network on this host: root and Debian's
// plugins are needed. Its bridge and rules are removed at cleanup.
func newKubenet(t *testing.T, node, cidr string, bins []string) *Manager {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("needs containernetworking-plugins")
	}
	m, err := New(Config{Mode: ModeKubenet, BinDirs: bins, StateDir: t.TempDir(), NetNSDir: netnsDir(t),
		Node: node, NonMasqueradeCIDR: "10.0.0.0/8", Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Remove(); err != nil {
			t.Errorf("remove: %v", err)
		}
	})
	if cidr != "" {
		m.SetPodCIDRs([]string{cidr})
	}
	return m
}

func leases(t *testing.T, m *Manager) []string {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(m.cfg.leaseDir(), kubenetName(m.cfg.Node)))
	var out []string
	for _, e := range entries {
		if net.ParseIP(e.Name()) != nil {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestKubenetAddGivesAnAddressOfThePodCIDRAndDelReleasesIt(t *testing.T) {
	m := newKubenet(t, "cni-test-add", "10.251.7.0/24", pluginDirs)
	if err := m.Status(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := m.Setup(ctx, Pod{UID: "uid-1", Namespace: "ns", Name: "web", Ports: []PortMapping{{HostPort: 31999, ContainerPort: 80, Protocol: "tcp"}},
		Sysctls: map[string]string{"net.ipv4.ip_unprivileged_port_start": "101"}})
	if err != nil {
		t.Fatal(err)
	}
	_, podNet, _ := net.ParseCIDR("10.251.7.0/24")
	if len(a.IPs) != 1 || !podNet.Contains(net.ParseIP(a.IPs[0])) {
		t.Fatalf("IPs = %v; want one of 10.251.7.0/24", a.IPs)
	}
	if !m.Alive(a.NetNS) {
		t.Fatalf("netns %s is not a pinned namespace", a.NetNS)
	}
	var lo *net.Interface
	if err := netns.Do(a.NetNS, func() (err error) { lo, err = net.InterfaceByName("lo"); return err }); err != nil || lo.Flags&net.FlagUp == 0 {
		t.Errorf("the pod's lo: %+v, %v; want it up", lo, err)
	}
	if got := sysctlIn(t, a.NetNS, "net/ipv4/ip_unprivileged_port_start"); got != "101" {
		t.Errorf("the pod's sysctl reads %q in its namespace; want 101", got)
	}
	if _, err := net.Listen("tcp4", ":31999"); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("the pod's hostPort 31999 is not held: listen: %v", err)
	}
	if _, err := m.Setup(ctx, Pod{UID: "uid-3", Namespace: "ns", Name: "twin", Ports: []PortMapping{{HostPort: 31999, ContainerPort: 80, Protocol: "tcp"}}}); err == nil ||
		!strings.Contains(err.Error(), "cannot open hostport 31999 for pod twin_ns") {
		t.Errorf("a second pod on hostPort 31999: %v; want the kubelet's refusal", err)
	}
	b, err := m.Setup(ctx, Pod{UID: "uid-2", Namespace: "ns", Name: "db"})
	if err != nil {
		t.Fatal(err)
	}
	if b.IPs[0] == a.IPs[0] {
		t.Fatalf("two pods got %s", a.IPs[0])
	}
	if got := leases(t, m); len(got) != 2 {
		t.Fatalf("leases = %v; want 2", got)
	}
	for _, at := range []Attachment{a, b} {
		if err := m.Teardown(ctx, at.NetNS); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(at.NetNS); !os.IsNotExist(err) || m.Alive(at.NetNS) {
			t.Errorf("netns %s still there: %v", at.NetNS, err)
		}
	}
	l, err := net.Listen("tcp4", ":31999")
	if err != nil {
		t.Errorf("hostPort 31999 still held after DEL: %v", err)
	} else {
		l.Close()
	}
	if got := leases(t, m); len(got) != 0 {
		t.Fatalf("leases after DEL = %v", got)
	}
	if err := m.Teardown(ctx, a.NetNS); err != nil {
		t.Fatalf("a second teardown: %v", err)
	}
}

func TestGCReleasesWhatNoSandboxHolds(t *testing.T) {
	m := newKubenet(t, "cni-test-gc", "10.251.8.0/24", pluginDirs)
	ctx := context.Background()
	kept, err := m.Setup(ctx, Pod{UID: "a", Namespace: "ns", Name: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	lost, err := m.Setup(ctx, Pod{UID: "b", Namespace: "ns", Name: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	m.GC(ctx, map[string]bool{kept.NetNS: true}, time.Now())
	if got := leases(t, m); len(got) != 2 {
		t.Fatalf("GC released an attachment whose sandbox is not created yet: %v", got)
	}
	// The sweep listed the sandboxes, then lost's sandbox came and was
	// committed before the sweep read the records: its list cannot show it.
	listed := time.Now()
	m.Commit(lost.NetNS)
	m.GC(ctx, map[string]bool{kept.NetNS: true}, listed)
	if got := leases(t, m); len(got) != 2 {
		t.Fatalf("GC released an attachment committed after its list: %v", got)
	}
	// A runlet that starts again over the same state knows neither.
	again, err := New(m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	again.SetPodCIDRs([]string{"10.251.8.0/24"})
	again.GC(ctx, map[string]bool{kept.NetNS: true}, time.Now().Add(-time.Hour))
	if got := leases(t, m); len(got) != 2 {
		t.Fatalf("GC with a list older than the attachments released something: %v", got)
	}
	again.GC(ctx, map[string]bool{kept.NetNS: true}, time.Now())
	if got := leases(t, m); len(got) != 1 || got[0] != kept.IPs[0] {
		t.Fatalf("leases = %v; want only %s", got, kept.IPs[0])
	}
	if _, err := os.Stat(lost.NetNS); !os.IsNotExist(err) {
		t.Errorf("the lost sandbox's netns is still there: %v", err)
	}
	if err := again.Teardown(ctx, kept.NetNS); err != nil {
		t.Fatal(err)
	}
}

func TestMissingPluginIsNotReadyAndNamesIt(t *testing.T) {
	m := newKubenet(t, "cni-test-missing", "10.251.9.0/24", []string{t.TempDir()})
	err := m.Status()
	if err == nil || !strings.Contains(err.Error(), "NetworkPluginNotReady") || !strings.Contains(err.Error(), "bridge") {
		t.Fatalf("status = %v; want not ready, naming the bridge plugin", err)
	}
}

func TestExhaustedRangeFailsAddAndLeavesNothing(t *testing.T) {
	m := newKubenet(t, "cni-test-full", "10.251.10.0/30", pluginDirs)
	ctx := context.Background()
	a, err := m.Setup(ctx, Pod{UID: "a", Namespace: "ns", Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Teardown(ctx, a.NetNS) })
	_, err = m.Setup(ctx, Pod{UID: "b", Namespace: "ns", Name: "b"})
	if err == nil || !strings.Contains(err.Error(), "failed (add)") {
		t.Fatalf("err = %v; want a failed ADD", err)
	}
	entries, _ := os.ReadDir(m.cfg.recordDir())
	netns, _ := os.ReadDir(m.cfg.NetNSDir)
	if len(entries) != 1 || len(netns) != 1 {
		t.Fatalf("after a failed ADD: %d records, %d namespaces; want the first pod's only", len(entries), len(netns))
	}
}

// sysctlIn reads a sysctl inside the network namespace at netns.
func sysctlIn(t *testing.T, netns, name string) string {
	t.Helper()
	out, err := exec.Command("nsenter", "--net="+netns, "cat", "/proc/sys/"+name).CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// A node whose pod CIDR changes (deleted and registered again, or another
// --pod-cidr after a restart): new pods get addresses of the new range (the
// bridge takes the new gateway), the pods of the old one keep their
// namespace and address, and their teardown still releases them.
func TestPodCIDRChangeKeepsOldPodsAndReleasesThem(t *testing.T) {
	m := newKubenet(t, "cni-test-chg", "10.251.9.0/24", pluginDirs)
	ctx := context.Background()
	old, err := m.Setup(ctx, Pod{UID: "a", Namespace: "ns", Name: "old"})
	if err != nil {
		t.Fatal(err)
	}
	m.SetPodCIDRs([]string{"10.251.10.0/24"})
	if err := m.Status(); err != nil {
		t.Fatal(err)
	}
	fresh, err := m.Setup(ctx, Pod{UID: "b", Namespace: "ns", Name: "new"})
	if err != nil {
		t.Fatal(err)
	}
	_, oldNet, _ := net.ParseCIDR("10.251.9.0/24")
	_, newNet, _ := net.ParseCIDR("10.251.10.0/24")
	if !oldNet.Contains(net.ParseIP(old.IPs[0])) || !newNet.Contains(net.ParseIP(fresh.IPs[0])) {
		t.Fatalf("addresses %v and %v; want one of each range", old.IPs, fresh.IPs)
	}
	if !m.Alive(old.NetNS) {
		t.Error("the old pod's namespace went with the change")
	}
	for _, at := range []Attachment{old, fresh} {
		if err := m.Teardown(ctx, at.NetNS); err != nil {
			t.Fatal(err)
		}
	}
	if got := leases(t, m); len(got) != 0 {
		t.Fatalf("leases after both teardowns = %v", got)
	}
}

// Without --non-masquerade-cidr runlet adds no masquerade rule; removing the
// node's network must still remove its bridge.
func TestRemoveWithoutMasqueradeRemovesTheBridge(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Skip("needs containernetworking-plugins")
	}
	m, err := New(Config{Mode: ModeKubenet, BinDirs: pluginDirs, StateDir: t.TempDir(), NetNSDir: netnsDir(t), Node: "cni-test-nomasq", Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	m.SetPodCIDRs([]string{"10.251.11.0/24"})
	ctx := context.Background()
	a, err := m.Setup(ctx, Pod{UID: "a", Namespace: "ns", Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Teardown(ctx, a.NetNS); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", kubenetName("cni-test-nomasq"))); !os.IsNotExist(err) {
		t.Errorf("the bridge is still there: %v", err)
	}
}
