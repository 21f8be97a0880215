package podman

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// answerInfo makes the fake look like a podman 4.3 on a cgroup v1 host
// whose default OCI runtime is crun, with exec answering like podman.
func answerInfo(f *fakePodman) {
	f.handle("GET /_ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		_, _ = w.Write([]byte("OK"))
	})
	f.handle("GET /info", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"host":{"arch":"amd64","os":"linux","cgroupVersion":"v1","ociRuntime":{"name":"crun"},"cpus":48,"memTotal":68719476736},"version":{"Version":"4.3.1"}}`)
	})
	f.json("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.handle("GET /exec/e1/json", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"ID": "e1", "ExitCode": 3})
	})
}

// execThrough runs an exec with stdin through b: the half-close that ends
// stdin must cross the transport.
func execThrough(t *testing.T, f *fakePodman, b *Backend) {
	t.Helper()
	f.handle("POST /exec/e1/start", hijackHandler(t, nil))
	var out, errb bytes.Buffer
	code, err := b.Exec(context.Background(), "c1", []string{"cat"},
		runtime.StreamIO{Stdin: strings.NewReader("abc"), Stdout: &out, Stderr: &errb})
	if err != nil || code != 3 || out.String() != "got:abc" || errb.String() != "eof seen\n" {
		t.Errorf("exec = %d, %v, stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
}

func TestTCPEndpoint(t *testing.T) {
	f := newFakePodman(t)
	answerInfo(f)
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	b, err := New(context.Background(), Options{Socket: "tcp://" + srv.Listener.Addr().String(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkRemote(t, b)
	execThrough(t, f, b)
}

func TestSSHEndpoint(t *testing.T) {
	f := newFakePodman(t)
	answerInfo(f)
	s := newSSHServer(t)
	b, err := New(context.Background(), Options{Socket: s.url(f.socket), SSH: s.config, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkRemote(t, b)
	execThrough(t, f, b)

	// A dropped ssh connection is made again by the next request.
	s.dropAll()
	if err := b.Ping(context.Background()); err != nil {
		t.Fatalf("ping after the connection dropped: %v", err)
	}
	if s.logins() < 2 {
		t.Errorf("%d logins; want a new one after the drop", s.logins())
	}
}

func TestSSHEndpointVerifiesTheHost(t *testing.T) {
	f := newFakePodman(t)
	answerInfo(f)
	s := newSSHServer(t)
	other := newSSHServer(t) // its known_hosts names another key for another address
	cfg := s.config
	cfg.KnownHostsFile = other.config.KnownHostsFile
	_, err := New(context.Background(), Options{Socket: s.url(f.socket), SSH: cfg, Logf: t.Logf})
	if err == nil || !strings.Contains(err.Error(), "knownhosts") {
		t.Errorf("unknown host key: got %v", err)
	}
	cfg = s.config
	cfg.IdentityFile = other.identity(t, "stranger")
	_, err = New(context.Background(), Options{Socket: s.url(f.socket), SSH: cfg, Logf: t.Logf})
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("key not authorized: got %v", err)
	}
	cfg = s.config
	cfg.KnownHostsFile = ""
	if _, err = New(context.Background(), Options{Socket: s.url(f.socket), SSH: cfg}); err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("no known_hosts: got %v", err)
	}
}

func checkRemote(t *testing.T, b *Backend) {
	t.Helper()
	caps := b.Capabilities()
	if !b.Remote() || len(caps.Limitations) == 0 || caps.ExitHints || caps.HostFiles || caps.SignalCheck {
		t.Errorf("Remote() = %v, capabilities %+v; want a remote backend that says what degrades", b.Remote(), caps)
	}
	h, _ := b.Info(context.Background())
	if !h.Remote || h.CPUs != 48 || h.MemoryBytes != 64<<30 {
		t.Errorf("host info %+v; want the remote host's size", h)
	}
	if b.OCIRuntime() != "crun" {
		t.Errorf("OCI runtime %q; a remote host keeps its default whatever this host has installed", b.OCIRuntime())
	}
	if b.RLimits() != nil {
		t.Errorf("rlimits %v; this host's limits say nothing about the remote one", b.RLimits())
	}
	ch := make(chan runtime.Event)
	if _, ok := b.watchExits(context.Background(), ch); ok {
		t.Error("watching this host's exit files for a remote podman")
	}
}

// sshServer is an sshd that accepts one key and forwards direct-streamlocal
// channels to local unix sockets, as OpenSSH does for `podman --url ssh://`.
type sshServer struct {
	t      *testing.T
	l      net.Listener
	config SSHConfig // identity and known_hosts a client needs

	mu      sync.Mutex
	conns   []ssh.Conn
	nLogins int
}

func newSSHServer(t *testing.T) *sshServer {
	dir := t.TempDir()
	_, hostKey, _ := ed25519.GenerateKey(rand.Reader)
	hostSigner, _ := ssh.NewSignerFromKey(hostKey)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &sshServer{t: t, l: l}
	s.config.IdentityFile = s.identity(t, "client")
	authorized, _ := os.ReadFile(s.config.IdentityFile + ".pub")
	authKey, _, _, _, err := ssh.ParseAuthorizedKey(authorized)
	if err != nil {
		t.Fatal(err)
	}
	s.config.KnownHostsFile = filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(l.Addr().String())}, hostSigner.PublicKey())
	if err := os.WriteFile(s.config.KnownHostsFile, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if c.User() == "root" && bytes.Equal(k.Marshal(), authKey.Marshal()) {
			return nil, nil
		}
		return nil, io.EOF
	}}
	cfg.AddHostKey(hostSigner)
	go s.serve(cfg)
	return s
}

// identity writes a new private key (and its .pub) and returns its path.
func (s *sshServer) identity(t *testing.T, name string) string {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	sshPub, _ := ssh.NewPublicKey(pub)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(sshPub), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (s *sshServer) url(socket string) string {
	return "ssh://root@" + s.l.Addr().String() + socket
}

func (s *sshServer) serve(cfg *ssh.ServerConfig) {
	for {
		nc, err := s.l.Accept()
		if err != nil {
			return
		}
		go func() {
			conn, chans, reqs, err := ssh.NewServerConn(nc, cfg)
			if err != nil {
				nc.Close()
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, conn)
			s.nLogins++
			s.mu.Unlock()
			go ssh.DiscardRequests(reqs)
			for nch := range chans {
				go s.forward(nch)
			}
		}()
	}
}

func (s *sshServer) forward(nch ssh.NewChannel) {
	if nch.ChannelType() != "direct-streamlocal@openssh.com" {
		_ = nch.Reject(ssh.UnknownChannelType, "only streamlocal forwarding")
		return
	}
	var msg struct {
		SocketPath string
		Reserved0  string
		Reserved1  uint32
	}
	if err := ssh.Unmarshal(nch.ExtraData(), &msg); err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	uc, err := net.Dial("unix", msg.SocketPath)
	if err != nil {
		_ = nch.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nch.Accept()
	if err != nil {
		uc.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(uc, ch)
		_ = uc.(*net.UnixConn).CloseWrite() // the client's half-close goes on
		close(done)
	}()
	_, _ = io.Copy(ch, uc)
	_ = ch.CloseWrite()
	<-done
	_ = ch.Close()
	_ = uc.Close()
}

func (s *sshServer) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

func (s *sshServer) logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nLogins
}
