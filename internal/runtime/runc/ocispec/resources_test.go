package ocispec

import "testing"

func TestDeviceRules(t *testing.T) {
	in := base()
	in.Host.Devices, _ = devicesIn("/dev")
	s := build(t, in)
	if got := jsonOf(t, s.Linux.Resources.Devices); got != `[{"allow":false,"access":"rwm"}]` {
		t.Errorf("devices %s; want all denied (runc adds its defaults)", got)
	}
	if s.Linux.Devices != nil {
		t.Errorf("an unprivileged container got the host's devices: %v", s.Linux.Devices)
	}
	in.Container.Security.Privileged = true
	s = build(t, in)
	if got := jsonOf(t, s.Linux.Resources.Devices); got != `[{"allow":true,"access":"rwm"}]` {
		t.Errorf("privileged devices %s; want all allowed", got)
	}
	if len(s.Linux.Devices) != len(in.Host.Devices) {
		t.Errorf("privileged: %d devices; want the host's %d", len(s.Linux.Devices), len(in.Host.Devices))
	}
}
