// Package logind talks to systemd-logind (or elogind) over the system bus,
// as the kubelet's nodeshutdown/systemd: a delay inhibitor lock holds the
// host's shutdown back while runlet stops the pods, PrepareForShutdown says
// when it begins, and InhibitDelayMaxSec bounds how long logind waits.
//
// After k8s.io/kubernetes v1.37.2 pkg/kubelet/nodeshutdown/systemd.
package logind

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	service   = "org.freedesktop.login1"
	object    = dbus.ObjectPath("/org/freedesktop/login1")
	iface     = "org.freedesktop.login1.Manager"
	prepare   = "PrepareForShutdown"
	who       = "runlet"
	why       = "runlet needs time to stop the node's pods"
	delayMode = "delay"
)

// ConfDir and ConfName are logind's drop-in that raises InhibitDelayMaxSec.
// It sorts before the kubelet's 99-kubelet.conf, so that beside a kubelet
// the kubelet's own override keeps the last word.
var (
	ConfDir  = "/etc/systemd/logind.conf.d"
	ConfName = "98-runlet.conf"
)

// Conn is a connection to logind on the system bus.
type Conn struct {
	bus *dbus.Conn
}

// Connect connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else the
// standard socket).
func Connect() (*Conn, error) {
	bus, err := dbus.ConnectSystemBus()
	if err != nil {
		return nil, err
	}
	return &Conn{bus: bus}, nil
}

// Close closes the connection; an inhibitor lock taken stays held until
// its own Close.
func (c *Conn) Close() error { return c.bus.Close() }

// InhibitDelayMax is how long logind waits for delay locks
// (InhibitDelayMaxUSec). It fails where logind is not on the bus.
func (c *Conn) InhibitDelayMax() (time.Duration, error) {
	v, err := c.bus.Object(service, object).GetProperty(iface + ".InhibitDelayMaxUSec")
	if err != nil {
		return 0, fmt.Errorf("reading logind's InhibitDelayMaxUSec: %w", err)
	}
	usec, ok := v.Value().(uint64)
	if !ok {
		return 0, fmt.Errorf("logind's InhibitDelayMaxUSec is a %T, not a uint64", v.Value())
	}
	return time.Duration(usec) * time.Microsecond, nil
}

// Inhibit takes a delay lock on shutdown: logind waits until it is
// closed, or InhibitDelayMax has passed, before the host goes down.
func (c *Conn) Inhibit() (io.Closer, error) {
	call := c.bus.Object(service, object).Call(iface+".Inhibit", 0, "shutdown", who, why, delayMode)
	if call.Err != nil {
		return nil, fmt.Errorf("taking logind's shutdown inhibitor lock: %w", call.Err)
	}
	var fd dbus.UnixFD
	if err := call.Store(&fd); err != nil {
		return nil, fmt.Errorf("logind's inhibitor lock: %w", err)
	}
	return os.NewFile(uintptr(fd), "logind-inhibitor"), nil
}

// PrepareForShutdown delivers logind's signal: true when a shutdown
// begins, false when one is called off. The channel closes with the
// connection.
func (c *Conn) PrepareForShutdown() (<-chan bool, error) {
	err := c.bus.AddMatchSignal(dbus.WithMatchInterface(iface), dbus.WithMatchMember(prepare), dbus.WithMatchObjectPath(object))
	if err != nil {
		return nil, fmt.Errorf("watching logind's %s: %w", prepare, err)
	}
	signals := make(chan *dbus.Signal, 1)
	c.bus.Signal(signals)
	out := make(chan bool, 1)
	go func() {
		defer close(out)
		for s := range signals {
			if s.Name != iface+"."+prepare || len(s.Body) == 0 {
				continue
			}
			if active, ok := s.Body[0].(bool); ok {
				out <- active
			}
		}
	}()
	return out, nil
}

// OverrideInhibitDelay raises InhibitDelayMaxSec to d with a drop-in, and
// has logind read it (SIGHUP through systemd, as the kubelet does).
func (c *Conn) OverrideInhibitDelay(d time.Duration) error {
	if err := os.MkdirAll(ConfDir, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf("# runlet's graceful node shutdown\n[Login]\nInhibitDelayMaxSec=%.0f\n", d.Seconds())
	if err := os.WriteFile(filepath.Join(ConfDir, ConfName), []byte(conf), 0o644); err != nil {
		return err
	}
	call := c.bus.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1").
		Call("org.freedesktop.systemd1.Manager.KillUnit", 0, "systemd-logind.service", "all", int32(1))
	if call.Err != nil {
		return fmt.Errorf("reloading logind's configuration: %w", call.Err)
	}
	return nil
}
