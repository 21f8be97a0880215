package cni

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/runlet/runlet/internal/netns"
	"github.com/sirupsen/logrus"
)

// Config wires a Manager.
type Config struct {
	// Mode is ModeAuto, ModeCNI or ModeKubenet.
	Mode string
	// ConfDir holds the host's CNI configurations (--cni-conf-dir).
	ConfDir string
	// BinDirs are searched for plugin binaries, in order (--cni-bin-dir).
	BinDirs []string
	// StateDir keeps runlet's records of attachments, libcni's cache and,
	// for kubenet, the host-local leases.
	StateDir string
	// NetNSDir is where pods' namespaces are pinned (/run/netns).
	NetNSDir string
	// Node names the kubenet network and its bridge.
	Node string
	// NonMasqueradeCIDR: kubenet masquerades pod traffic to anywhere else
	// (--non-masquerade-cidr, the kubelet's 10.0.0.0/8).
	NonMasqueradeCIDR string
	Log               logrus.FieldLogger
}

// Manager sets up and tears down pods' networks.
type Manager struct {
	cfg   Config
	cni   *libcni.CNIConfig
	masq  *masquerader
	ports *hostPorts

	mu sync.Mutex
	// net is the network pods join now; notReady says why there is none.
	net      *netConfig
	notReady error
	cidrs    []string
	// validated holds the bytes of the last configuration whose plugins
	// were all found, so each is checked once.
	validated []byte
	// settled holds this process's attachments: the zero time between
	// their record and their sandbox, then when the sandbox was committed.
	// GC must not take for a leftover one its list may have missed.
	settled map[string]time.Time
}

// netConfig is a network and, for runlet's own, the same without portmap
// for pods that publish no port (one plugin run less per start).
type netConfig struct {
	list, noPorts *libcni.NetworkConfigList
}

