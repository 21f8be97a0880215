package libpod

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// SSHConfig authenticates an ssh:// endpoint as podman's own remote client
// does: a private key file, else the keys of the ssh agent at
// $SSH_AUTH_SOCK, and the remote host's key checked against known_hosts.
type SSHConfig struct {
	IdentityFile   string
	KnownHostsFile string
}

const sshHandshakeTimeout = 15 * time.Second

// sshDialer reaches the remote podman socket through one ssh connection,
// with a channel (direct-streamlocal, as `ssh -L`) per request; a dropped
// connection is made again on the next dial.
type sshDialer struct {
	ep  Endpoint
	cfg *ssh.ClientConfig

	mu     sync.Mutex
	client *ssh.Client
}

func newSSHDialer(ep Endpoint, c SSHConfig) (*sshDialer, error) {
	if c.KnownHostsFile == "" {
		return nil, fmt.Errorf("%s: a known_hosts file is needed to verify the host (--podman-known-hosts)", ep)
	}
	hostKeys, err := knownhosts.New(c.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("%s: known_hosts: %w", ep, err)
	}
	auth, err := sshAuth(c.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ep, err)
	}
	return &sshDialer{ep: ep, cfg: &ssh.ClientConfig{
		User: ep.User, Auth: auth, HostKeyCallback: hostKeys, Timeout: sshHandshakeTimeout,
	}}, nil
}

// sshAuth is the identity file when given, else the agent's keys.
func sshAuth(identity string) ([]ssh.AuthMethod, error) {
	if identity != "" {
		pem, err := os.ReadFile(identity)
		if err != nil {
			return nil, fmt.Errorf("identity: %w", err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("identity %s is protected by a passphrase: load it into an ssh agent instead", identity)
		}
		if err != nil {
			return nil, fmt.Errorf("identity %s: %w", identity, err)
		}
		return []ssh.AuthMethod{ssh.PublicKeys(signer)}, nil
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		return []ssh.AuthMethod{ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
			conn, err := net.Dial("unix", sock)
			if err != nil {
				return nil, err
			}
			defer conn.Close()
			return agent.NewClient(conn).Signers()
		})}, nil
	}
	return nil, errors.New("no ssh identity: give --podman-identity (or $CONTAINER_SSHKEY), or run an ssh agent ($SSH_AUTH_SOCK)")
}

// DialContext opens a channel to the remote socket, connecting first when
// there is no live connection, and once more when the old one was dead.
func (d *sshDialer) DialContext(ctx context.Context) (net.Conn, error) {
	for attempt := 0; ; attempt++ {
		c, err := d.connection(ctx)
		if err != nil {
			return nil, err
		}
		conn, err := c.DialContext(ctx, "unix", d.ep.Path)
		if err == nil || attempt > 0 || ctx.Err() != nil {
			if err != nil {
				err = fmt.Errorf("%s: %w", d.ep, err)
			}
			return conn, err
		}
		d.drop(c) // a broken connection fails every channel: make a new one
	}
}

func (d *sshDialer) connection(ctx context.Context) (*ssh.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.client != nil {
		return d.client, nil
	}
	var nd net.Dialer
	tcp, err := nd.DialContext(ctx, "tcp", d.ep.Host)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.ep, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = tcp.SetDeadline(dl)
	} else {
		_ = tcp.SetDeadline(time.Now().Add(sshHandshakeTimeout))
	}
	sc, chans, reqs, err := ssh.NewClientConn(tcp, d.ep.Host, d.cfg)
	if err != nil {
		tcp.Close()
		return nil, permanentError{fmt.Errorf("%s: %w", d.ep, err)}
	}
	_ = tcp.SetDeadline(time.Time{})
	c := ssh.NewClient(sc, chans, reqs)
	go func() {
		_ = c.Wait()
		d.drop(c)
	}()
	d.client = c
	return c, nil
}

func (d *sshDialer) drop(c *ssh.Client) {
	d.mu.Lock()
	if d.client == c {
		d.client = nil
	}
	d.mu.Unlock()
	_ = c.Close()
}

// Close ends the ssh connection.
func (d *sshDialer) Close() error {
	d.mu.Lock()
	c := d.client
	d.client = nil
	d.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// permanentError is a failure that retrying does not mend: an unknown host
// key, a refused login.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }
