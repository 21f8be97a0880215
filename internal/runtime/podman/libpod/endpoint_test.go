package libpod

import (
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]Endpoint{
		"/run/podman/podman.sock":                     {Scheme: "unix", Path: "/run/podman/podman.sock"},
		"unix:///run/podman/podman.sock":              {Scheme: "unix", Path: "/run/podman/podman.sock"},
		"unix:///tmp/x/podman.sock":                   {Scheme: "unix", Path: "/tmp/x/podman.sock"},
		"tcp://127.0.0.1:8888":                        {Scheme: "tcp", Host: "127.0.0.1:8888"},
		"tcp://[::1]:8888":                            {Scheme: "tcp", Host: "[::1]:8888"},
		"ssh://core@edge-1/run/podman/podman.sock":    {Scheme: "ssh", User: "core", Host: "edge-1:22", Path: "/run/podman/podman.sock"},
		"ssh://edge-1:2222/run/user/1000/podman.sock": {Scheme: "ssh", User: "root", Host: "edge-1:2222", Path: "/run/user/1000/podman.sock"},
	} {
		got, err := ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.Local() != (want.Scheme == "unix") {
			t.Errorf("%q: Local() = %v", in, got.Local())
		}
	}
}

func TestParseEndpointErrors(t *testing.T) {
	for in, want := range map[string]string{
		"podman.sock":                         "absolute path",
		"unix://":                             "no socket path",
		"tcp://127.0.0.1":                     "tcp://host:port",
		"tcp://127.0.0.1:8888/x":              "no path",
		"ssh://edge-1":                        "name the socket",
		"ssh://root:secret@edge-1/run/p.sock": "passwords",
		"ssh://edge-1/run/p.sock?secure=true": "query",
		"http://edge-1:8080":                  "not one of unix, tcp, ssh",
	} {
		_, err := ParseEndpoint(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseEndpoint(%q): got %v, want an error saying %q", in, err, want)
		}
	}
}

func TestEndpointString(t *testing.T) {
	for _, s := range []string{"unix:///run/podman/podman.sock", "tcp://127.0.0.1:8888", "ssh://core@edge-1:22/run/podman/podman.sock"} {
		e, err := ParseEndpoint(s)
		if err != nil || e.String() != s {
			t.Errorf("%q: round trip gave %q (%v)", s, e.String(), err)
		}
	}
}
