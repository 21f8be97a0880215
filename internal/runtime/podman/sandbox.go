package podman

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// Labels that keep a sandbox's joined network namespace and the addresses
// the core's network gave it: podman knows neither.
const (
	labelNetNS = "io.runlet.sandbox.netns"
	labelIPs   = "io.runlet.sandbox.ips"
)

// sandboxMeta is what never changes about a pod once it runs; caching it
// keeps the list path to one API call.
type sandboxMeta struct {
	created time.Time
	labels  map[string]string
	ips     []string
	infraID string
	// infraCgroup is the infra container's cgroup: a new container's is
	// its sibling. Empty until the infra runs.
	infraCgroup string
}

// infraOf names a pod and its infra container.
type infraOf struct{ pod, infra string }

// managedFilter selects the objects this backend manages: those of its
// owner when one is set, else every runlet-managed object.
func (b *Backend) managedFilter() string {
	if b.opts.Owner != "" {
		return runtime.LabelOwner + "=" + b.opts.Owner
	}
	return runtime.LabelManaged + "=true"
}

// podName is unique per pod UID and readable in `podman pod ps`.
func podName(namespace, name, uid string) string {
	return fmt.Sprintf("%s_%s_%s", namespace, name, shortUID(uid))
}

func shortUID(uid string) string {
	uid = strings.ReplaceAll(uid, "-", "")
	if len(uid) > 12 {
		uid = uid[:12]
	}
	return uid
}

func sandboxLabels(cfg runtime.SandboxConfig) map[string]string {
	l := make(map[string]string, len(cfg.Labels)+4)
	for k, v := range cfg.Labels {
		l[k] = v
	}
	if cfg.NetNS != "" {
		l[labelNetNS] = cfg.NetNS
		l[labelIPs] = strings.Join(cfg.IPs, ",")
	}
	if cfg.UserNS != nil {
		l[labelUserNS] = "true"
	}
	return l
}

// sandboxIPs are the addresses the core's network gave the pod, else
// those podman's own network did.
func sandboxIPs(labels map[string]string, ic libpod.InspectContainer) []string {
	if v := labels[labelIPs]; labels[labelNetNS] != "" && v != "" {
		return strings.Split(v, ",")
	}
	if ips := userNSAddresses(labels); len(ips) > 0 {
		return ips
	}
	return containerIPs(ic)
}

func podSpec(cfg runtime.SandboxConfig) libpod.PodSpec {
	name := podName(cfg.Namespace, cfg.Name, cfg.PodUID)
	spec := libpod.PodSpec{
		Name:             name,
		InfraName:        name + "-infra",
		Hostname:         cfg.Hostname,
		Labels:           sandboxLabels(cfg),
		SharedNamespaces: []string{"net", "ipc", "uts"},
	}
	if cfg.UserNS != nil {
		spec.IDMappings, spec.UserNS = podIDMappings(cfg.UserNS), &libpod.Namespace{NSMode: "private"}
	}
	switch {
	case cfg.HostNetwork:
		// The host's network comes with the host's name, as on the kubelet.
		spec.NetNS = &libpod.Namespace{NSMode: "host"}
		spec.UtsNS = &libpod.Namespace{NSMode: "host"}
	case cfg.NetNS != "" && cfg.UserNS != nil:
		// The infra makes the network namespace, in the pod's user
		// namespace, and its containers share it; the core wires it.
		spec.NetNS = &libpod.Namespace{NSMode: "none"}
	case cfg.NetNS != "":
		// podman 4 and 5 refuse a pod in a namespace given by path: the
		// pod shares none, and each container joins cfg.NetNS (see
		// containerSpec). The core's network publishes host ports.
		spec.NetNS = &libpod.Namespace{NSMode: "none"}
		spec.SharedNamespaces = []string{"ipc", "uts"}
	default:
		for _, p := range cfg.Ports {
			spec.PortMappings = append(spec.PortMappings, libpod.PortMapping{
				HostIP: p.HostIP, HostPort: uint16(p.HostPort),
				ContainerPort: uint16(p.ContainerPort), Protocol: strings.ToLower(p.Protocol),
			})
		}
	}
	return spec
}

