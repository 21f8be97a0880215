package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

const joinHash = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestJoinFlags(t *testing.T) {
	o, err := parseJoinFlags([]string{"10.0.0.1:6443", "--token", "abcdef.0123456789abcdef",
		"--discovery-token-ca-cert-hash", joinHash, "--nodename", "n1", "--root-dir", "/srv/runlet",
		"--runlet-binary", "/usr/bin/runlet", "--", "--runtime=runc", "--log-level", "debug"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Discovery.Endpoint != "10.0.0.1:6443" || o.NodeName != "n1" || !reflect.DeepEqual(o.ExtraArgs, []string{"--runtime=runc", "--log-level", "debug"}) {
		t.Errorf("endpoint %q, node %q, extra %q", o.Discovery.Endpoint, o.NodeName, o.ExtraArgs)
	}
	p := o.Paths
	if p.BootstrapKubeconfig != "/etc/runlet/bootstrap-kubeconfig" || p.Kubeconfig != "/etc/runlet/kubeconfig" ||
		p.Config != "/etc/runlet/config.yaml" || p.CAFile != "/etc/runlet/pki/ca.crt" || p.CertDir != "/srv/runlet/pki" {
		t.Errorf("default paths: %+v", p)
	}
	if o.Service.UnitPath != "/etc/systemd/system/runlet.service" || o.Service.InitPath != "/etc/init.d/runlet" {
		t.Errorf("service paths: %+v", o.Service)
	}

	o, err = parseJoinFlags([]string{"https://cp:6443", "--token", "abcdef.0123456789abcdef",
		"--discovery-token-unsafe-skip-ca-verification", "--config-out", "/opt/rl", "--cert-dir", "/opt/certs"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Paths.Config != "/opt/rl/config.yaml" || o.Paths.CertDir != "/opt/certs" || o.Binary == "" {
		t.Errorf("paths %+v, binary %q", o.Paths, o.Binary)
	}
}

// Mistakes in the flags are refused before any network access, naming the
// flag (the endpoints here would not answer).
func TestJoinFlagsRefused(t *testing.T) {
	ok := []string{"--token", "abcdef.0123456789abcdef", "--discovery-token-ca-cert-hash", joinHash}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"127.0.0.1:1", "--token", "abcdef:0123456789abcdef", "--discovery-token-ca-cert-hash", joinHash}, "--token"},
		{[]string{"127.0.0.1:1", "--token", "ABCDEF.0123456789abcdef", "--discovery-token-ca-cert-hash", joinHash}, "--token"},
		{[]string{"127.0.0.1:1", "--discovery-token-ca-cert-hash", joinHash}, "--token"},
		{[]string{"127.0.0.1:1", "--token", "abcdef.0123456789abcdef"}, "--discovery-token-ca-cert-hash is required"},
		{[]string{"127.0.0.1:1", "--token", "abcdef.0123456789abcdef", "--discovery-token-ca-cert-hash", "md5:00"}, "--discovery-token-ca-cert-hash"},
		{ok, "one apiserver endpoint"},
		{append([]string{"a:1", "b:2"}, ok...), "one apiserver endpoint"},
		{append([]string{"http://127.0.0.1:1"}, ok...), "only https"},
		{append([]string{"127.0.0.1:1", "--nodename", ""}, ok...), "--nodename"},
	} {
		_, err := parseJoinFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error saying %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%q: the error shows the token's secret: %v", tc.args, err)
		}
	}
	if _, err := parseJoinFlags([]string{"--help"}); !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
}
