package framework

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/childproc"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a container registry (distribution's, built by hack/registry-build.sh into the
// cache) serving plain HTTP on 127.0.0.1 with htpasswd auth, owned by one test and stopped by PID
// at its end.
type Registry struct {
	Host     string // 127.0.0.1:<port>
	User     string
	Password string
	Dir      string
	LogPath  string

	cmd  *exec.Cmd
	done <-chan struct{}
}

var (
	registryOnce sync.Once
	registryBin  string
	registryErr  error
)

// RegistryBinary returns the registry binary, building it once per test binary (cached on disk).
func RegistryBinary(t testing.TB) string {
	t.Helper()
	c := Get(t)
	registryOnce.Do(func() {
		out, err := runScript(c.RepoRoot, nil, os.Stderr, "hack/registry-build.sh")
		if err != nil {
			registryErr = fmt.Errorf("hack/registry-build.sh: %v", err)
			return
		}
		registryBin = lastLine(out)
	})
	if registryErr != nil {
		t.Fatal(registryErr)
	}
	return registryBin
}

// StartRegistry starts a registry with one user (random password) on a free port of 127.0.0.1
// and waits until it answers.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	bin := RegistryBinary(t)
	dir := t.TempDir()
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	r := &Registry{
		Host: fmt.Sprintf("127.0.0.1:%d", FreePort(t)), User: "runlet-e2e", Password: hex.EncodeToString(pw),
		Dir: dir, LogPath: filepath.Join(dir, "registry.log"),
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yml")
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: %s\n"+
		"http:\n  addr: %s\nauth:\n  htpasswd:\n    realm: runlet-e2e\n    path: %s\n", filepath.Join(dir, "data"), r.Host, htpasswd)
	if err := os.WriteFile(config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "serve", config)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	exited, err := childproc.Start(r.cmd, syscall.SIGTERM)
	logf.Close()
	if err != nil {
		t.Fatalf("start registry: %v", err)
	}
	r.done = exited
	t.Cleanup(r.stop)
	err = poll(30*time.Second, func() (bool, error) {
		select {
		case <-r.done:
			return false, fmt.Errorf("registry exited: %v\n%s", r.cmd.ProcessState, tail(r.LogPath, 20))
		default:
		}
		resp, err := http.Get("http://" + r.Host + "/v2/")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized, nil
	}, true)
	if err != nil {
		t.Fatalf("registry on %s: %v", r.Host, err)
	}
	return r
}

// stop ends the registry by its PID: SIGTERM, then SIGKILL after 10 s.
func (r *Registry) stop() {
	SignalAndWait(r.cmd.Process, syscall.SIGTERM, r.done, 10*time.Second)
}

// Push copies a local image into the registry as repo:tag (with the registry's credentials) and
// returns the reference to pull. The pulled copy is removed from podman's storage at cleanup.
func (r *Registry) Push(t testing.TB, local, repoTag string) string {
	t.Helper()
	ref := r.Host + "/" + repoTag
	if out, err := PodmanCLIE("push", "--tls-verify=false", "--creds", r.User+":"+r.Password, local, "docker://"+ref); err != nil {
		t.Fatalf("podman push %s: %v\n%s", ref, err, out)
	}
	t.Cleanup(func() { _, _ = PodmanCLIE("rmi", ref) })
	return ref
}
