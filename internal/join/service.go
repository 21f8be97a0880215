package join

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Service installs runlet as the box's service, so that it starts at boot:
// a systemd unit where systemd runs the box, else an LSB init script.
type Service struct {
	// UnitPath is the systemd unit to write (/etc/systemd/system/runlet.service).
	UnitPath string
	// InitPath is the init script to write where there is no systemd
	// (/etc/init.d/runlet).
	InitPath string
	// SystemdDir exists when systemd is the box's init (/run/systemd/system).
	SystemdDir string
	// PidFile and LogFile are the init script's (/run/runlet.pid, /var/log/runlet.log).
	PidFile, LogFile string
	// Command runs systemctl, update-rc.d and the init script, and LookPath
	// finds update-rc.d; nil runs and finds them for real.
	Command  func(name string, args ...string) error
	LookPath func(file string) (string, error)
}

// DefaultService is the service at its usual places.
func DefaultService() Service {
	return Service{
		UnitPath:   "/etc/systemd/system/runlet.service",
		InitPath:   "/etc/init.d/runlet",
		SystemdDir: "/run/systemd/system",
		PidFile:    "/run/runlet.pid",
		LogFile:    "/var/log/runlet.log",
	}
}

// Install writes the unit (or init script) that runs argv, then enables and
// starts it. out gets what was done and, without systemd, the command line
// that runs runlet by hand.
func (s Service) Install(argv []string, out io.Writer) error {
	if dirExists(s.SystemdDir) {
		return s.installUnit(argv, out)
	}
	return s.installInit(argv, out)
}

func (s Service) installUnit(argv []string, out io.Writer) error {
	if err := WriteFiles([]File{{Path: s.UnitPath, Data: []byte(RenderUnit(argv)), Mode: 0o644}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", s.UnitPath)
	name := filepath.Base(s.UnitPath)
	if err := s.run("systemctl", "daemon-reload"); err != nil {
		return err
	}
	if err := s.run("systemctl", "enable", "--now", name); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is enabled and started: systemctl status %s, journalctl -u %s\n", name, name, name)
	return nil
}

func (s Service) installInit(argv []string, out io.Writer) error {
	script := RenderInitScript(argv, s.InitPath, s.PidFile, s.LogFile)
	if err := WriteFiles([]File{{Path: s.InitPath, Data: []byte(script), Mode: 0o755}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "no systemd here (%s is missing): wrote the init script %s\n", s.SystemdDir, s.InitPath)
	name := filepath.Base(s.InitPath)
	lookPath := s.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if _, err := lookPath("update-rc.d"); err == nil {
		if err := s.run("update-rc.d", name, "defaults"); err != nil {
			return err
		}
		fmt.Fprintf(out, "enabled at boot (update-rc.d %s defaults)\n", name)
	} else {
		fmt.Fprintf(out, "no update-rc.d: link %s into your runlevels to start runlet at boot\n", s.InitPath)
	}
	if err := s.run(s.InitPath, "start"); err != nil {
		return err
	}
	fmt.Fprintf(out, "started: %s status; logs in %s\nto run runlet by hand instead:\n  %s\n", s.InitPath, s.LogFile, ShellQuote(argv))
	return nil
}

func (s Service) run(name string, args ...string) error {
	if s.Command != nil {
		return s.Command(name, args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// RenderUnit is runlet's systemd unit, on the model of kubeadm's
// kubelet.service.
func RenderUnit(argv []string) string {
	return `# written by runlet join
[Unit]
Description=runlet: a Kubernetes node (virtual-kubelet) running pods on podman or runc
Documentation=https://github.com/runlet/runlet
Wants=network-online.target
After=network-online.target
StartLimitIntervalSec=0

[Service]
ExecStart=` + systemdQuote(argv) + `
Restart=always
RestartSec=10
# Only runlet itself is stopped: the pods' conmons and containers run on
# through a restart of runlet, which adopts them again.
KillMode=process

[Install]
WantedBy=multi-user.target
`
}

// RenderInitScript is runlet's LSB init script for boxes without systemd.
// It runs itself as `run` in the background, which execs runlet with its
// output appended to logFile, so that the pid in pidFile is runlet's; stop
// signals that pid only, as KillMode=process.
func RenderInitScript(argv []string, self, pidFile, logFile string) string {
	name := filepath.Base(self)
	return `#!/bin/sh
# written by runlet join
### BEGIN INIT INFO
# Provides:          ` + name + `
# Required-Start:    $network $remote_fs $syslog
# Required-Stop:     $network $remote_fs $syslog
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: runlet, a Kubernetes node
# Description:       runlet (virtual-kubelet) runs the pods scheduled to its node on podman or runc.
### END INIT INFO

SELF=` + shQuote(self) + `
PIDFILE=` + shQuote(pidFile) + `
LOGFILE=` + shQuote(logFile) + `

running() {
	[ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

case "$1" in
run)
	exec ` + ShellQuote(argv) + ` >>"$LOGFILE" 2>&1
	;;
start)
	if running; then echo "` + name + ` is running (pid $(cat "$PIDFILE"))"; exit 0; fi
	echo "starting ` + name + `"
	if command -v start-stop-daemon >/dev/null 2>&1; then
		start-stop-daemon --start --background --make-pidfile --pidfile "$PIDFILE" --startas "$SELF" -- run
	else
		nohup "$SELF" run </dev/null >/dev/null 2>&1 &
		echo $! >"$PIDFILE"
	fi
	;;
stop)
	if ! running; then echo "` + name + ` is not running"; rm -f "$PIDFILE"; exit 0; fi
	echo "stopping ` + name + ` (its pods keep running)"
	if command -v start-stop-daemon >/dev/null 2>&1; then
		start-stop-daemon --stop --pidfile "$PIDFILE" --retry TERM/30/KILL/5
	else
		pid=$(cat "$PIDFILE")
		kill "$pid"
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do sleep 1; i=$((i+1)); done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$PIDFILE"
	;;
restart|force-reload)
	"$SELF" stop
	"$SELF" start
	;;
status)
	if running; then echo "` + name + ` is running (pid $(cat "$PIDFILE"))"; exit 0; fi
	echo "` + name + ` is not running"; exit 3
	;;
*)
	echo "usage: $SELF {start|stop|restart|status}" >&2
	exit 2
	;;
esac
`
}

// ShellQuote joins argv for a POSIX shell, quoting what needs it.
func ShellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shQuote(a)
	}
	return strings.Join(q, " ")
}

func shQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// systemdQuote joins argv for ExecStart=: words with blanks, quotes or
// backslashes are double-quoted with C escapes, and % and $ are doubled so
// that systemd expands neither specifiers nor variables.
func systemdQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		a = strings.ReplaceAll(a, "%", "%%")
		a = strings.ReplaceAll(a, "$", "$$")
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\;") {
			a = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(a) + `"`
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
