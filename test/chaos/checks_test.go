package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// never lists what may not happen at any moment, settled or not: a container of a pod running twice,
// a pod with two sandboxes running, a restart count above what the fault allows, an ended pod that
// runs again, a pod failed that no fault could fail.
func (c *checker) never(l *look, f *fault) []string {
	var out []string
	twice := func(what string, keys map[string][]string) {
		for k, ids := range keys {
			if len(ids) > 1 {
				out = append(out, fmt.Sprintf("%s %s runs twice: %s", what, k, strings.Join(ids, ", ")))
			}
		}
	}
	ctrs, sbs := map[string][]string{}, map[string][]string{}
	for _, ct := range l.host.containers {
		if ct.running {
			k := c.podName(ct.pod) + "/" + ct.name
			ctrs[k] = append(ctrs[k], short(ct.id))
		}
	}
	for _, sb := range l.host.sandboxes {
		if sb.running {
			sbs[c.podName(sb.pod)] = append(sbs[c.podName(sb.pod)], short(sb.id))
		}
	}
	twice("container", ctrs)
	twice("the sandbox of pod", sbs)
	for _, p := range l.pods {
		out = append(out, c.neverPod(&p, f)...)
	}
	sort.Strings(out)
	return out
}

func (c *checker) neverPod(p *v1.Pod, f *fault) []string {
	var out []string
	b, known := c.base[p.UID]
	kills := f != nil && f.kills
	for _, cs := range p.Status.ContainerStatuses {
		if allowed := allowedRestarts(b, known, kills, cs.Name); cs.RestartCount > allowed {
			out = append(out, fmt.Sprintf("pod %s container %s restarted %d times; %s allows %d: last ended %s", p.Name, cs.Name,
				cs.RestartCount, faultName(f), allowed, lastEnd(cs)))
		}
	}
	if known && terminal(b.phase) && p.Status.Phase != b.phase {
		out = append(out, fmt.Sprintf("pod %s had ended %s and is now %s", p.Name, b.phase, p.Status.Phase))
	}
	// A pod that never restarts fails only when a fault killed its container: one started after the
	// last check, under a fault that kills. A deleted one may end Failed (a container killed at the
	// end of its grace period, as the kubelet reports it) before runlet's final delete, which an
	// apiserver outage holds up.
	if p.Status.Phase == v1.PodFailed && p.DeletionTimestamp == nil && (known || !kills) {
		out = append(out, fmt.Sprintf("pod %s failed (%s: %s)", p.Name, p.Status.Reason, p.Status.Message))
	}
	return out
}

// allowedRestarts is the most restarts a container may have after a fault: what it had at the last
// check, and one more if the fault kills and the container ran then; a pod created since may have
// one under a fault that kills (its container may have started before it struck), else none.
func allowedRestarts(b podBase, known, kills bool, name string) int32 {
	if !known {
		if kills {
			return 1
		}
		return 0
	}
	if _, ran := b.running[name]; ran && kills {
		return b.restarts[name] + 1
	}
	return b.restarts[name]
}

// restarts, once settled, holds each container that ran at the last check to what the fault did to
// it: the same container with the same count if the fault kills nothing, a new one counted once more
// if it killed it.
func (c *checker) restarts(l *look, f *fault) []string {
	kills := f != nil && f.kills
	var out []string
	for _, p := range l.pods {
		b, known := c.base[p.UID]
		if !known {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			id, ran := b.running[cs.Name]
			switch {
			case !ran:
			case kills && (cs.ContainerID == id || cs.RestartCount != b.restarts[cs.Name]+1):
				out = append(out, fmt.Sprintf("pod %s container %s: %s, %d restarts after the reboot; want a new container, %d restarts",
					p.Name, cs.Name, short(cs.ContainerID), cs.RestartCount, b.restarts[cs.Name]+1))
			case !kills && cs.ContainerID != id:
				out = append(out, fmt.Sprintf("pod %s container %s replaced (%s, now %s, %d restarts) though %s kills no container",
					p.Name, cs.Name, short(id), short(cs.ContainerID), cs.RestartCount, faultName(f)))
			}
		}
	}
	return out
}

// pending lists what does not hold yet of what must once the node settled.
func (c *checker) pending(l *look, f *fault) []string {
	var out []string
	if !l.nodeReady {
		out = append(out, "the node is not Ready")
	}
	for _, d := range l.deployments {
		want, s := *d.Spec.Replicas, d.Status
		if s.ObservedGeneration < d.Generation || s.Replicas != want || s.UpdatedReplicas != want || s.ReadyReplicas != want {
			out = append(out, fmt.Sprintf("deployment %s: %d pods, %d updated, %d ready; want %d", d.Name, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas, want))
		}
	}
	for _, p := range l.pods {
		if s := c.podPending(&p, f); s != "" {
			out = append(out, s)
		}
		out = append(out, agrees(l.host, &p)...)
	}
	out = append(out, c.orphans(l)...)
	out = append(out, c.network(l)...)
	out = append(out, c.leftovers(l)...)
	return out
}

// podPending says how a pod is not yet as its spec wants it: running and ready, or ended.
func (c *checker) podPending(p *v1.Pod, f *fault) string {
	switch {
	case p.DeletionTimestamp != nil:
		return fmt.Sprintf("pod %s is still being deleted", p.Name)
	case completes(p.Labels[kindLabel]):
		if !terminal(p.Status.Phase) {
			return fmt.Sprintf("job %s is %s, not ended: %s", p.Name, p.Status.Phase, states(p))
		}
	case p.Status.Phase != v1.PodRunning || !framework.PodReady(p):
		return fmt.Sprintf("pod %s is %s, ready %v: %s", p.Name, p.Status.Phase, framework.PodReady(p), states(p))
	}
	return ""
}

// agrees holds the backend to the API's status of a pod: a pod that runs has one sandbox and runs the
// very containers the API names; an ended one runs no container. (An ended pod keeps its sandbox and
// its pod network until it is deleted: runlet stops only its containers, where the kubelet stops
// the sandbox too and releases the address. The soak counts such pods, and does not fail on them.)
func agrees(h *hostView, p *v1.Pod) []string {
	var sbs []string
	running := map[string][]string{}
	for _, sb := range h.sandboxes {
		if sb.pod == p.UID && sb.running {
			sbs = append(sbs, short(sb.id))
		}
	}
	for _, ct := range h.containers {
		if ct.pod == p.UID && ct.running {
			running[ct.name] = append(running[ct.name], short(ct.id))
		}
	}
	if terminal(p.Status.Phase) {
		if len(running) > 0 {
			return []string{fmt.Sprintf("pod %s ended, yet the backend runs its containers %v", p.Name, running)}
		}
		return nil
	}
	var out []string
	if p.Status.Phase == v1.PodRunning && len(sbs) != 1 {
		out = append(out, fmt.Sprintf("pod %s runs with %d sandboxes in the backend %v; want 1", p.Name, len(sbs), sbs))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			continue
		}
		if ids := running[cs.Name]; len(ids) != 1 || ids[0] != short(cs.ContainerID) {
			out = append(out, fmt.Sprintf("pod %s container %s: the API says %s runs, the backend runs %v", p.Name, cs.Name, short(cs.ContainerID), ids))
		}
	}
	return out
}

// orphans are the backend's objects of pods the API does not hold.
func (c *checker) orphans(l *look) []string {
	held := heldUIDs(l.pods, false)
	var out []string
	for _, sb := range l.host.sandboxes {
		if !held[sb.pod] {
			out = append(out, fmt.Sprintf("sandbox %s (running %v) of pod %s, which the API does not hold", short(sb.id), sb.running, c.podName(sb.pod)))
		}
	}
	for _, ct := range l.host.containers {
		if !held[ct.pod] {
			out = append(out, fmt.Sprintf("container %s %s (running %v) of pod %s, which the API does not hold", ct.name, short(ct.id), ct.running, c.podName(ct.pod)))
		}
	}
	return out
}

