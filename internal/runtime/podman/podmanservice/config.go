package podmanservice

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// RLimit is one POSIX rlimit by its short name ("nofile", "nproc").
type RLimit struct {
	Type       string
	Soft, Hard uint64
}

// Config is what runlet imposes on a service it starts, through
// containers.conf: the infra container of a pod cannot be given an OCI
// runtime, rlimits or a cgroups mode through the API, so it would fail, or
// keep its conmon in the pod's cgroup, where a container created by runlet
// does not.
type Config struct {
	OCIRuntime string // "" keeps the service's default
	RLimits    []RLimit
	// ConmonOutsidePods keeps every conmon in the service's cgroup
	// (cgroups = "no-conmon"), the infra's too: where conmon cannot make
	// itself unkillable, a pod at its memory limit must not charge it.
	ConmonOutsidePods bool
}

// Imposed is the Config that gives infra containers what runlet gives every
// container: ociRuntime (when it is not the service's default), the
// rlimits clamped to l, and, without CAP_SYS_RESOURCE, conmon out of the
// pod's cgroup.
func Imposed(l Limits, ociRuntime, serviceDefault string) Config {
	c := Config{RLimits: l.RLimits(), ConmonOutsidePods: !l.CapSysResource}
	if ociRuntime != serviceDefault {
		c.OCIRuntime = ociRuntime
	}
	return c
}

// Empty says a plain service will do: with nothing to impose no
// containers.conf is given, so the host's own is not touched.
func (c Config) Empty() bool {
	return c.OCIRuntime == "" && len(c.RLimits) == 0 && !c.ConmonOutsidePods
}

// ContainersConf renders c as a containers.conf fragment.
func (c Config) ContainersConf() string {
	var b strings.Builder
	b.WriteString("# written by runlet for the podman service it runs\n")
	if len(c.RLimits) > 0 || c.ConmonOutsidePods {
		b.WriteString("[containers]\n")
	}
	if len(c.RLimits) > 0 {
		var ul []string
		for _, r := range c.RLimits {
			ul = append(ul, fmt.Sprintf("%q", fmt.Sprintf("%s=%d:%d", r.Type, r.Soft, r.Hard)))
		}
		fmt.Fprintf(&b, "default_ulimits = [%s]\n", strings.Join(ul, ", "))
	}
	if c.ConmonOutsidePods {
		b.WriteString("cgroups = \"no-conmon\"\n")
	}
	if c.OCIRuntime != "" {
		fmt.Fprintf(&b, "[engine]\nruntime = %q\n", c.OCIRuntime)
	}
	return b.String()
}

// Save writes c to path, for Options.ContainersConf.
func (c Config) Save(path string) error {
	return os.WriteFile(path, []byte(c.ContainersConf()), 0o644)
}

// OCIRuntime is the runtime a service on this host must run containers
// with. crun refuses cgroup v1 hosts with a cgroup2 hierarchy mounted too
// ("cgroups in hybrid mode not supported"), and podman reports such hosts as
// "v1"; runc handles every v1 layout, so it is preferred there when
// installed. cgroupVersion and serviceDefault are what podman's info says.
func OCIRuntime(cgroupVersion, serviceDefault string) string {
	if cgroupVersion == "v1" && serviceDefault != "runc" && haveBinary("runc") {
		return "runc"
	}
	return serviceDefault
}

// haveBinary looks in PATH and in the sbin directories a non-root PATH lacks.
func haveBinary(name string) bool {
	if _, err := exec.LookPath(name); err == nil {
		return true
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin"} {
		if st, err := os.Stat(dir + "/" + name); err == nil && st.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// confEnv points podman at the containers.conf in path. podman 4.4+ merges
// CONTAINERS_CONF_OVERRIDE over the system files; older ones only know
// CONTAINERS_CONF, which replaces them.
func confEnv(podman, path string) []string {
	if path == "" {
		return nil
	}
	name := "CONTAINERS_CONF"
	if podmanAtLeast(podman, 4, 4) {
		name = "CONTAINERS_CONF_OVERRIDE"
	}
	return []string{name + "=" + path}
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)`)

// podmanAtLeast runs `podman --version`; unknown counts as old.
func podmanAtLeast(podman string, major, minor int) bool {
	out, err := exec.Command(podman, "--version").Output()
	if err != nil {
		return false
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil {
		return false
	}
	ma, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return ma > major || ma == major && mi >= minor
}
