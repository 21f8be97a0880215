/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Cases from k8s.io/kubernetes/pkg/kubelet/kubelet_pods_test.go and
// pkg/kubelet/util/util_test.go (v1.37.2), plus runlet's checks of when
// the file is mounted.
package etchosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const localhostLines = `127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
fe00::0	ip6-localnet
fe00::0	ip6-mcastprefix
fe00::1	ip6-allnodes
fe00::2	ip6-allrouters
`

func TestNodeHostsFileContent(t *testing.T) {
	raw := "# hosts file for testing.\n" + localhostLines + "123.45.67.89\tsome.domain\n"
	for _, tc := range []struct {
		name    string
		aliases []v1.HostAlias
		want    string
	}{
		{"no aliases", nil, "# Kubernetes-managed hosts file (host network).\n" + raw},
		{"one alias", []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar", "baz"}}},
			"# Kubernetes-managed hosts file (host network).\n" + raw + "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n"},
		{"two aliases", []v1.HostAlias{
			{IP: "123.45.67.89", Hostnames: []string{"foo", "bar", "baz"}},
			{IP: "456.78.90.123", Hostnames: []string{"park", "doo", "boo"}},
		}, "# Kubernetes-managed hosts file (host network).\n" + raw +
			"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n456.78.90.123\tpark\tdoo\tboo\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "hosts")
			if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := nodeHostsFileContent(p, tc.aliases)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestManagedHostsFileContent(t *testing.T) {
	head := "# Kubernetes-managed hosts file.\n" + localhostLines
	for _, tc := range []struct {
		ips          []string
		name, domain string
		aliases      []v1.HostAlias
		want         string
	}{
		{[]string{"123.45.67.89"}, "podFoo", "", nil, head + "123.45.67.89\tpodFoo\n"},
		{[]string{"203.0.113.1"}, "podFoo", "domainFoo", nil, head + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n"},
		{[]string{"203.0.113.1"}, "podFoo", "domainFoo", []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar", "baz"}}},
			head + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n"},
		{[]string{"203.0.113.1"}, "podFoo", "domainFoo", []v1.HostAlias{
			{IP: "123.45.67.89", Hostnames: []string{"foo", "bar", "baz"}},
			{IP: "456.78.90.123", Hostnames: []string{"park", "doo", "boo"}},
		}, head + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n456.78.90.123\tpark\tdoo\tboo\n"},
		{[]string{"203.0.113.1", "fd00::6"}, "podFoo", "domainFoo", nil,
			head + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\nfd00::6\tpodFoo.domainFoo\tpodFoo\n"},
	} {
		if got := string(managedHostsFileContent(tc.ips, tc.name, tc.domain, tc.aliases)); got != tc.want {
			t.Errorf("%v %s %s: got\n%s\nwant\n%s", tc.ips, tc.name, tc.domain, got, tc.want)
		}
	}
}

func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "node-hosts")
	if err := os.WriteFile(node, []byte("127.0.0.1 localhost\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "etc-hosts")
	if err := Ensure(p, node, []string{"10.88.0.5"}, "web", "", nil, false); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), "# Kubernetes-managed hosts file.\n") || !strings.HasSuffix(string(b), "10.88.0.5\tweb\n") {
		t.Errorf("managed file:\n%s", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if err := Ensure(p, node, nil, "web", "", []v1.HostAlias{{IP: "1.2.3.4", Hostnames: []string{"a"}}}, true); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.2.3.4\ta\n"
	if string(b) != want {
		t.Errorf("host-network file:\n%q\nwant\n%q", b, want)
	}
}

func TestShouldMount(t *testing.T) {
	c := &v1.Container{Name: "c"}
	own := &v1.Container{Name: "own", VolumeMounts: []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}}
	pod := &v1.Pod{}
	hostNet := &v1.Pod{Spec: v1.PodSpec{HostNetwork: true}}
	if ShouldMount(pod, nil, c) {
		t.Error("mounted before the pod has an IP")
	}
	if !ShouldMount(pod, []string{"10.0.0.1"}, c) || !ShouldMount(hostNet, nil, c) {
		t.Error("not mounted once there is an IP, or on the host's network")
	}
	if ShouldMount(pod, []string{"10.0.0.1"}, own) {
		t.Error("mounted over the container's own /etc/hosts")
	}
}

func TestTruncatePodHostname(t *testing.T) {
	for name, tc := range map[string]struct{ in, out string }{
		"valid hostname":      {"test.pod.hostname", "test.pod.hostname"},
		"too long hostname":   {"1234567.1234567.1234567.1234567.1234567.1234567.1234567.1234567.1234567.", "1234567.1234567.1234567.1234567.1234567.1234567.1234567.1234567"},
		"hostname end with .": {"1234567.1234567.1234567.1234567.1234567.1234567.1234567.123456.1234567.", "1234567.1234567.1234567.1234567.1234567.1234567.1234567.123456"},
		"hostname end with -": {"1234567.1234567.1234567.1234567.1234567.1234567.1234567.123456-1234567.", "1234567.1234567.1234567.1234567.1234567.1234567.1234567.123456"},
	} {
		got, err := truncatePodHostnameIfNeeded("test-pod", tc.in)
		if err != nil || got != tc.out {
			t.Errorf("%s: got %q, %v", name, got, err)
		}
	}
}

func TestPodHostNameAndDomain(t *testing.T) {
	for _, tc := range []struct {
		name, podName, hostname, subdomain string
		override                           *string
		wantHost, wantDomain, wantErr      string
	}{
		{name: "pod name as hostname", podName: "test-pod", wantHost: "test-pod"},
		{name: "spec.hostname", podName: "test-pod", hostname: "custom-hostname", wantHost: "custom-hostname"},
		{name: "subdomain", podName: "test-pod", subdomain: "my-subdomain", wantHost: "test-pod", wantDomain: "my-subdomain.default.svc.cluster.local"},
		{name: "hostname and subdomain", podName: "test-pod", hostname: "custom-hostname", subdomain: "my-subdomain",
			wantHost: "custom-hostname", wantDomain: "my-subdomain.default.svc.cluster.local"},
		{name: "hostnameOverride overrides all", podName: "test-pod", hostname: "custom-hostname", subdomain: "my-subdomain",
			override: ptr.To("override-hostname"), wantHost: "override-hostname"},
		{name: "invalid hostnameOverride", podName: "test-pod", override: ptr.To("Invalid-Hostname-!"),
			wantErr: `pod HostnameOverride "Invalid-Hostname-!" is not a valid DNS subdomain`},
		{name: "hostnameOverride with dots", podName: "test-pod", override: ptr.To("valid.hostname"), wantHost: "valid.hostname"},
		{name: "long pod name truncated", podName: strings.Repeat("a", 65), wantHost: strings.Repeat("a", 63)},
		{name: "invalid hostname", podName: "test-pod", hostname: "Invalid-Hostname-!", wantErr: `pod Hostname "Invalid-Hostname-!" is not a valid DNS label`},
		{name: "invalid subdomain", podName: "test-pod", subdomain: "invalid_subdomain", wantErr: `pod Subdomain "invalid_subdomain" is not a valid DNS label`},
		{name: "too long hostname", podName: "test-pod", hostname: strings.Repeat("a", 64), wantErr: "must be no more than 63 characters"},
	} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: tc.podName, Namespace: "default"},
			Spec: v1.PodSpec{Hostname: tc.hostname, Subdomain: tc.subdomain, HostnameOverride: tc.override}}
		host, domain, err := PodHostNameAndDomain(pod, "cluster.local")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || host != tc.wantHost || domain != tc.wantDomain {
			t.Errorf("%s: got %q %q %v, want %q %q", tc.name, host, domain, err, tc.wantHost, tc.wantDomain)
		}
	}
}

func TestNodenameForKernel(t *testing.T) {
	for _, tc := range []struct {
		desc, hostname, domain string
		fqdn                   bool
		want                   string
		wantErr                bool
	}{
		{"no hostDomain, setHostnameAsFQDN false", "test.pod.hostname", "", false, "test.pod.hostname", false},
		{"no hostDomain, setHostnameAsFQDN true", "test.pod.hostname", "", true, "test.pod.hostname", false},
		{"valid hostDomain, setHostnameAsFQDN false", "test.pod.hostname", "svc.subdomain.local", false, "test.pod.hostname", false},
		{"valid hostDomain, setHostnameAsFQDN true", "test.pod.hostname", "svc.subdomain.local", true, "test.pod.hostname.svc.subdomain.local", false},
		{"FQDN is too long, setHostnameAsFQDN false", "1234567.1234567", "1234567.1234567.1234567.1234567.1234567.1234567.1234567", false, "1234567.1234567", false},
		{"FQDN is too long, setHostnameAsFQDN true", "1234567.1234567", "1234567.1234567.1234567.1234567.1234567.1234567.1234567", true, "", true},
	} {
		got, err := NodenameForKernel(tc.hostname, tc.domain, &tc.fqdn)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: got %q, %v", tc.desc, got, err)
		}
	}
}
