package libpod

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Endpoint is where a libpod API is served, in the URL forms podman's own
// remote clients take (podman --url, CONTAINER_HOST):
//
//	/run/podman/podman.sock, unix:///run/podman/podman.sock   a local socket
//	tcp://host:port                                             plain TCP (podman system service tcp://…)
//	ssh://[user@]host[:port]/run/podman/podman.sock             the socket on another host, over ssh
type Endpoint struct {
	Scheme string // "unix", "tcp" or "ssh"
	Path   string // the socket: local for unix, on the remote host for ssh
	Host   string // host:port, for tcp and ssh
	User   string // ssh login; root when the URL names none
}

// ParseEndpoint reads a --podman-socket value.
func ParseEndpoint(s string) (Endpoint, error) {
	if !strings.Contains(s, "://") {
		if !strings.HasPrefix(s, "/") {
			return Endpoint{}, fmt.Errorf("podman socket %q: want an absolute path or a unix://, tcp:// or ssh:// URL", s)
		}
		return Endpoint{Scheme: "unix", Path: s}, nil
	}
	if p, ok := strings.CutPrefix(s, "unix://"); ok {
		if p == "" {
			return Endpoint{}, fmt.Errorf("podman socket %q: no socket path", s)
		}
		return Endpoint{Scheme: "unix", Path: p}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("podman socket %q: %w", s, err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Endpoint{}, fmt.Errorf("podman socket %q: query and fragment are not supported", s)
	}
	switch u.Scheme {
	case "tcp":
		if u.Port() == "" || u.Hostname() == "" {
			return Endpoint{}, fmt.Errorf("podman socket %q: want tcp://host:port", s)
		}
		if u.Path != "" && u.Path != "/" {
			return Endpoint{}, fmt.Errorf("podman socket %q: a tcp URL has no path", s)
		}
		return Endpoint{Scheme: "tcp", Host: u.Host}, nil
	case "ssh":
		return parseSSH(s, u)
	default:
		return Endpoint{}, fmt.Errorf("podman socket %q: scheme %q is not one of unix, tcp, ssh", s, u.Scheme)
	}
}

func parseSSH(s string, u *url.URL) (Endpoint, error) {
	if u.Hostname() == "" {
		return Endpoint{}, fmt.Errorf("podman socket %q: no host", s)
	}
	if u.Path == "" || u.Path == "/" {
		return Endpoint{}, fmt.Errorf("podman socket %q: name the socket on the remote host, e.g. ssh://root@%s/run/podman/podman.sock", s, u.Host)
	}
	if _, set := u.User.Password(); set {
		return Endpoint{}, fmt.Errorf("podman socket %q: passwords in the URL are not supported; use --podman-identity or an ssh agent", s)
	}
	e := Endpoint{Scheme: "ssh", Path: u.Path, Host: u.Host, User: u.User.Username()}
	if u.Port() == "" {
		e.Host = net.JoinHostPort(u.Hostname(), "22")
	}
	if e.User == "" {
		e.User = "root"
	}
	return e, nil
}

// Local reports whether the service runs on this host: only then can
// runlet see its exit files, its containers' log files and its processes.
func (e Endpoint) Local() bool { return e.Scheme == "unix" }

// String is the endpoint as a URL.
func (e Endpoint) String() string {
	switch e.Scheme {
	case "tcp":
		return "tcp://" + e.Host
	case "ssh":
		return "ssh://" + e.User + "@" + e.Host + e.Path
	default:
		return "unix://" + e.Path
	}
}
