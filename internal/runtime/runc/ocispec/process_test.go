package ocispec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// TestArgs checks Kubernetes' command/args rules against an image with
// both an entrypoint and a cmd, the cases podman's TestEntrypointSemantics
// runs for real.
func TestArgs(t *testing.T) {
	img := ImageConfig{Entrypoint: []string{"echo", "ep"}, Cmd: []string{"default-cmd"}}
	for _, tc := range []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"image", nil, nil, []string{"echo", "ep", "default-cmd"}},
		{"args follow the image's entrypoint", nil, []string{"arg1"}, []string{"echo", "ep", "arg1"}},
		{"a command drops the image's cmd", []string{"echo", "cmd"}, nil, []string{"echo", "cmd"}},
		{"both", []string{"echo", "cmd"}, []string{"x"}, []string{"echo", "cmd", "x"}},
	} {
		in := base()
		in.Image, in.Container.Command, in.Container.Args = img, tc.command, tc.args
		if got := build(t, in).Process.Args; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: args %q; want %q", tc.name, got, tc.want)
		}
	}
	in := base()
	in.Container.Command = nil
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "no command") || !strings.Contains(err.Error(), "app") {
		t.Errorf("no command anywhere: %v; want an error naming the container", err)
	}
}

func TestWorkingDir(t *testing.T) {
	for _, tc := range []struct{ ctr, img, want string }{{"", "", "/"}, {"", "/srv", "/srv"}, {"/work", "/srv", "/work"}} {
		in := base()
		in.Container.WorkingDir, in.Image.WorkingDir = tc.ctr, tc.img
		if got := build(t, in).Process.Cwd; got != tc.want {
			t.Errorf("container %q, image %q: cwd %q; want %q", tc.ctr, tc.img, got, tc.want)
		}
	}
}

// TestEnv is podman's TestContainerEnv (the same environment on both
// backends) with HOSTNAME, which podman adds on its own, and the order.
func TestEnv(t *testing.T) {
	const path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, tc := range []struct {
		name     string
		imageEnv []string
		cfg      runtime.ContainerConfig
		hostNet  bool
		want     []string
	}{
		{"image without PATH", nil, runtime.ContainerConfig{Env: []string{"A=1"}}, false,
			[]string{path, "HOSTNAME=pod", "A=1"}},
		{"image PATH and a TTY", []string{"PATH=/bin", "LANG=C.UTF-8"}, runtime.ContainerConfig{TTY: true}, false,
			[]string{"PATH=/bin", "TERM=xterm", "HOSTNAME=pod", "LANG=C.UTF-8"}},
		{"image TERM wins over the TTY's, the pod's over both", []string{"TERM=vt100", "X=image"},
			runtime.ContainerConfig{TTY: true, Env: []string{"X=pod", "TERM=dumb"}}, false,
			[]string{path, "TERM=dumb", "HOSTNAME=pod", "X=pod"}},
		{"names that are not shell identifiers pass", nil, runtime.ContainerConfig{Env: []string{"data-1=value-1", "EMPTY="}}, false,
			[]string{path, "HOSTNAME=pod", "data-1=value-1", "EMPTY="}},
		{"the pod may set HOSTNAME", nil, runtime.ContainerConfig{Env: []string{"HOSTNAME=mine"}}, false,
			[]string{path, "HOSTNAME=mine"}},
		{"the host's network has the node's name", nil, runtime.ContainerConfig{}, true,
			[]string{path, "HOSTNAME=node1"}},
	} {
		in := base()
		in.Image.Env = tc.imageEnv
		in.Pod.Config.HostNetwork = tc.hostNet
		tc.cfg.Name, tc.cfg.Command = "app", []string{"/bin/app"}
		in.Container = tc.cfg
		if got := build(t, in).Process.Env; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestProcessFlags(t *testing.T) {
	in := base()
	in.Container.TTY = true
	in.Container.Security.NoNewPrivs = true
	in.Container.Security.AppArmorProfile = "unconfined"
	p := build(t, in).Process
	if !p.Terminal || !p.NoNewPrivileges || p.ApparmorProfile != "unconfined" {
		t.Errorf("terminal %v, no_new_privs %v, apparmor %q; want true, true, unconfined", p.Terminal, p.NoNewPrivileges, p.ApparmorProfile)
	}
	p = build(t, base()).Process
	if p.Terminal || p.NoNewPrivileges || p.ApparmorProfile != "" {
		t.Errorf("defaults: terminal %v, no_new_privs %v, apparmor %q; want none", p.Terminal, p.NoNewPrivileges, p.ApparmorProfile)
	}
}

// TestSELinuxLabels: the labels the backend allotted are the process's and
// the mounts'; options that came without one are refused, not dropped.
func TestSELinuxLabels(t *testing.T) {
	in := base()
	in.Container.Security.SELinuxOptions = []string{"type:spc_t"}
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "SELinux") {
		t.Errorf("SELinux options without a label: %v; want an error", err)
	}
	in.ProcessLabel, in.MountLabel = "system_u:system_r:spc_t:s0:c1,c2", "system_u:object_r:container_file_t:s0:c1,c2"
	s, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.Process.SelinuxLabel != in.ProcessLabel || s.Linux.MountLabel != in.MountLabel {
		t.Errorf("labels %q, %q; want %q, %q", s.Process.SelinuxLabel, s.Linux.MountLabel, in.ProcessLabel, in.MountLabel)
	}
}

func TestSpecBasics(t *testing.T) {
	in := base()
	in.Container.Labels = map[string]string{"io.runlet.pod.uid": "u1"}
	in.Container.Security.ReadOnlyRootfs = true
	s := build(t, in)
	if s.Version == "" || s.Root.Path != in.Rootfs || !s.Root.Readonly || s.Hostname != "pod" {
		t.Errorf("version %q, root %+v, hostname %q", s.Version, s.Root, s.Hostname)
	}
	if s.Annotations["io.runlet.pod.uid"] != "u1" {
		t.Errorf("annotations %v; want the container's labels (runc keeps them in its state)", s.Annotations)
	}
	if s.Linux.CgroupsPath != "/runlet/podu1/ctr1" {
		t.Errorf("cgroupsPath %q; want the container below the pod's cgroup", s.Linux.CgroupsPath)
	}
}

func TestInputRequired(t *testing.T) {
	for name, change := range map[string]func(*Input){"ID": func(in *Input) { in.ID = "" }, "rootfs": func(in *Input) { in.Rootfs = "" }} {
		in := base()
		change(&in)
		if _, err := Build(in); err == nil {
			t.Errorf("no %s: a spec", name)
		}
	}
}