// New returns a Manager. The kubenet network exists only once SetPodCIDRs
// gives it a range; until then Status says why pods cannot start.
func New(cfg Config) (*Manager, error) {
	switch cfg.Mode {
	case ModeAuto, ModeCNI, ModeKubenet:
	default:
		return nil, fmt.Errorf("unknown network plugin %q (auto, cni or kubenet)", cfg.Mode)
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	for _, d := range []string{cfg.StateDir, cfg.cacheDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := netns.EnsureSharedDir(cfg.NetNSDir); err != nil {
		return nil, err
	}
	m := &Manager{
		cfg:     cfg,
		cni:     libcni.NewCNIConfigWithCacheDir(cfg.BinDirs, cfg.cacheDir(), nil),
		ports:   newHostPorts(),
		settled: map[string]time.Time{},
	}
	if cfg.Mode != ModeCNI {
		m.masq = newMasquerader(cfg.Node, cfg.NonMasqueradeCIDR, cfg.Log)
	}
	m.Reload()
	m.holdRecordedPorts()
	return m, nil
}

// holdRecordedPorts holds again, after a restart, the host ports of the
// pods set up before it.
func (m *Manager) holdRecordedPorts() {
	entries, _ := os.ReadDir(m.cfg.recordDir())
	for _, e := range entries {
		rec, err := m.readRecord(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil || len(rec.Pod.Ports) == 0 || !netns.IsPinned(rec.NetNS) {
			continue
		}
		if err := m.ports.hold(rec.ID, rec.Pod); err != nil {
			m.cfg.Log.WithError(err).Warn("holding a pod's host ports again")
		}
	}
}

func (c Config) cacheDir() string           { return filepath.Join(c.StateDir, "cache") }
func (c Config) leaseDir() string           { return filepath.Join(c.StateDir, "networks") }
func (c Config) recordDir() string          { return filepath.Join(c.StateDir, "attachments") }
func (c Config) netnsPath(id string) string { return filepath.Join(c.NetNSDir, id) }

// SetPodCIDRs gives the kubenet network the node's pod ranges; a change
// applies to pods that start from now on.
func (m *Manager) SetPodCIDRs(cidrs []string) {
	m.mu.Lock()
	changed := !slices.Equal(m.cidrs, cidrs)
	m.cidrs = slices.Clone(cidrs)
	m.mu.Unlock()
	if changed {
		m.cfg.Log.WithField("podCIDRs", cidrs).Info("pod CIDRs set")
		m.Reload()
	}
}

// Reload picks the network pods join now: the conf dir's (cni, and auto
// when it has one) or runlet's own over the pod CIDRs.
func (m *Manager) Reload() {
	m.mu.Lock()
	cidrs := m.cidrs
	m.mu.Unlock()
	nc, mode, err := m.pick(cidrs)
	if err == nil {
		err = m.validate(nc.list)
	}
	if err == nil && mode == ModeKubenet {
		err = m.masq.ensure(cidrs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		if m.notReady == nil || m.notReady.Error() != err.Error() {
			m.cfg.Log.WithError(err).Warn("the pod network is not ready")
		}
		m.net, m.notReady = nil, err
		return
	}
	if m.net == nil || string(m.net.list.Bytes) != string(nc.list.Bytes) {
		m.cfg.Log.WithFields(logrus.Fields{"network": nc.list.Name, "mode": mode}).Info("pod network ready")
	}
	m.net, m.notReady = nc, nil
}

func (m *Manager) pick(cidrs []string) (*netConfig, string, error) {
	if m.cfg.Mode != ModeKubenet {
		list, err := loadConfDir(m.cfg.ConfDir, m.cfg.Mode == ModeAuto)
		if err == nil {
			return &netConfig{list: list, noPorts: list}, ModeCNI, nil
		}
		if m.cfg.Mode == ModeCNI || !errors.Is(err, ErrNoConfig) {
			return nil, "", err
		}
	}
	list, err := kubenetConfig(m.cfg.Node, cidrs, m.cfg.leaseDir(), true)
	if err != nil {
		return nil, "", err
	}
	noPorts, err := kubenetConfig(m.cfg.Node, cidrs, m.cfg.leaseDir(), false)
	if err != nil {
		return nil, "", err
	}
	return &netConfig{list: list, noPorts: noPorts}, ModeKubenet, nil
}

// validate checks once per configuration that every plugin binary is there
// and speaks its version.
func (m *Manager) validate(list *libcni.NetworkConfigList) error {
	m.mu.Lock()
	done := string(m.validated) == string(list.Bytes)
	m.mu.Unlock()
	if done {
		return nil
	}
	if _, err := m.cni.ValidateNetworkList(context.Background(), list); err != nil {
		return fmt.Errorf("network %q: %w (plugin dirs %v)", list.Name, err, m.cfg.BinDirs)
	}
	m.mu.Lock()
	m.validated = list.Bytes
	m.mu.Unlock()
	return nil
}

// Status is nil when pods can join the network, else the kubelet's words
// for a network that is not ready, with the plugin's message.
func (m *Manager) Status() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.notReady == nil {
		return nil
	}
	return NotReadyError{m.notReady}
}

// NotReadyError is why the node's network is not ready.
type NotReadyError struct{ Err error }

func (e NotReadyError) Error() string {
	return "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: " + e.Err.Error()
}

func (e NotReadyError) Unwrap() error { return e.Err }

func (m *Manager) current() (*netConfig, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.net == nil {
		return nil, NotReadyError{m.notReady}
	}
	return m.net, nil
}

func newAttachmentID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "runlet-" + hex.EncodeToString(b)
}

// Remove takes down what the kubenet network added to the host, its NAT
// rules and its bridge, once no pod uses it (runlet uninstall, tests).
func (m *Manager) Remove() error {
	if m.masq == nil {
		return nil
	}
	m.mu.Lock()
	cidrs := m.cidrs
	m.mu.Unlock()
	if err := m.masq.remove(cidrs); err != nil {
		return err
	}
	name := kubenetName(m.cfg.Node)
	if _, err := os.Stat(filepath.Join("/sys/class/net", name)); err != nil {
		return nil
	}
	if out, err := exec.Command("ip", "link", "delete", name).CombinedOutput(); err != nil {
		return fmt.Errorf("deleting bridge %s: %v: %s", name, err, out)
	}
	return nil
}
