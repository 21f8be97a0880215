/*
Copyright 2017 The Kubernetes Authors.

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

// The cases below are those of k8s.io/kubernetes/pkg/kubelet/network/dns/dns_test.go
// (v1.37.2) that apply to Linux, with options compared in order (runlet keeps
// it) and runlet's own checks of the file the runtime writes.
package dns

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

var (
	testHostNameserver = "8.8.8.8"
	testHostDomain     = "host.domain"
	nodeRef            = &v1.ObjectReference{Kind: "Node", Name: "testNode", UID: types.UID("testNode")}
)

func fetchEvent(recorder *record.FakeRecorder) string {
	select {
	case event := <-recorder.Events:
		return event
	default:
		return ""
	}
}

func newConfigurer(rec record.EventRecorder, clusterDNS []net.IP, domain, resolvConf string) *Configurer {
	return NewConfigurer(rec, nil, nodeRef, nil, clusterDNS, domain, resolvConf)
}

func TestParseResolvConf(t *testing.T) {
	testCases := []struct {
		data        string
		nameservers []string
		searches    []string
		options     []string
		isErr       bool
	}{
		{"", []string{}, []string{}, []string{}, false},
		{" ", []string{}, []string{}, []string{}, false},
		{"\n", []string{}, []string{}, []string{}, false},
		{"\t\n\t", []string{}, []string{}, []string{}, false},
		{"#comment\n", []string{}, []string{}, []string{}, false},
		{" #comment\n", []string{}, []string{}, []string{}, false},
		{"#comment\n#comment", []string{}, []string{}, []string{}, false},
		{"#comment\nnameserver", []string{}, []string{}, []string{}, true},
		{"#comment\nnameserver\nsearch", []string{}, []string{}, []string{}, true},
		{"#comment\nnameserver 1.2.3.4\nsearch", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"nameserver 1.2.3.4", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{" nameserver 1.2.3.4", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"\tnameserver 1.2.3.4", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"nameserver\t1.2.3.4", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"nameserver \t 1.2.3.4", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"nameserver 1.2.3.4\nnameserver 5.6.7.8", []string{"1.2.3.4", "5.6.7.8"}, []string{}, []string{}, false},
		{"nameserver 1.2.3.4 #comment", []string{"1.2.3.4"}, []string{}, []string{}, false},
		{"search ", []string{}, []string{}, []string{}, false},
		{"search .", []string{}, []string{}, []string{}, false},
		{"search . foo", []string{}, []string{"foo"}, []string{}, false},
		{"search foo .", []string{}, []string{"foo"}, []string{}, false},
		{"search foo .  bar", []string{}, []string{"foo", "bar"}, []string{}, false},
		{"search foo", []string{}, []string{"foo"}, []string{}, false},
		{"search foo bar", []string{}, []string{"foo", "bar"}, []string{}, false},
		{"search foo. bar", []string{}, []string{"foo", "bar"}, []string{}, false},
		{"search foo bar bat\n", []string{}, []string{"foo", "bar", "bat"}, []string{}, false},
		{"search foo\nsearch bar", []string{}, []string{"bar"}, []string{}, false},
		{"nameserver 1.2.3.4\nsearch foo bar", []string{"1.2.3.4"}, []string{"foo", "bar"}, []string{}, false},
		{"nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar", []string{"1.2.3.4", "5.6.7.8"}, []string{"bar"}, []string{}, false},
		{"#comment\nnameserver 1.2.3.4\n#comment\nsearch foo\ncomment", []string{"1.2.3.4"}, []string{"foo"}, []string{}, false},
		{"options ", []string{}, []string{}, []string{}, false},
		{"options ndots:5 attempts:2", []string{}, []string{}, []string{"ndots:5", "attempts:2"}, false},
		{"options ndots:1 ndots:5 attempts:2", []string{}, []string{}, []string{"ndots:5", "attempts:2"}, false},
		{"options ndots:1 edns0 attempts:2 single-request-reopen", []string{}, []string{}, []string{"ndots:1", "edns0", "attempts:2", "single-request-reopen"}, false},
		{"options ndots:1\noptions ndots:5 attempts:3", []string{}, []string{}, []string{"ndots:5", "attempts:3"}, false},
		{"options ndots:1 timeout:3 timeout:1 attempts:3\noptions ndots:5", []string{}, []string{}, []string{"ndots:5", "timeout:1", "attempts:3"}, false},
		{"options ndots:1 attempts:3\noptions ndots:1 attempts:3 ndots:5", []string{}, []string{}, []string{"ndots:5", "attempts:3"}, false},
		{"nameserver 1.2.3.4\nsearch foo\nnameserver 5.6.7.8\nsearch bar\noptions ndots:5 attempts:4", []string{"1.2.3.4", "5.6.7.8"}, []string{"bar"}, []string{"ndots:5", "attempts:4"}, false},
	}
	for i, tc := range testCases {
		ns, srch, opts, err := parseResolvConf(strings.NewReader(tc.data))
		if tc.isErr {
			if err == nil {
				t.Errorf("case %d (%q): no error", i, tc.data)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d (%q): %v", i, tc.data, err)
		}
		if !reflect.DeepEqual(ns, tc.nameservers) || !reflect.DeepEqual(srch, tc.searches) || !reflect.DeepEqual(opts, tc.options) {
			t.Errorf("case %d (%q): got %q %q %q, want %q %q %q", i, tc.data, ns, srch, opts, tc.nameservers, tc.searches, tc.options)
		}
	}
}

func TestFormDNSSearchFitsLimits(t *testing.T) {
	// 2048 = 128 + 127 * 15 + 15
	list2048 := []string{strings.Repeat("A", 128)}
	for range 15 {
		list2048 = append(list2048, strings.Repeat("A", 127))
	}
	var thirtyTwo []string
	for i := 4; i <= 32; i++ {
		thirtyTwo = append(thirtyTwo, fmt.Sprint(i))
	}
	base := []string{"testNS.svc.TEST", "svc.TEST", "TEST"}
	recorder := record.NewFakeRecorder(20)
	configurer := newConfigurer(recorder, nil, "TEST", "")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test_pod", Namespace: "testNS"}}
	testCases := []struct {
		desc         string
		hostNames    []string
		resultSearch []string
		event        string
	}{
		{"valid: 3 search paths", base, base, ""},
		{"valid: 5 search paths", append(base[:3:3], "AAA", "BBB"), append(base[:3:3], "AAA", "BBB"), ""},
		{"invalid: longer than 256 characters in search path list", append(base[:3:3], "AAA", strings.Repeat("B", 256), "BBB"),
			append(base[:3:3], "AAA", "BBB"), "testNS.svc.TEST svc.TEST TEST AAA BBB"},
		{"valid: 2048 characters in search path list", list2048, list2048, ""},
		{"invalid: 2050 characters in search path list", append(list2048[:16:16], "B"), list2048, strings.Join(list2048, " ")},
		{"valid: 32 search paths", append(base[:3:3], thirtyTwo...), append(base[:3:3], thirtyTwo...), ""},
		{"invalid: 33 search paths", append(append(base[:3:3], thirtyTwo...), "33"), append(base[:3:3], thirtyTwo...),
			strings.Join(append(base[:3:3], thirtyTwo...), " ")},
	}
	for _, tc := range testCases {
		t.Run(tc.desc, func(t *testing.T) {
			in := append([]string(nil), tc.hostNames...)
			got := configurer.formDNSSearchFitsLimits(in, pod)
			if !reflect.DeepEqual(got, tc.resultSearch) {
				t.Errorf("got %q, want %q", got, tc.resultSearch)
			}
			ev := fetchEvent(recorder)
			want := ""
			if tc.event != "" {
				want = "Warning DNSConfigForming Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + tc.event
			}
			if ev != want {
				t.Errorf("event %q, want %q", ev, want)
			}
		})
	}
}

func TestFormDNSNameserversFitsLimits(t *testing.T) {
	recorder := record.NewFakeRecorder(20)
	configurer := newConfigurer(recorder, nil, "TEST", "")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test_pod", Namespace: "testNS"}}
	for _, tc := range []struct {
		desc                string
		nameservers, wanted []string
		event               bool
	}{
		{"valid: 1 nameserver", []string{"127.0.0.1"}, []string{"127.0.0.1"}, false},
		{"valid: 3 nameservers", []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}, []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}, false},
		{"invalid: 4 nameservers, trimmed to 3", []string{"127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"}, []string{"127.0.0.1", "10.0.0.10", "8.8.8.8"}, true},
	} {
		got := configurer.formDNSNameserversFitsLimits(tc.nameservers, pod)
		if !reflect.DeepEqual(got, tc.wanted) {
			t.Errorf("%s: got %q", tc.desc, got)
		}
		if ev := fetchEvent(recorder); (ev != "") != tc.event {
			t.Errorf("%s: event %q, want one: %v", tc.desc, ev, tc.event)
		}
	}
}

func TestMergeDNSOptions(t *testing.T) {
	three := "3"
	for _, tc := range []struct {
		desc     string
		existing []string
		pod      []v1.PodDNSConfigOption
		want     []string
	}{
		{"Empty dnsConfigOptions", []string{"ndots:5", "debug"}, nil, []string{"ndots:5", "debug"}},
		{"No duplicated entries", []string{"ndots:5", "debug"},
			[]v1.PodDNSConfigOption{{Name: "single-request"}, {Name: "attempts", Value: &three}},
			[]string{"ndots:5", "debug", "single-request", "attempts:3"}},
		{"Overwrite duplicated entries", []string{"ndots:5", "debug"},
			[]v1.PodDNSConfigOption{{Name: "ndots", Value: &three}, {Name: "debug"}, {Name: "single-request"}, {Name: "attempts", Value: &three}},
			[]string{"ndots:3", "debug", "single-request", "attempts:3"}},
	} {
		if got := mergeDNSOptions(tc.existing, tc.pod); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.desc, got, tc.want)
		}
	}
}

func TestGetPodDNSType(t *testing.T) {
	for _, tc := range []struct {
		desc        string
		hostNetwork bool
		policy      v1.DNSPolicy
		want        podDNSType
		wantErr     bool
	}{
		{"valid DNSClusterFirst without hostnetwork", false, v1.DNSClusterFirst, podDNSCluster, false},
		{"valid DNSClusterFirstWithHostNet with hostnetwork", true, v1.DNSClusterFirstWithHostNet, podDNSCluster, false},
		{"valid DNSClusterFirstWithHostNet without hostnetwork", false, v1.DNSClusterFirstWithHostNet, podDNSCluster, false},
		{"valid DNSDefault without hostnetwork", false, v1.DNSDefault, podDNSHost, false},
		{"valid DNSDefault with hostnetwork", true, v1.DNSDefault, podDNSHost, false},
		{"DNSClusterFirst with hostnetwork, fallback to DNSDefault", true, v1.DNSClusterFirst, podDNSHost, false},
		{"valid DNSNone", false, v1.DNSNone, podDNSNone, false},
		{"invalid DNS policy, should return error", false, "invalidPolicy", 0, true},
	} {
		pod := &v1.Pod{Spec: v1.PodSpec{DNSPolicy: tc.policy, HostNetwork: tc.hostNetwork}}
		got, err := getPodDNSType(pod)
		if tc.wantErr != (err != nil) || !tc.wantErr && got != tc.want {
			t.Errorf("%s: got %v, %v", tc.desc, got, err)
		}
	}
}

func newTestPods(count int) []*v1.Pod {
	pods := make([]*v1.Pod, count)
	for i := range pods {
		pods[i] = &v1.Pod{
			Spec:       v1.PodSpec{HostNetwork: true},
			ObjectMeta: metav1.ObjectMeta{UID: types.UID(fmt.Sprint(10000 + i)), Name: fmt.Sprintf("pod%d", i)},
		}
	}
	return pods
}

func TestGetPodDNS(t *testing.T) {
	clusterNS := "203.0.113.1"
	domain := "kubernetes.io"
	configurer := newConfigurer(record.NewFakeRecorder(20), []net.IP{net.ParseIP(clusterNS)}, domain, "")
	pods := newTestPods(4)
	pods[0].Spec.DNSPolicy = v1.DNSClusterFirstWithHostNet
	pods[1].Spec.DNSPolicy = v1.DNSClusterFirst
	pods[2].Spec.DNSPolicy = v1.DNSClusterFirst
	pods[2].Spec.HostNetwork = false
	pods[3].Spec.DNSPolicy = v1.DNSDefault
	want := []Config{
		{Servers: []string{clusterNS}, Searches: []string{".svc." + domain, "svc." + domain, domain}, Options: []string{"ndots:5"}},
		{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
		{Servers: []string{clusterNS}, Searches: []string{".svc." + domain, "svc." + domain, domain}, Options: []string{"ndots:5"}},
		{Servers: []string{"127.0.0.1"}, Searches: []string{"."}},
	}
	for i, pod := range pods {
		got, err := configurer.GetPodDNS(pod)
		if err != nil {
			t.Fatal(err)
		}
		if !configsEqual(got, &want[i]) {
			t.Errorf("pod %d (%s, hostNetwork %v): got %+v, want %+v", i, pod.Spec.DNSPolicy, pod.Spec.HostNetwork, got, want[i])
		}
	}

	// With the host's resolv.conf as the base: its searches follow the cluster's.
	resolv := writeResolvConf(t, "nameserver 8.8.8.8\nsearch a.example b.example\noptions timeout:2\n")
	configurer = newConfigurer(record.NewFakeRecorder(20), []net.IP{net.ParseIP(clusterNS)}, domain, resolv)
	for i, pod := range pods {
		got, err := configurer.GetPodDNS(pod)
		if err != nil {
			t.Fatal(err)
		}
		want := &Config{Servers: []string{"8.8.8.8"}, Searches: []string{"a.example", "b.example"}, Options: []string{"timeout:2"}}
		if i%2 == 0 {
			want = &Config{Servers: []string{clusterNS}, Searches: []string{".svc." + domain, "svc." + domain, domain, "a.example", "b.example"}, Options: []string{"ndots:5"}}
		}
		if !configsEqual(got, want) {
			t.Errorf("pod %d with the host's file: got %+v, want %+v", i, got, want)
		}
	}
}

func writeResolvConf(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func configsEqual(a, b *Config) bool {
	norm := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	return reflect.DeepEqual(norm(a.Servers), norm(b.Servers)) && reflect.DeepEqual(norm(a.Searches), norm(b.Searches)) &&
		reflect.DeepEqual(norm(a.Options), norm(b.Options))
}

func TestGetPodDNSCustom(t *testing.T) {
	ns, clusterNS, domain, ndots := "testNS", "10.0.0.10", "kubernetes.io", "3"
	svc, nsSvc := "svc."+domain, ns+".svc."+domain
	resolv := writeResolvConf(t, fmt.Sprintf("nameserver %s\nsearch %s\n", testHostNameserver, testHostDomain))
	configurer := newConfigurer(record.NewFakeRecorder(20), []net.IP{net.ParseIP(clusterNS)}, domain, resolv)
	podConfig := &v1.PodDNSConfig{
		Nameservers: []string{"10.0.0.11"},
		Searches:    []string{"my.domain"},
		Options:     []v1.PodDNSConfigOption{{Name: "ndots", Value: &ndots}, {Name: "debug"}},
	}
	for _, tc := range []struct {
		desc        string
		hostNetwork bool
		policy      v1.DNSPolicy
		dnsConfig   *v1.PodDNSConfig
		want        Config
	}{
		{desc: "DNSNone without DNSConfig should have empty DNS settings", policy: v1.DNSNone},
		{desc: "DNSNone with DNSConfig should have a merged DNS settings", policy: v1.DNSNone,
			dnsConfig: &v1.PodDNSConfig{
				Nameservers: []string{"203.0.113.1"},
				Searches:    []string{"my.domain", "second.domain"},
				Options:     []v1.PodDNSConfigOption{{Name: "ndots", Value: &ndots}, {Name: "debug"}},
			},
			want: Config{Servers: []string{"203.0.113.1"}, Searches: []string{"my.domain", "second.domain"}, Options: []string{"ndots:3", "debug"}}},
		{desc: "DNSClusterFirst with DNSConfig should have a merged DNS settings", policy: v1.DNSClusterFirst, dnsConfig: podConfig,
			want: Config{Servers: []string{clusterNS, "10.0.0.11"}, Searches: []string{nsSvc, svc, domain, testHostDomain, "my.domain"}, Options: []string{"ndots:3", "debug"}}},
		{desc: "DNSClusterFirstWithHostNet with DNSConfig should have a merged DNS settings", hostNetwork: true, policy: v1.DNSClusterFirstWithHostNet, dnsConfig: podConfig,
			want: Config{Servers: []string{clusterNS, "10.0.0.11"}, Searches: []string{nsSvc, svc, domain, testHostDomain, "my.domain"}, Options: []string{"ndots:3", "debug"}}},
		{desc: "DNSDefault with DNSConfig should have a merged DNS settings", policy: v1.DNSDefault, dnsConfig: podConfig,
			want: Config{Servers: []string{testHostNameserver, "10.0.0.11"}, Searches: []string{testHostDomain, "my.domain"}, Options: []string{"ndots:3", "debug"}}},
	} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test_pod", Namespace: ns},
			Spec: v1.PodSpec{HostNetwork: tc.hostNetwork, DNSPolicy: tc.policy, DNSConfig: tc.dnsConfig}}
		got, err := configurer.GetPodDNS(pod)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if !configsEqual(got, &tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.desc, got, tc.want)
		}
	}
}

// Without --cluster-dns a ClusterFirst pod falls back to Default, with the
// kubelet's MissingClusterDNS warning on the node and on the pod.
func TestMissingClusterDNS(t *testing.T) {
	recorder := record.NewFakeRecorder(20)
	resolv := writeResolvConf(t, "nameserver 8.8.8.8\nsearch host.example\n")
	configurer := newConfigurer(recorder, nil, "cluster.local", resolv)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", UID: "u1"}, Spec: v1.PodSpec{DNSPolicy: v1.DNSClusterFirst}}
	got, err := configurer.GetPodDNS(pod)
	if err != nil {
		t.Fatal(err)
	}
	if want := (&Config{Servers: []string{"8.8.8.8"}, Searches: []string{"host.example"}}); !configsEqual(got, want) {
		t.Errorf("got %+v, want the host's %+v", got, want)
	}
	msg := `kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`
	if ev := fetchEvent(recorder); ev != "Warning MissingClusterDNS "+msg {
		t.Errorf("node event %q", ev)
	}
	if ev := fetchEvent(recorder); ev != `Warning MissingClusterDNS pod: "web_prod(u1)". `+msg {
		t.Errorf("pod event %q", ev)
	}
}

func TestResolvConf(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Servers: []string{"10.96.0.10"}, Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}},
			"search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"},
		{Config{Servers: []string{"1.1.1.1", "8.8.8.8"}}, "nameserver 1.1.1.1\nnameserver 8.8.8.8\n"},
		{Config{Servers: []string{"127.0.0.1"}, Searches: []string{"."}}, "search .\nnameserver 127.0.0.1\n"},
		{Config{}, ""},
	} {
		if got := string(ResolvConf(&tc.cfg)); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.cfg, got, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "pod", "resolv.conf")
	if err := WriteResolvConf(p, &Config{Servers: []string{"10.0.0.1"}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "nameserver 10.0.0.1\n" {
		t.Errorf("file %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
}