// network holds the pod network to the pods: one attachment for each that runs, with its namespace
// pinned, its address lease and its veth on the node's bridge, and none for a pod the API does not
// hold. (An ended pod may keep its attachment, see agrees; after a reboot its namespace is gone.)
func (c *checker) network(l *look) []string {
	h, held, live := l.host, heldUIDs(l.pods, false), heldUIDs(l.pods, true)
	var out []string
	per, pinned := map[types.UID]int{}, 0
	for id, a := range h.attachments {
		uid := types.UID(a.Pod.UID)
		per[uid]++
		if !held[uid] {
			out = append(out, fmt.Sprintf("pod network %s of pod %s/%s, which the API does not hold", id, a.Pod.Namespace, a.Pod.Name))
		}
		if _, err := os.Stat(a.NetNS); err == nil {
			pinned++
		} else if live[uid] {
			out = append(out, fmt.Sprintf("pod network %s of pod %s/%s: its namespace %s is gone", id, a.Pod.Namespace, a.Pod.Name, a.NetNS))
		}
	}
	for _, p := range l.pods {
		if (live[p.UID] && per[p.UID] != 1) || per[p.UID] > 1 {
			out = append(out, fmt.Sprintf("pod %s (%s) has %d pod networks; want 1", p.Name, p.Status.Phase, per[p.UID]))
		}
	}
	for ip, id := range h.leases {
		if _, ok := h.attachments[id]; !ok {
			out = append(out, fmt.Sprintf("IPAM lease %s held by %s, which no pod network is", ip, id))
		}
	}
	if len(h.bridgePorts) != pinned {
		out = append(out, fmt.Sprintf("%d veths on the node's bridge for %d pod network namespaces: %v", len(h.bridgePorts), pinned, h.bridgePorts))
	}
	return out
}

// leftovers are the mounts, cgroups and pod directories of pods the API does not hold.
func (c *checker) leftovers(l *look) []string {
	held := heldUIDs(l.pods, false)
	var out []string
	for _, m := range l.host.mounts {
		if uid, ok := c.mountOwner(l.host, m); !ok {
			out = append(out, fmt.Sprintf("mount %s belongs to no pod's object", m))
		} else if uid != "" && !held[uid] {
			out = append(out, fmt.Sprintf("mount %s of pod %s, which the API does not hold", m, c.podName(uid)))
		}
	}
	for uid, cgs := range l.host.cgroups {
		if _, ours := c.seen.name(uid); ours && !held[uid] {
			out = append(out, fmt.Sprintf("cgroups of pod %s, which the API does not hold: %v", c.podName(uid), cgs))
		}
	}
	for _, uid := range l.host.podDirs {
		if !held[uid] {
			out = append(out, fmt.Sprintf("the directory of pod %s, which the API does not hold", c.podName(uid)))
		}
	}
	return out
}

// mountOwner finds the pod of a mount under the node's directories, through the backend object
// whose directory holds it; "" and true: a mount of the node's own, not a pod's.
func (c *checker) mountOwner(h *hostView, path string) (types.UID, bool) {
	byID := map[string]types.UID{}
	for _, sb := range h.sandboxes {
		byID[sb.id], byID[sb.infra] = sb.pod, sb.pod
	}
	for _, ct := range h.containers {
		byID[ct.id] = ct.pod
	}
	rel, err := filepath.Rel(c.n.rl.RootDir, path)
	if err == nil && !strings.HasPrefix(rel, "..") {
		parts := strings.Split(rel, string(filepath.Separator))
		switch {
		case len(parts) > 1 && parts[0] == "pods":
			return types.UID(parts[1]), true
		case len(parts) > 2 && parts[0] == "runc" && (parts[1] == "c" || parts[1] == "s"):
			uid, ok := byID[parts[2]]
			return uid, ok
		}
		return "", false
	}
	if c.n.pm == nil {
		return "", false
	}
	if path == filepath.Join(c.n.pm.Root, "overlay") {
		return "", true // the storage driver's own
	}
	if id, ok := h.merged[path]; ok {
		uid, ok := byID[id]
		return uid, ok
	}
	if rel, err := filepath.Rel(c.n.pm.Root, path); err == nil && !strings.HasPrefix(rel, "..") {
		if parts := strings.Split(rel, string(filepath.Separator)); len(parts) > 1 && parts[0] == "overlay-containers" {
			uid, ok := byID[parts[1]]
			return uid, ok
		}
	}
	return "", false
}

