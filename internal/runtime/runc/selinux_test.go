package runc

import (
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// policyLabeler stands in for a host's SELinux policy: each Init without a
// level gets a new one, and it records what it reserves, releases and
// relabels.
type policyLabeler struct {
	enabled   bool
	next      int
	reserved  map[string]bool
	relabeled []string
}

func newPolicyLabeler() *policyLabeler {
	return &policyLabeler{enabled: true, reserved: map[string]bool{}}
}

func (p *policyLabeler) Enabled() bool { return p.enabled }

func (p *policyLabeler) Init(options []string) (seLabels, error) {
	typ, lvl := "container_t", ""
	for _, o := range options {
		k, v, _ := strings.Cut(o, ":")
		switch k {
		case "type":
			typ = v
		case "level":
			lvl = v
		}
	}
	if lvl == "" {
		p.next++
		lvl = "s0:c" + string(rune('0'+p.next))
	}
	p.reserved[lvl] = true
	return seLabels{Process: "system_u:system_r:" + typ + ":" + lvl, Mount: "system_u:object_r:container_file_t:" + lvl}, nil
}

func (p *policyLabeler) Reserve(process string) { p.reserved[level(process)] = true }
func (p *policyLabeler) Release(process string) { delete(p.reserved, level(process)) }
func (p *policyLabeler) Relabel(path, mount string) error {
	p.relabeled = append(p.relabeled, path+"="+mount)
	return nil
}

// TestContainerLabelsSharePodLevel: the pod's containers run at its MCS
// level unless they name their own, which goes with the container.
func TestContainerLabelsSharePodLevel(t *testing.T) {
	l := newPolicyLabeler()
	pod, err := podLabels(l)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := containerLabels(l, pod, nil)
	if err != nil || plain != pod {
		t.Errorf("no options: %+v, %v; want the pod's %+v", plain, err, pod)
	}
	typed, err := containerLabels(l, pod, []string{"type:spc_t"})
	if err != nil || typed.Process != "system_u:system_r:spc_t:"+level(pod.Process) {
		t.Errorf("type option: %+v, %v; want spc_t at the pod's level %s", typed, err, level(pod.Process))
	}
	own, err := containerLabels(l, pod, []string{"level:s0:c9,c10"})
	if err != nil || level(own.Process) != "s0:c9,c10" {
		t.Fatalf("level option: %+v, %v", own, err)
	}
	if ownLevel(pod, plain) || ownLevel(pod, typed) || !ownLevel(pod, own) {
		t.Errorf("own levels: plain %v, typed %v, own %v; want the last only", ownLevel(pod, plain), ownLevel(pod, typed), ownLevel(pod, own))
	}
	// What RemoveContainer gives back.
	for _, c := range []seLabels{plain, typed, own} {
		if ownLevel(pod, c) {
			l.Release(c.Process)
		}
	}
	if !l.reserved[level(pod.Process)] || l.reserved["s0:c9,c10"] {
		t.Errorf("reserved after the containers went: %v; want the pod's level only", l.reserved)
	}
}

// TestSELinuxOptionsOnHostWithout: options reach a backend only where the
// host enforces SELinux; one that does not refuses them, and gives no
// labels otherwise.
func TestSELinuxOptionsOnHostWithout(t *testing.T) {
	l := &policyLabeler{}
	pod, err := podLabels(l)
	if err != nil || pod != (seLabels{}) {
		t.Errorf("pod labels: %+v, %v; want none", pod, err)
	}
	if _, err := containerLabels(l, pod, []string{"type:spc_t"}); err == nil {
		t.Error("options on a host without SELinux: no error")
	}
}

// TestRelabelMounts: only the sources the core asked relabelled get the
// container's mount label.
func TestRelabelMounts(t *testing.T) {
	l := newPolicyLabeler()
	mounts := []runtime.Mount{
		{HostPath: "/var/lib/runlet/pods/u/volumes/kubernetes.io~empty-dir/data", ContainerPath: "/data", Relabel: true},
		{HostPath: "/srv/host", ContainerPath: "/host"},
		{Image: "busybox", ContainerPath: "/img", Relabel: true},
	}
	c := seLabels{Process: "u:r:container_t:s0:c1,c2", Mount: "u:object_r:container_file_t:s0:c1,c2"}
	if err := relabelMounts(l, mounts, c); err != nil {
		t.Fatal(err)
	}
	want := []string{mounts[0].HostPath + "=" + c.Mount}
	if !reflect.DeepEqual(l.relabeled, want) {
		t.Errorf("relabelled %v; want %v", l.relabeled, want)
	}
	l.relabeled = nil
	if err := relabelMounts(l, mounts, seLabels{}); err != nil || l.relabeled != nil {
		t.Errorf("without labels: relabelled %v, %v; want nothing", l.relabeled, err)
	}
}
