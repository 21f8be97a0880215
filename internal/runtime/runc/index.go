package runc

import "sync"

// podIndex knows which records are a pod's, so that a List of one pod reads
// that pod's records only (Capabilities.PodList): the PLEG refreshes a pod
// after each of its events, and reading every record each time made a burst
// of pod starts cost in proportion to the square of the pods. Only this
// backend writes the records: it fills the index at Open from what is on
// disk, and keeps it as it creates and removes them. An ID goes in before
// its record is written and out after its record is removed, so that no
// record is ever missed; an ID without a record yet is skipped by List.
type podIndex struct {
	mu   sync.Mutex
	pods map[string]*podIDs
}

type podIDs struct {
	sandboxes, containers map[string]struct{}
}

func newPodIndex() *podIndex { return &podIndex{pods: map[string]*podIDs{}} }

func (x *podIndex) of(pod string) *podIDs {
	p := x.pods[pod]
	if p == nil {
		p = &podIDs{sandboxes: map[string]struct{}{}, containers: map[string]struct{}{}}
		x.pods[pod] = p
	}
	return p
}

func (x *podIndex) addSandbox(pod, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.of(pod).sandboxes[id] = struct{}{}
}

func (x *podIndex) addContainer(pod, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.of(pod).containers[id] = struct{}{}
}

func (x *podIndex) removeSandbox(pod, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.of(pod).sandboxes, id)
	x.drop(pod)
}

func (x *podIndex) removeContainer(pod, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.of(pod).containers, id)
	x.drop(pod)
}

// drop forgets a pod with no record left.
func (x *podIndex) drop(pod string) {
	if p := x.pods[pod]; len(p.sandboxes) == 0 && len(p.containers) == 0 {
		delete(x.pods, pod)
	}
}

// ids are the pod's sandbox and container IDs.
func (x *podIndex) ids(pod string) (sandboxes, containers []string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	p := x.pods[pod]
	if p == nil {
		return nil, nil
	}
	for id := range p.sandboxes {
		sandboxes = append(sandboxes, id)
	}
	for id := range p.containers {
		containers = append(containers, id)
	}
	return sandboxes, containers
}

// recoverRecords reads the records on disk once, after a restart: it fills
// the index, reserves the SELinux levels in use again, and tells the OOM
// recorder where this owner's containers' cgroups are.
func (b *Backend) recoverRecords() {
	for _, id := range b.ids("s", sandboxFile) {
		if rec, err := b.readSandbox(id); err == nil {
			b.index.addSandbox(rec.Config.PodUID, id)
			if rec.SELinux.Process != "" {
				b.sel.Reserve(rec.SELinux.Process)
			}
		}
	}
	for _, id := range b.ids("c", containerFile) {
		rec, err := b.readContainer(id)
		if err != nil {
			continue
		}
		b.index.addContainer(rec.PodUID, id)
		if b.owned(rec.Config.Labels) {
			b.ooms.Learn(id, rec.CgroupPath)
			if rec.OwnLevel {
				b.sel.Reserve(rec.SELinux.Process)
			}
		}
	}
}
