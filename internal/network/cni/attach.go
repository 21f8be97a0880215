package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/runlet/runlet/internal/netns"
	"github.com/runlet/runlet/internal/netns/loopback"
)

// ifName is the pod's interface, as every kubelet runtime names it.
const ifName = "eth0"

// Pod names the pod an attachment is for (CNI_ARGS K8S_POD_*), with what
// its network namespace must have.
type Pod struct {
	UID, Namespace, Name string
	// Ports are its hostPorts.
	Ports []PortMapping
	// Sysctls are its net.* sysctls, set in the namespace once the network
	// is up, as CRI-O's pinns sets them where it pins the namespace.
	Sysctls map[string]string
	// NetNSSource, when set, is a network namespace the sandbox made
	// (/proc/<pid>/ns/net), which is pinned and wired instead of a new one:
	// that of a pod in a user namespace of its own, which must own it.
	// NetNSPath, when set, is where it is pinned: a path NewNetNSPath gave
	// before the sandbox existed, so that the backend could record it.
	NetNSSource string `json:"-"`
	NetNSPath   string `json:"-"`
}

// PortMapping is a hostPort, in portmap's runtimeConfig terms.
type PortMapping struct {
	HostPort      int32  `json:"hostPort"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol"`
	HostIP        string `json:"hostIP,omitempty"`
}

// Attachment is a pod's network: its pinned namespace and its addresses.
type Attachment struct {
	NetNS string
	IPs   []string
}

// record is what DEL needs once runlet has forgotten the pod (libcni's own
// cache holds the configuration ADD used, under the network's name), and
// the pod's host ports to hold again after a restart.
type record struct {
	ID      string    `json:"id"`
	Network string    `json:"network"`
	NetNS   string    `json:"netns"`
	Pod     Pod       `json:"pod"`
	Created time.Time `json:"created"`
}

// Setup makes the pod's network namespace and runs ADD on it. On error
// nothing is left behind. The caller Commits the attachment once its
// sandbox exists, or tears it down.
func (m *Manager) Setup(ctx context.Context, pod Pod) (Attachment, error) {
	nc, err := m.current()
	if err != nil {
		return Attachment{}, err
	}
	list, ports := nc.list, pod.Ports
	if len(ports) == 0 {
		list = nc.noPorts
	}
	id := newAttachmentID()
	if pod.NetNSPath != "" {
		if filepath.Dir(pod.NetNSPath) != filepath.Clean(m.cfg.NetNSDir) || !strings.HasPrefix(filepath.Base(pod.NetNSPath), "runlet-") {
			return Attachment{}, fmt.Errorf("%s is not a path of the pod network's", pod.NetNSPath)
		}
		id = filepath.Base(pod.NetNSPath)
	}
	rec := record{ID: id, Network: list.Name, NetNS: m.cfg.netnsPath(id), Pod: pod, Created: time.Now()}
	if err := m.ports.hold(id, pod); err != nil {
		return Attachment{}, err
	}
	m.setSettled(id, time.Time{})
	err = m.writeRecord(rec)
	if err == nil {
		err = pin(rec.NetNS, pod.NetNSSource)
	}
	if err != nil {
		m.forget(id)
		return Attachment{}, err
	}
	rt := runtimeConf(rec, ports)
	res, err := m.cni.AddNetworkList(ctx, list, rt)
	if err == nil {
		// What the loopback plugin would do, without a process per pod.
		if lerr := netns.Do(rec.NetNS, loopback.Up); lerr != nil {
			err = fmt.Errorf("bringing up lo: %w", lerr)
		}
	}
	var ips []string
	if err == nil {
		ips, err = resultIPs(res)
	}
	if err != nil {
		err = fmt.Errorf("plugin type=%q failed (add): %w", pluginTypes(list), err)
	} else if err = setSysctls(rec.NetNS, pod.Sysctls); err != nil {
		err = fmt.Errorf("setting the pod's sysctls: %w", err)
	}
	if err != nil {
		if terr := m.teardown(context.WithoutCancel(ctx), rec); terr != nil {
			m.cfg.Log.WithError(terr).WithField("netns", rec.NetNS).Warn("undoing a failed network set-up failed")
		}
		return Attachment{}, err
	}
	return Attachment{NetNS: rec.NetNS, IPs: ips}, nil
}

// NewNetNSPath is a path no attachment has, for Pod.NetNSPath.
func (m *Manager) NewNetNSPath() string { return m.cfg.netnsPath(newAttachmentID()) }

// pin pins a new network namespace at path, or source's where given.
func pin(path, source string) error {
	if source != "" {
		return netns.PinFrom(source, path)
	}
	return netns.Pin(path)
}

// Commit says the sandbox that joins netns exists, so that the backend's
// lists from now on show it: until then GC leaves the attachment alone, and
// so does a sweep whose list was taken before.
func (m *Manager) Commit(path string) { m.setSettled(filepath.Base(path), time.Now()) }

// Alive reports whether netns is still a pinned network namespace: one that
// went (a failed create torn down, a reboot) cannot be joined, and its
// sandbox must be made anew.
func (m *Manager) Alive(path string) bool { return netns.IsPinned(path) }

// Teardown runs DEL for the pod network pinned at path and removes the
// namespace. A namespace runlet has no record of is not its own.
func (m *Manager) Teardown(ctx context.Context, path string) error {
	id := filepath.Base(path)
	if filepath.Dir(path) != filepath.Clean(m.cfg.NetNSDir) || !strings.HasPrefix(id, "runlet-") {
		return nil
	}
	rec, err := m.readRecord(id)
	if errors.Is(err, os.ErrNotExist) {
		return netns.Remove(path)
	}
	if err != nil {
		return err
	}
	return m.teardown(ctx, rec)
}