// CreateSandbox creates the pod. On podman's network its infra container
// is started here, so that the pod IP exists when this returns. In the
// network namespace the core made, the IP is known already and the infra
// starts with the pod's first container (podman starts a container's pod
// infra with it), so a pod start costs one start call, as it does in podman.
func (b *Backend) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	spec := podSpec(cfg)
	b.applyPodSecurity(&spec, cfg)
	id, err := b.createPod(ctx, spec)
	if err != nil {
		return runtime.Sandbox{}, err
	}
	userNSIPs, err := b.readyPod(ctx, id, spec, cfg)
	if err != nil {
		_ = b.client.RemovePod(context.WithoutCancel(ctx), id)
		if spec.CgroupParent != "" {
			b.podCgroup(spec.CgroupParent).Remove()
		}
		return runtime.Sandbox{}, err
	}
	meta, err := b.sandboxMeta(ctx, id, spec.InfraName)
	if err != nil {
		return runtime.Sandbox{}, err
	}
	if len(userNSIPs) > 0 {
		meta.ips = userNSIPs
	}
	return runtime.Sandbox{
		ID: id, PodUID: cfg.PodUID, Namespace: cfg.Namespace, Name: cfg.Name,
		State: runtime.SandboxReady, IPs: meta.ips, NetNS: cfg.NetNS, CreatedAt: meta.created, Labels: meta.labels,
	}, nil
}

func (b *Backend) createPod(ctx context.Context, spec libpod.PodSpec) (string, error) {
	id, err := b.client.CreatePod(ctx, spec)
	// A pod and its infra container hold two names, a leftover may hold
	// both, and a create refused on the infra name leaves a pod behind.
	for try := 0; try < 4 && b.freeHeldName(ctx, err, spec.Name); try++ {
		id, err = b.client.CreatePod(ctx, spec)
	}
	return id, wrapf(err, "creating pod %s", spec.Name)
}

// readyPod sets the pod cgroup runlet made and starts the infra where the
// pod's network needs it now; it returns the addresses of a pod in a user
// namespace of its own.
func (b *Backend) readyPod(ctx context.Context, id string, spec libpod.PodSpec, cfg runtime.SandboxConfig) ([]string, error) {
	// Set once podman's pod cgroup is below it, which keeps a removal of
	// an earlier sandbox of the pod from taking it away (a cgroup with
	// another below it stays), and before any process runs in it.
	if spec.CgroupParent != "" {
		if err := b.podCgroup(spec.CgroupParent).Make(cfg.Resources); err != nil {
			return nil, fmt.Errorf("pod %s: %w", spec.Name, err)
		}
	}
	switch {
	case cfg.UserNS != nil && cfg.AttachNetwork != nil:
		ips, err := b.startUserNSPod(ctx, id, spec.InfraName, cfg)
		return ips, wrapf(err, "starting pod %s", spec.Name)
	case cfg.NetNS == "":
		if err := b.client.StartPod(ctx, id); err != nil {
			return nil, wrapf(infraHint(err), "starting pod %s", spec.Name)
		}
	}
	return nil, nil
}

// sandboxReady tells a pod's sandbox ready from its infra container's state
// and labels: the infra runs, or, in the core's network namespace, it was
// created and waits for the first container to start it.
func sandboxReady(infraState string, labels map[string]string) bool {
	switch mapState(infraState) {
	case runtime.ContainerRunning:
		return true
	case runtime.ContainerCreated:
		// A pod in a user namespace of its own starts its infra at once.
		return labels[labelNetNS] != "" && labels[labelUserNS] == ""
	}
	return false
}

// infraHint explains infra failures runlet cannot fix per request: podman
// 4.x takes the infra container's OCI runtime and rlimits only from
// containers.conf.
func infraHint(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "rlimit") || strings.Contains(msg, "hybrid mode") {
		return fmt.Errorf("%w (the pod's infra container takes its OCI runtime and rlimits from the podman "+
			"service's containers.conf: set [engine] runtime and [containers] default_ulimits there, "+
			"or let runlet start its own podman service)", err)
	}
	return err
}

// sandboxMeta returns the cached labels and IPs of a pod, inspecting its
// infra container once. infra names the infra container when the caller
// knows it (its ID or name), which spares inspecting the pod to find it.
func (b *Backend) sandboxMeta(ctx context.Context, id, infra string) (sandboxMeta, error) {
	b.mu.Lock()
	m, ok := b.sandboxes[id]
	b.mu.Unlock()
	if ok {
		return m, nil
	}
	return b.inspectSandbox(ctx, id, infra)
}

