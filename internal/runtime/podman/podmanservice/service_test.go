package podmanservice

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/leaktest"
)

// fakeEnv makes the test binary play podman (see fakePodman), so that
// starting and stopping a service is tested without podman or root.
const fakeEnv = "PODMANSERVICE_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fakePodman(mode, os.Args[1:])
		return
	}
	leaktest.Main(m)
}

// fakePodman answers `--version` as podman 4.3 and serves /_ping for
// `system service --time=0 unix://…`; mode "exit" fails at start-up and
// "ignore-term" ignores SIGTERM.
func fakePodman(mode string, args []string) {
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("podman version 4.3.1")
		return
	}
	fmt.Printf("args %v env %s\n", args, os.Getenv("CONTAINERS_CONF"))
	if mode == "exit" {
		fmt.Println("Error: no storage")
		os.Exit(125)
	}
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	l, err := net.Listen("unix", strings.TrimPrefix(args[len(args)-1], "unix://"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
	}))
}

func fakeOptions(t *testing.T, mode string) Options {
	t.Setenv(fakeEnv, mode)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return Options{Podman: self, Listen: "unix://" + filepath.Join(dir, "podman.sock"), LogPath: filepath.Join(dir, "service.log"),
		ReadyTimeout: 10 * time.Second}
}

func start(t *testing.T, o Options) *Service {
	t.Helper()
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Kill() })
	return s
}

func TestStartStop(t *testing.T) {
	o := fakeOptions(t, "serve")
	o.ContainersConf = filepath.Join(t.TempDir(), "containers.conf")
	s := start(t, o)
	if s.PID() <= 0 || Ping(context.Background(), s.URL()) != nil {
		t.Fatalf("started: pid %d, ping %v", s.PID(), Ping(context.Background(), s.URL()))
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	again := start(t, o) // over the socket file the first one left
	if again.PID() == s.PID() {
		t.Error("the second service has the first one's PID")
	}
	log := again.LogTail()
	if n := strings.Count(log, "=== "); n != 2 {
		t.Errorf("log has %d start headers; want 2 (appended):\n%s", n, log)
	}
	if !strings.Contains(log, "--time=0 "+o.Listen) || !strings.Contains(log, "env "+o.ContainersConf) {
		t.Errorf("log lacks the flags or CONTAINERS_CONF (podman 4.3 has no _OVERRIDE):\n%s", log)
	}
}

func TestStartFailsWithTheLog(t *testing.T) {
	_, err := Start(context.Background(), fakeOptions(t, "exit"))
	if err == nil || !strings.Contains(err.Error(), "exited at start-up") || !strings.Contains(err.Error(), "no storage") {
		t.Errorf("err = %v; want the exit and podman's reason", err)
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	o := fakeOptions(t, "ignore-term")
	o.StopGrace = 200 * time.Millisecond
	s := start(t, o)
	if err := s.Stop(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop = %v; want it to say SIGKILL was needed", err)
	}
	<-s.Done()
}

func TestKill(t *testing.T) {
	s := start(t, fakeOptions(t, "serve"))
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if Ping(context.Background(), s.URL()) == nil {
		t.Error("a killed service still answers")
	}
	if s.Stop() != nil || s.Kill() != nil {
		t.Error("stopping a service that is gone must be a no-op")
	}
}

func TestPingWantsPodman(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "other.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { _ = http.Serve(l, http.NotFoundHandler()) }()
	if err := Ping(context.Background(), sock); err == nil {
		t.Error("a socket that is not podman's answered the ping")
	}
}