// teardown runs DEL and removes the namespace; only then is the record
// forgotten, so that a failed DEL is tried again by GC.
func (m *Manager) teardown(ctx context.Context, rec record) error {
	rt := runtimeConf(rec, nil)
	list, cached := m.cachedList(rec, rt)
	var err error
	if list != nil {
		if err = m.cni.DelNetworkList(ctx, list, cached); err != nil {
			err = fmt.Errorf("plugin type=%q failed (delete): %w", pluginTypes(list), err)
		}
	}
	if err == nil {
		err = netns.Remove(rec.NetNS)
	}
	if err != nil {
		m.forgetSettled(rec.ID)
		m.ports.release(rec.ID)
		return err
	}
	return m.forget(rec.ID)
}

// forget drops all runlet holds for an attachment: its host ports, its
// in-flight mark and its record.
func (m *Manager) forget(id string) error {
	m.forgetSettled(id)
	m.ports.release(id)
	if err := os.Remove(m.recordPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// cachedList is the configuration ADD ran with, from libcni's cache, else
// today's network of the same name.
func (m *Manager) cachedList(rec record, rt *libcni.RuntimeConf) (*libcni.NetworkConfigList, *libcni.RuntimeConf) {
	b, cachedRT, err := m.cni.GetNetworkListCachedConfig(&libcni.NetworkConfigList{Name: rec.Network}, rt)
	if err == nil && b != nil {
		if list, err := libcni.NetworkConfFromBytes(b); err == nil {
			if cachedRT != nil {
				cachedRT.NetNS = rec.NetNS
				return list, cachedRT
			}
			return list, rt
		}
	}
	if nc, err := m.current(); err == nil && nc.list.Name == rec.Network {
		return nc.list, rt
	}
	// ADD never got as far as the cache: there is nothing to release.
	return nil, rt
}

// GC runs DEL for every attachment whose namespace no sandbox holds:
// sandboxes that went while runlet was down, or whose removal failed. live
// holds the namespaces of the sandboxes listed at listed; an attachment
// made or committed after that list began, or still being set up, is left
// alone: the list may not show its sandbox.
func (m *Manager) GC(ctx context.Context, live map[string]bool, listed time.Time) {
	entries, err := os.ReadDir(m.cfg.recordDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		id := strings.TrimSuffix(e.Name(), ".json")
		rec, err := m.readRecord(id)
		if err != nil || live[rec.NetNS] || m.unsettledAt(id, listed) || !rec.Created.Before(listed) {
			continue
		}
		log := m.cfg.Log.WithField("netns", rec.NetNS).WithField("pod", rec.Pod.Namespace+"/"+rec.Pod.Name)
		if err := m.teardown(ctx, rec); err != nil {
			log.WithError(err).Warn("releasing the network of a sandbox that is gone failed")
			continue
		}
		log.Info("released the network of a sandbox that is gone")
	}
}

func runtimeConf(rec record, ports []PortMapping) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: rec.ID, NetNS: rec.NetNS, IfName: ifName,
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", rec.Pod.Namespace},
			{"K8S_POD_NAME", rec.Pod.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", rec.ID},
			{"K8S_POD_UID", rec.Pod.UID},
		},
	}
	if len(ports) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": ports}
	}
	return rt
}

// resultIPs are the addresses of the pod's own interfaces, IPv4 first.
func resultIPs(res types.Result) ([]string, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("reading the plugin's result: %w", err)
	}
	var v4, v6 []string
	for _, ipc := range r.IPs {
		if ipc.Interface != nil && *ipc.Interface < len(r.Interfaces) && r.Interfaces[*ipc.Interface].Sandbox == "" {
			continue // the host side of a veth, or the bridge
		}
		if ipc.Address.IP.To4() != nil {
			v4 = append(v4, ipc.Address.IP.String())
		} else if ipc.Address.IP.To16() != nil && !ipc.Address.IP.IsLinkLocalUnicast() {
			v6 = append(v6, ipc.Address.IP.String())
		}
	}
	if len(v4)+len(v6) == 0 {
		return nil, errors.New("the network gave the pod no IP address")
	}
	return append(v4, v6...), nil
}

func pluginTypes(list *libcni.NetworkConfigList) string {
	var t []string
	for _, p := range list.Plugins {
		t = append(t, p.Network.Type)
	}
	return strings.Join(t, ",")
}

func (m *Manager) recordPath(id string) string { return filepath.Join(m.cfg.recordDir(), id+".json") }

func (m *Manager) writeRecord(rec record) error {
	if err := os.MkdirAll(m.cfg.recordDir(), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := m.recordPath(rec.ID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, m.recordPath(rec.ID))
}

func (m *Manager) readRecord(id string) (record, error) {
	var rec record
	b, err := os.ReadFile(m.recordPath(id))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("attachment record %s: %w", id, err)
	}
	return rec, nil
}

func (m *Manager) setSettled(id string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settled[id] = at
}

func (m *Manager) forgetSettled(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.settled, id)
}

// unsettledAt reports whether the attachment was still being set up when a
// list was taken at listed: that list cannot be trusted to show its sandbox.
func (m *Manager) unsettledAt(id string, listed time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.settled[id]
	return ok && (at.IsZero() || !at.Before(listed))
}
