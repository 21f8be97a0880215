// Package logindtest is logind on a private system bus, for tests of
// runlet's side of it: a dbus-daemon of the test's own, and a fake logind
// (and the systemd that reloads it) that hands out inhibitor locks and
// sends PrepareForShutdown.
package logindtest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

const (
	service = "org.freedesktop.login1"
	object  = dbus.ObjectPath("/org/freedesktop/login1")
	iface   = "org.freedesktop.login1.Manager"
)

// busConfig is a private bus that lets anyone own any name and pass fds.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/><allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/><allow receive_type="error"/>
  </policy>
</busconfig>
`

// StartBus starts a dbus-daemon until the test ends and returns its
// address, for $DBUS_SYSTEM_BUS_ADDRESS. The test is skipped where
// dbus-daemon is not installed.
func StartBus(t testing.TB) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, filepath.Join(dir, "bus")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon's address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// Logind is logind and systemd on the bus. It hands out the write end of
// a pipe as the inhibitor lock, as logind hands out a FIFO's, and keeps
// the read end: the lock is released when no writer is left. Reloading
// logind reads InhibitDelayMaxSec from the drop-in in confFile.
type Logind struct {
	conn     *dbus.Conn
	props    *prop.Properties
	confFile string

	mu       sync.Mutex
	reader   *os.File
	writer   *os.File // the fake's own copy, until Handed
	inhibits []string
	kills    []string
}

// Start runs the fake on the bus at addr until the test ends, with
// InhibitDelayMaxSec delay; confFile is the drop-in a reload reads.
func Start(t testing.TB, addr string, delay time.Duration, confFile string) *Logind {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	l := &Logind{conn: conn, confFile: confFile}
	for _, name := range []string{service, "org.freedesktop.systemd1"} {
		if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
			t.Fatalf("own %s: %v %v", name, reply, err)
		}
	}
	if err := conn.Export(loginManager{l}, object, iface); err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(systemdManager{l}, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"); err != nil {
		t.Fatal(err)
	}
	l.props, err = prop.Export(conn, object, prop.Map{iface: {"InhibitDelayMaxUSec": {Value: uint64(delay / time.Microsecond)}}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type loginManager struct{ l *Logind }

// Inhibit is logind's method: the lock is a file descriptor.
func (m loginManager) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, dbus.MakeFailedError(err)
	}
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	m.l.inhibits = append(m.l.inhibits, strings.Join([]string{what, who, mode}, " "))
	m.l.reader, m.l.writer = r, w
	return dbus.UnixFD(w.Fd()), nil
}

type systemdManager struct{ l *Logind }

// KillUnit is systemd's method; SIGHUP makes the fake logind reload.
func (m systemdManager) KillUnit(unit, who string, signal int32) *dbus.Error {
	m.l.mu.Lock()
	m.l.kills = append(m.l.kills, fmt.Sprintf("%s %s %d", unit, who, signal))
	m.l.mu.Unlock()
	data, err := os.ReadFile(m.l.confFile)
	if err != nil {
		return dbus.MakeFailedError(err)
	}
	_, value, _ := strings.Cut(strings.TrimSpace(string(data)), "InhibitDelayMaxSec=")
	sec, err := strconv.Atoi(value)
	if err != nil {
		return dbus.MakeFailedError(err)
	}
	m.l.props.SetMust(iface, "InhibitDelayMaxUSec", uint64(time.Duration(sec)*time.Second/time.Microsecond))
	return nil
}

// Calls are the Inhibit ("what who mode") and KillUnit ("unit who
// signal") calls so far.
func (l *Logind) Calls() (inhibits, kills []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.inhibits...), append([]string(nil), l.kills...)
}

// Handed drops the fake's own copy of the last lock, once the client is
// known to hold it (its Inhibit call returned): from then on Held tells
// whether the client still does.
func (l *Logind) Handed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writer != nil {
		l.writer.Close()
		l.writer = nil
	}
}

// Held reports the last lock still held: its pipe has a writer left.
func (l *Logind) Held() (bool, error) {
	l.mu.Lock()
	r := l.reader
	l.mu.Unlock()
	if r == nil {
		return false, errors.New("no lock was taken")
	}
	fd := int(r.Fd()) // each Fd() call makes the file blocking again
	if err := syscall.SetNonblock(fd, true); err != nil {
		return false, err
	}
	n, err := syscall.Read(fd, make([]byte, 1))
	if errors.Is(err, syscall.EAGAIN) {
		return true, nil
	}
	if err != nil || n != 0 {
		return false, fmt.Errorf("read of the lock's pipe: %d, %v", n, err)
	}
	return false, nil
}

// PrepareForShutdown sends logind's signal: true, the host shuts down;
// false, the shutdown is called off.
func (l *Logind) PrepareForShutdown(active bool) error {
	return l.conn.Emit(object, iface+".PrepareForShutdown", active)
}