// heldUIDs are the pods the API holds; live: only those that have not ended.
func heldUIDs(pods []v1.Pod, live bool) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, p := range pods {
		if !live || !terminal(p.Status.Phase) {
			out[p.UID] = true
		}
	}
	return out
}

func (c *checker) podName(uid types.UID) string {
	if n, ok := c.seen.name(uid); ok {
		return n
	}
	return string(uid)
}

// short is a container ID without its runtime's prefix, cut to 12 characters.
func short(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		id = after
	}
	return id[:min(12, len(id))]
}

func faultName(f *fault) string {
	if f == nil {
		return "the start"
	}
	return f.name
}

func states(p *v1.Pod) string {
	var s []string
	for _, cs := range p.Status.ContainerStatuses {
		st := "waiting"
		switch {
		case cs.State.Running != nil:
			st = "running"
		case cs.State.Terminated != nil:
			st = fmt.Sprintf("terminated (%s, exit %d)", cs.State.Terminated.Reason, cs.State.Terminated.ExitCode)
		case cs.State.Waiting != nil:
			st = fmt.Sprintf("waiting (%s: %s)", cs.State.Waiting.Reason, cs.State.Waiting.Message)
		}
		s = append(s, fmt.Sprintf("%s %s %s, %d restarts", cs.Name, short(cs.ContainerID), st, cs.RestartCount))
	}
	return strings.Join(s, "; ")
}

func lastEnd(cs v1.ContainerStatus) string {
	if t := cs.LastTerminationState.Terminated; t != nil {
		return fmt.Sprintf("%s, exit %d at %s", t.Reason, t.ExitCode, t.FinishedAt.Format("15:04:05"))
	}
	return "unknown"
}

// describe sums up a settled look for the progress line.
func (c *checker) describe(l *look) string {
	var running, done, restarted int
	for _, p := range l.pods {
		if terminal(p.Status.Phase) {
			done++
		} else {
			running++
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarted += int(cs.RestartCount)
		}
	}
	var ctrs, cgroups, holding int
	for _, ct := range l.host.containers {
		if ct.running {
			ctrs++
		}
	}
	ended := map[types.UID]bool{}
	for _, p := range l.pods {
		ended[p.UID] = terminal(p.Status.Phase)
	}
	keeps := map[types.UID]bool{}
	for _, sb := range l.host.sandboxes {
		keeps[sb.pod] = keeps[sb.pod] || (sb.running && ended[sb.pod])
	}
	for _, a := range l.host.attachments {
		keeps[types.UID(a.Pod.UID)] = keeps[types.UID(a.Pod.UID)] || ended[types.UID(a.Pod.UID)]
	}
	for _, k := range keeps {
		if k {
			holding++
		}
	}
	for uid := range l.host.cgroups {
		if _, ours := c.seen.name(uid); ours {
			cgroups++
		}
	}
	return fmt.Sprintf("%d pods running, %d ended (%d of them keep their sandbox or address), %d deployments; backend: %d sandboxes, %d containers running; %d leases, %d pod networks, %d veths; %d mounts, %d pod cgroups; %d restarts counted in all",
		running, done, holding, len(l.deployments), len(l.host.sandboxes), ctrs, len(l.host.leases), len(l.host.attachments), len(l.host.bridgePorts),
		len(l.host.mounts), cgroups, restarted)
}
