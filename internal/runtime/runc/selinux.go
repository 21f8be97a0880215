package runc

import (
	"fmt"
	"strings"

	"github.com/opencontainers/selinux/go-selinux"
	"github.com/opencontainers/selinux/go-selinux/label"
	"github.com/runlet/runlet/internal/runtime"
)

// seLabels are the SELinux labels of a pod or a container: the one its
// processes run with and the one its files get. Empty where the host does
// not enforce SELinux.
type seLabels struct {
	Process string `json:"process,omitempty"`
	Mount   string `json:"mount,omitempty"`
}

// labeler allots SELinux labels and relabels files: go-selinux's on the
// host, a record of calls in unit tests.
type labeler interface {
	Enabled() bool
	// Init returns the labels of options ("type:spc_t", "level:s0:c1,c2")
	// completed from the host policy's container defaults, with a new MCS
	// level unless options name one, and reserves the level.
	Init(options []string) (seLabels, error)
	Reserve(process string)
	Release(process string)
	Relabel(path, mount string) error
}

type hostLabeler struct{}

func (hostLabeler) Enabled() bool { return selinux.GetEnabled() }

func (hostLabeler) Init(options []string) (seLabels, error) {
	p, m, err := label.InitLabels(options)
	return seLabels{Process: p, Mount: m}, err
}

// Reserve records a level found on disk at start: one already reserved is
// a pod's its containers share.
func (hostLabeler) Reserve(process string) { _ = selinux.ReserveLabelV2(process) }
func (hostLabeler) Release(process string) { selinux.ReleaseLabel(process) }

// Relabel is a private relabel (":Z"): the pod's containers share its MCS
// level, so all of them can use what one of them can.
func (hostLabeler) Relabel(path, mount string) error { return label.Relabel(path, mount, false) }

// podLabels gives a new pod an MCS level of its own, as CRI runtimes give
// each sandbox one.
func podLabels(l labeler) (seLabels, error) {
	if !l.Enabled() {
		return seLabels{}, nil
	}
	labels, err := l.Init(nil)
	if err != nil {
		return seLabels{}, fmt.Errorf("allotting the pod's SELinux labels: %w", err)
	}
	return labels, nil
}

// containerLabels are a container's labels: the pod's, changed by what
// its seLinuxOptions set; a level it does not set is the pod's.
func containerLabels(l labeler, pod seLabels, options []string) (seLabels, error) {
	if len(options) == 0 || !l.Enabled() {
		if len(options) > 0 {
			// The core asks only where the host enforces SELinux; running
			// without the label asked for would be quietly less confined.
			return seLabels{}, fmt.Errorf("SELinux options %v: SELinux is not enabled on this host", options)
		}
		return pod, nil
	}
	if lvl := level(pod.Process); lvl != "" && !hasLevel(options) {
		options = append([]string{"level:" + lvl}, options...)
	}
	labels, err := l.Init(options)
	if err != nil {
		return seLabels{}, fmt.Errorf("SELinux options %v: %w", options, err)
	}
	return labels, nil
}

// ownLevel reports a container's labels whose MCS level is not its pod's:
// the container reserved that level, and gives it back when it goes.
func ownLevel(pod, c seLabels) bool {
	return c.Process != "" && level(c.Process) != level(pod.Process)
}

// relabelMounts gives the container's mount label to the sources the core
// asked relabelled (the kubelet's SELinuxRelabel).
func relabelMounts(l labeler, mounts []runtime.Mount, c seLabels) error {
	if c.Mount == "" {
		return nil
	}
	for _, m := range mounts {
		if !m.Relabel || m.HostPath == "" {
			continue
		}
		if err := l.Relabel(m.HostPath, c.Mount); err != nil {
			return fmt.Errorf("relabelling %s for %s: %w", m.HostPath, m.ContainerPath, err)
		}
	}
	return nil
}

// level is the MCS level of a label ("s0:c1,c2" of "u:r:t:s0:c1,c2").
func level(lbl string) string {
	parts := strings.SplitN(lbl, ":", 4)
	if len(parts) < 4 {
		return ""
	}
	return parts[3]
}

func hasLevel(options []string) bool {
	for _, o := range options {
		if strings.HasPrefix(o, "level:") {
			return true
		}
	}
	return false
}
