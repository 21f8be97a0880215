package userns

import (
	"errors"
	"fmt"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
)

// HostIDs are the host's IDs for pods' ranges.
type HostIDs struct {
	First, Length uint32
}

// DefaultHostIDs is the kubelet's default: every ID from 65536 up.
var DefaultHostIDs = HostIDs{First: IDsPerPod, Length: 1<<32 - IDsPerPod}

// kubeletUser names the subordinate IDs the kubelet takes for pods.
const kubeletUser = "kubelet"

// NodeHostIDs finds the node's IDs as the kubelet does: the subordinate
// range of the user "kubelet" (getsubids), the same for users and groups,
// where the user exists and the tool is installed; else the default. The
// range must hold maxPods pods.
func NodeHostIDs(maxPods int) (HostIDs, error) {
	if _, err := user.Lookup(kubeletUser); err != nil {
		var unknown user.UnknownUserError
		if errors.As(err, &unknown) {
			return DefaultHostIDs, nil
		}
		return HostIDs{}, err
	}
	tool, err := exec.LookPath("getsubids")
	if err != nil {
		return DefaultHostIDs, nil
	}
	uids, err := exec.Command(tool, kubeletUser).Output()
	if err != nil {
		return HostIDs{}, fmt.Errorf("error retrieving additional uids for user %q: %w", kubeletUser, err)
	}
	gids, err := exec.Command(tool, "-g", kubeletUser).Output()
	if err != nil {
		return HostIDs{}, fmt.Errorf("error retrieving additional gids for user %q: %w", kubeletUser, err)
	}
	if string(uids) != string(gids) {
		return HostIDs{}, fmt.Errorf("mismatched subuids and subgids for user %q", kubeletUser)
	}
	ids, err := parseGetSubIDs(string(uids))
	if err != nil {
		return HostIDs{}, err
	}
	return ids, ids.check(maxPods)
}

// parseGetSubIDs reads getsubids' one line: "0: kubelet 65536 7208960".
func parseGetSubIDs(out string) (HostIDs, error) {
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	if len(lines) != 1 {
		return HostIDs{}, fmt.Errorf("error parsing line %q: it must contain only one line", out)
	}
	parts := strings.Fields(lines[0])
	if len(parts) != 4 {
		return HostIDs{}, fmt.Errorf("invalid line %q", out)
	}
	first, err := strconv.ParseUint(parts[2], 10, 32)
	if err != nil {
		return HostIDs{}, fmt.Errorf("error parsing line %q: %w", out, err)
	}
	n, err := strconv.ParseUint(parts[3], 10, 32)
	if err != nil {
		return HostIDs{}, fmt.Errorf("error parsing line %q: %w", out, err)
	}
	return HostIDs{First: uint32(first), Length: uint32(n)}, nil
}

// check applies the kubelet's rules to a configured range.
func (h HostIDs) check(maxPods int) error {
	switch {
	case h.First%IDsPerPod != 0:
		return fmt.Errorf("kubelet user assigned ID %v is not a multiple of %v", h.First, IDsPerPod)
	case h.First < IDsPerPod:
		return fmt.Errorf("kubelet user assigned ID %v must be greater or equal to %v", h.First, IDsPerPod)
	case h.Length%IDsPerPod != 0:
		return fmt.Errorf("kubelet user assigned IDs length %v is not a multiple of %v", h.Length, IDsPerPod)
	case h.Length/IDsPerPod < uint32(maxPods):
		return fmt.Errorf("kubelet user assigned IDs are not enough to support %v pods", maxPods)
	}
	return nil
}
