package join

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
)

var serviceArgv = []string{"/usr/local/bin/runlet", "--bootstrap-kubeconfig", "/etc/runlet/bootstrap-kubeconfig",
	"--nodename", "node-a", "--node-labels", "team=a b", "--eviction-hard", "memory.available<5%"}

func TestRenderUnit(t *testing.T) {
	unit := RenderUnit(serviceArgv)
	for _, line := range []string{
		`ExecStart=/usr/local/bin/runlet --bootstrap-kubeconfig /etc/runlet/bootstrap-kubeconfig --nodename node-a --node-labels "team=a b" --eviction-hard memory.available<5%%`,
		"Restart=always",
		"KillMode=process",
		"After=network-online.target",
		"Wants=network-online.target",
		"WantedBy=multi-user.target",
	} {
		if !containsLine(unit, line) {
			t.Errorf("unit has no line %q:\n%s", line, unit)
		}
	}
}

func TestRenderInitScript(t *testing.T) {
	script := RenderInitScript(serviceArgv, "/etc/init.d/runlet", "/run/runlet.pid", "/var/log/runlet.log")
	for _, line := range []string{
		"### BEGIN INIT INFO",
		"# Provides:          runlet",
		"### END INIT INFO",
		`	exec /usr/local/bin/runlet --bootstrap-kubeconfig /etc/runlet/bootstrap-kubeconfig --nodename node-a --node-labels 'team=a b' --eviction-hard 'memory.available<5%' >>"$LOGFILE" 2>&1`,
		"SELF=/etc/init.d/runlet",
		"PIDFILE=/run/runlet.pid",
	} {
		if !containsLine(script, line) {
			t.Errorf("init script has no line %q:\n%s", line, script)
		}
	}
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh -n: %v: %s", err, out)
	}
}

// The init script runs, reports and stops what it starts, by its pidfile,
// with start-stop-daemon where there is one and without.
func TestInitScriptStartStatusStop(t *testing.T) {
	for _, ssd := range []bool{true, false} {
		name := "without start-stop-daemon"
		if ssd {
			name = "with start-stop-daemon"
		}
		t.Run(name, func(t *testing.T) {
			env := os.Environ()
			if ssd {
				if _, err := exec.LookPath("start-stop-daemon"); err != nil {
					t.Skip("no start-stop-daemon")
				}
			} else {
				env = append(env, "PATH="+pathWithout(t, "start-stop-daemon"))
			}
			dir := t.TempDir()
			self, pid, log := filepath.Join(dir, "runlet"), filepath.Join(dir, "runlet.pid"), filepath.Join(dir, "runlet.log")
			script := RenderInitScript([]string{"/bin/sh", "-c", "echo up; exec sleep 60"}, self, pid, log)
			if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(action string) (string, error) {
				cmd := exec.Command(self, action)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := run("start"); err != nil {
				t.Fatalf("start: %v: %s", err, out)
			}
			t.Cleanup(func() { _, _ = run("stop") })
			polltest.Eventually(t, 10*time.Second, "the log to say up", func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "up") })
			if out, err := run("status"); err != nil || !strings.Contains(out, "is running") {
				t.Fatalf("status after start: %v: %s", err, out)
			}
			if out, err := run("stop"); err != nil {
				t.Fatalf("stop: %v: %s", err, out)
			}
			out, err := run("status")
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(out, "not running") {
				t.Fatalf("status after stop: %v: %s", err, out)
			}
		})
	}
}

func TestInstallSystemd(t *testing.T) {
	dir := t.TempDir()
	var ran [][]string
	s := Service{
		UnitPath:   filepath.Join(dir, "etc", "runlet.service"),
		InitPath:   filepath.Join(dir, "init.d", "runlet"),
		SystemdDir: dir, // exists: systemd runs this box
		Command: func(name string, args ...string) error {
			ran = append(ran, append([]string{name}, args...))
			return nil
		},
	}
	if err := s.Install(serviceArgv, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(s.UnitPath); err != nil || string(b) != RenderUnit(serviceArgv) {
		t.Fatalf("unit: %v\n%s", err, b)
	}
	if _, err := os.Stat(s.InitPath); err == nil {
		t.Error("an init script was written beside the unit")
	}
	want := [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "enable", "--now", "runlet.service"}}
	if !reflect.DeepEqual(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
}

func TestInstallInit(t *testing.T) {
	dir := t.TempDir()
	var ran [][]string
	s := Service{
		UnitPath:   filepath.Join(dir, "runlet.service"),
		InitPath:   filepath.Join(dir, "init.d", "runlet"),
		SystemdDir: filepath.Join(dir, "no-systemd"),
		PidFile:    "/run/runlet.pid",
		LogFile:    "/var/log/runlet.log",
		Command: func(name string, args ...string) error {
			ran = append(ran, append([]string{name}, args...))
			return nil
		},
		LookPath: func(string) (string, error) { return "/usr/sbin/update-rc.d", nil },
	}
	var out bytes.Buffer
	if err := s.Install(serviceArgv, &out); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.InitPath)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("init script: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(s.InitPath); string(b) != RenderInitScript(serviceArgv, s.InitPath, s.PidFile, s.LogFile) {
		t.Errorf("init script:\n%s", b)
	}
	if _, err := os.Stat(s.UnitPath); err == nil {
		t.Error("a unit was written without systemd")
	}
	want := [][]string{{"update-rc.d", "runlet", "defaults"}, {s.InitPath, "start"}}
	if !reflect.DeepEqual(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
	if !strings.Contains(out.String(), "\n  "+ShellQuote(serviceArgv)+"\n") {
		t.Errorf("the command line to run runlet by hand is not printed:\n%s", out.String())
	}
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// pathWithout is a PATH of the directories of PATH's programs but file, for
// a script that must not find file.
func pathWithout(t *testing.T, file string) string {
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Name() == file {
				continue
			}
			_ = os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name())) // first in PATH wins
		}
	}
	return dir
}
