package framework

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/cgroups"
)

// serviceCgroup is the cgroup runlet runs in with RunletOptions.ServiceCgroup, in every hierarchy the
// host mounts, as a service manager runs a service (systemd's unit cgroup) or a runtime a container.
type serviceCgroup struct {
	dirs []string
}

// newServiceCgroup makes one named after the node; the test's end removes it.
func newServiceCgroup(t testing.TB, node string) *serviceCgroup {
	hs, err := cgroups.Hierarchies(cgroups.Root)
	if err != nil {
		t.Fatal(err)
	}
	s := &serviceCgroup{}
	for _, h := range hs {
		d := filepath.Join(h, "runlet-e2e-"+node)
		if err := cgroups.Make(h, d); err != nil {
			t.Fatalf("making runlet's service cgroup: %v", err)
		}
		s.dirs = append(s.dirs, d)
	}
	t.Cleanup(func() { s.remove(t) })
	return s
}

// wrap runs argv in the cgroup: a shell joins it, then executes argv in its place (same PID).
func (s *serviceCgroup) wrap(argv []string) (path string, args, env []string) {
	procs := make([]string, len(s.dirs))
	for i, d := range s.dirs {
		procs[i] = filepath.Join(d, "cgroup.procs")
	}
	const join = `for f in $RUNLET_E2E_CGROUP; do echo $$ > "$f" || exit 1; done; unset RUNLET_E2E_CGROUP; exec "$0" "$@"`
	return "/bin/sh", append([]string{"-c", join}, argv...), []string{"RUNLET_E2E_CGROUP=" + strings.Join(procs, " ")}
}

// pids are the processes in the cgroup, in any hierarchy.
func (s *serviceCgroup) pids() []int {
	seen := map[int]bool{}
	var out []int
	for _, d := range s.dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// stop ends every process in the cgroup as systemd's KillMode=control-group does: SIGTERM to all,
// then SIGKILL to those left after timeout. It reports whether SIGTERM was enough.
func (s *serviceCgroup) stop(timeout time.Duration) bool {
	for _, pid := range s.pids() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	if s.emptyWithin(timeout) {
		return true
	}
	for !s.emptyWithin(100 * time.Millisecond) {
		for _, pid := range s.pids() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return false
}

func (s *serviceCgroup) emptyWithin(d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if len(s.pids()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func (s *serviceCgroup) remove(t testing.TB) {
	if pids := s.pids(); len(pids) > 0 {
		t.Errorf("processes %v were left in runlet's service cgroup after its stop", pids)
		s.stop(0)
	}
	for _, d := range s.dirs {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Logf("removing %s: %v", d, err)
		}
	}
}
