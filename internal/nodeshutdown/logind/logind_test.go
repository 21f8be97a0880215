package logind

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
	"github.com/runlet/runlet/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

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

// privateBus starts a dbus-daemon of its own and points
// $DBUS_SYSTEM_BUS_ADDRESS at it.
func privateBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(busConfig, filepath.Join(dir, "bus"))), 0o644); err != nil {
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
	addr = strings.TrimSpace(addr)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	return addr
}

// fakeLogind is logind and systemd on the private bus: it hands out the
// write end of a pipe as the inhibitor lock, as logind hands out a FIFO's,
// and reloading reads the drop-in runlet wrote.
type fakeLogind struct {
	conn  *dbus.Conn
	props *prop.Properties

	mu         sync.Mutex
	lockReader *os.File
	lockWriter *os.File
	inhibit    []string
	killUnit   []string
}

func startLogind(t *testing.T, addr string) *fakeLogind {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeLogind{conn: conn}
	for _, name := range []string{service, "org.freedesktop.systemd1"} {
		if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
			t.Fatalf("own %s: %v %v", name, reply, err)
		}
	}
	if err := conn.Export(loginManager{f}, object, iface); err != nil {
		t.Fatal(err)
	}
	if err := conn.Export(systemdManager{f}, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager"); err != nil {
		t.Fatal(err)
	}
	f.props, err = prop.Export(conn, object, prop.Map{iface: {"InhibitDelayMaxUSec": {Value: uint64(5 * time.Second / time.Microsecond)}}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type loginManager struct{ f *fakeLogind }

func (m loginManager) Inhibit(what, who, why, mode string) (dbus.UnixFD, *dbus.Error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, dbus.MakeFailedError(err)
	}
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.inhibit = append(m.f.inhibit, strings.Join([]string{what, who, mode}, " "))
	m.f.lockReader, m.f.lockWriter = r, w
	return dbus.UnixFD(w.Fd()), nil
}

type systemdManager struct{ f *fakeLogind }

func (m systemdManager) KillUnit(unit, who string, signal int32) *dbus.Error {
	m.f.mu.Lock()
	m.f.killUnit = append(m.f.killUnit, fmt.Sprintf("%s %s %d", unit, who, signal))
	m.f.mu.Unlock()
	data, err := os.ReadFile(filepath.Join(ConfDir, ConfName))
	if err != nil {
		return dbus.MakeFailedError(err)
	}
	_, value, _ := strings.Cut(strings.TrimSpace(string(data)), "InhibitDelayMaxSec=")
	sec, err := strconv.Atoi(value)
	if err != nil {
		return dbus.MakeFailedError(err)
	}
	m.f.props.SetMust(iface, "InhibitDelayMaxUSec", uint64(time.Duration(sec)*time.Second/time.Microsecond))
	return nil
}

// calls are the Inhibit and KillUnit calls so far.
func (f *fakeLogind) calls() (inhibit, killUnit []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inhibit...), append([]string(nil), f.killUnit...)
}

// released reports the lock's pipe without a writer left.
func (f *fakeLogind) released(t *testing.T) bool {
	t.Helper()
	f.mu.Lock()
	r := f.lockReader
	f.mu.Unlock()
	fd := int(r.Fd()) // each Fd() call makes the file blocking again
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	n, err := syscall.Read(fd, make([]byte, 1))
	if errors.Is(err, syscall.EAGAIN) {
		return false
	}
	if err != nil || n != 0 {
		t.Fatalf("read of the lock's pipe: %d, %v", n, err)
	}
	return true
}

// TestLogindOverTheSystemBus runs runlet's side against a private bus: the
// delay read and raised, the lock passed as a file descriptor and released
// by Close, and PrepareForShutdown delivered both ways.
func TestLogindOverTheSystemBus(t *testing.T) {
	addr := privateBus(t)
	fake := startLogind(t, addr)
	ConfDir = t.TempDir()

	c, err := Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d, err := c.InhibitDelayMax(); err != nil || d != 5*time.Second {
		t.Fatalf("InhibitDelayMax = %v, %v; want 5s", d, err)
	}
	if err := c.OverrideInhibitDelay(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d, err := c.InhibitDelayMax(); err != nil || d != 30*time.Second {
		t.Errorf("after the override InhibitDelayMax = %v, %v; want 30s", d, err)
	}
	if _, kills := fake.calls(); len(kills) != 1 || kills[0] != "systemd-logind.service all 1" {
		t.Errorf("KillUnit calls %q; want SIGHUP to systemd-logind.service", kills)
	}

	lock, err := c.Inhibit()
	if err != nil {
		t.Fatal(err)
	}
	if inhibits, _ := fake.calls(); len(inhibits) != 1 || inhibits[0] != "shutdown runlet delay" {
		t.Errorf("Inhibit calls %q; want a delay lock on shutdown by runlet", inhibits)
	}
	fake.mu.Lock()
	fake.lockWriter.Close() // logind keeps only the read end
	fake.mu.Unlock()
	if fake.released(t) {
		t.Fatal("lock released before Close")
	}
	lock.Close()
	if !fake.released(t) {
		t.Error("lock still held after Close")
	}

	events, err := c.PrepareForShutdown()
	if err != nil {
		t.Fatal(err)
	}
	for _, active := range []bool{true, false} {
		if err := fake.conn.Emit(object, iface+"."+prepare, active); err != nil {
			t.Fatal(err)
		}
		if got := <-events; got != active {
			t.Errorf("PrepareForShutdown(%v) delivered as %v", active, got)
		}
	}
}

func TestConnectWithoutABusFails(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	if c, err := Connect(); err == nil {
		c.Close()
		t.Error("Connect succeeded without a bus")
	}
}