// inspectSandbox reads a pod's meta from its infra container and caches it
// once it is settled: the infra runs, or the pod is in the core's network
// namespace, whose addresses its labels hold. The infra's cgroup is then
// read again when the pod's first container starts the infra.
func (b *Backend) inspectSandbox(ctx context.Context, id, infra string) (sandboxMeta, error) {
	if infra == "" {
		pod, err := b.client.InspectPod(ctx, id)
		if err != nil {
			return sandboxMeta{}, wrapf(err, "inspecting pod %s", id)
		}
		if infra = pod.InfraContainerID; infra == "" {
			return sandboxMeta{created: pod.Created, labels: pod.Labels}, nil
		}
	}
	ic, err := b.client.InspectContainer(ctx, infra)
	if err != nil {
		return sandboxMeta{}, wrapf(err, "inspecting infra container of pod %s", id)
	}
	m := sandboxMeta{created: ic.Created, labels: ic.Config.Labels, infraID: ic.ID, ips: sandboxIPs(ic.Config.Labels, ic), infraCgroup: ic.State.CgroupPath}
	if !ic.State.Running && ic.Config.Labels[labelNetNS] == "" ||
		ic.Config.Labels[labelUserNS] != "" && len(m.ips) == 0 {
		// On podman's network the namespace and IP appear only when the
		// infra runs, and in a pod's own user namespace once the core's
		// network is attached: do not cache yet.
		return m, nil
	}
	b.mu.Lock()
	b.sandboxes[id] = m
	b.mu.Unlock()
	return m, nil
}

func containerIPs(c libpod.InspectContainer) []string {
	var ips []string
	seen := map[string]bool{}
	add := func(ip string) {
		if ip != "" && !seen[ip] {
			seen[ip] = true
			ips = append(ips, ip)
		}
	}
	add(c.NetworkSettings.IPAddress)
	names := make([]string, 0, len(c.NetworkSettings.Networks))
	for n := range c.NetworkSettings.Networks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		add(c.NetworkSettings.Networks[n].IPAddress)
	}
	add(c.NetworkSettings.GlobalIPv6Address)
	for _, n := range names {
		add(c.NetworkSettings.Networks[n].GlobalIPv6Address)
	}
	return ips
}

// RemoveSandbox kills and removes the pod and all its containers at once.
// Grace periods are runlet's business (StopContainer) and done by now.
// Removing a pod that is already gone is not an error. The cgroup runlet
// made for the pod goes with its last sandbox.
func (b *Backend) RemoveSandbox(ctx context.Context, id string) error {
	podCgroup, podID := b.podCgroupOf(ctx, id)
	err := retryBusy(ctx, func() error { return b.client.RemovePod(ctx, id) })
	if errors.Is(err, runtime.ErrNotFound) {
		err = nil
	}
	if err == nil {
		if podCgroup != "" {
			// Another sandbox of the pod keeps it.
			b.podCgroup(podCgroup).Remove(podID)
		}
		b.mu.Lock()
		delete(b.sandboxes, id)
		b.mu.Unlock()
	}
	return wrapf(err, "removing pod %s", id)
}

// forgetSandboxes drops cache entries of pods that no longer exist.
func (b *Backend) forgetSandboxes(live map[string]bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.sandboxes {
		if !live[id] {
			delete(b.sandboxes, id)
		}
	}
	for ctr, of := range b.infraPending {
		if !live[of.pod] {
			delete(b.infraPending, ctr)
		}
	}
}

// freeHeldName removes what made a pod create fail on a name in use, and
// reports whether the create is worth another try. A create cut short (the
// service died mid-call) can leave a pod, or only its infra container in
// podman's storage, that no list by label shows. Both names carry the pod's
// UID, so the holder is this pod's leftover.
func (b *Backend) freeHeldName(ctx context.Context, err error, podName string) bool {
	var rmErr error
	switch holder := nameHolder(err); {
	case podNameHeld(err):
		rmErr = b.RemoveSandbox(ctx, podName)
	case holder != "":
		rmErr = b.client.RemoveContainer(ctx, holder)
	default:
		return false
	}
	return rmErr == nil || errors.Is(rmErr, runtime.ErrNotFound)
}

// podNameHeld reports a pod create refused because a pod of that name exists.
func podNameHeld(err error) bool {
	return err != nil && strings.Contains(err.Error(), "pod already exists")
}
