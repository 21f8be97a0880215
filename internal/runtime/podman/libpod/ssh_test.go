package libpod

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestSSHEndpoint(t *testing.T) {
	f := libpodtest.New(t)
	s := newSSHServer(t)
	c := sshClient(t, s, s.config, f)
	if err := c.WaitReady(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	execThrough(t, f, c)

	// A dropped ssh connection is made again by the next request.
	s.dropAll()
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatalf("ping after the connection dropped: %v", err)
	}
	if s.logins() < 2 {
		t.Errorf("%d logins; want a new one after the drop", s.logins())
	}
}

func TestSSHEndpointVerifiesTheHost(t *testing.T) {
	f := libpodtest.New(t)
	s := newSSHServer(t)
	other := newSSHServer(t) // its known_hosts names another key for another address
	cfg := s.config
	cfg.KnownHostsFile = other.config.KnownHostsFile
	err := sshClient(t, s, cfg, f).WaitReady(context.Background(), 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "knownhosts") {
		t.Errorf("unknown host key: got %v", err)
	}
	cfg = s.config
	cfg.IdentityFile = other.identity(t, "stranger")
	err = sshClient(t, s, cfg, f).WaitReady(context.Background(), 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("key not authorized: got %v", err)
	}
	cfg = s.config
	cfg.KnownHostsFile = ""
	ep, _ := ParseEndpoint(s.url(f.Socket()))
	if _, err := Connect(ep, cfg); err == nil || !strings.Contains(err.Error(), "known_hosts") {
		t.Errorf("no known_hosts: got %v", err)
	}
}

// sshClient connects to the fake through s, answering pings as podman 4.3.
func sshClient(t *testing.T, s *sshServer, cfg SSHConfig, f *libpodtest.Server) *Client {
	t.Helper()
	f.Handle("GET /_ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		_, _ = w.Write([]byte("OK"))
	})
	ep, err := ParseEndpoint(s.url(f.Socket()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Connect(ep, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// execThrough runs an exec with stdin through c: the half-close that ends
// stdin must cross the transport.
func execThrough(t *testing.T, f *libpodtest.Server, c *Client) {
	t.Helper()
	f.JSON("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.Handle("POST /exec/e1/start", libpodtest.EchoExec(t))
	ctx := context.Background()
	id, err := c.ExecCreate(ctx, "c1", ExecConfig{AttachStdin: true, AttachStdout: true, AttachStderr: true, Cmd: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.ExecStart(ctx, id, false)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "abc"); err != nil {
		t.Fatal(err)
	}
	if err := conn.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := Demux(conn, &out, &errb); err != nil || out.String() != "got:abc" || errb.String() != "eof seen\n" {
		t.Errorf("exec stream: %v, stdout %q, stderr %q", err, out.String(), errb.String())
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
