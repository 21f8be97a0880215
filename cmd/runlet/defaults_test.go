package main

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	nodeinfo "github.com/runlet/runlet/internal/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestDefaultsDoNotClashWithAKubelet(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, metricsPort, _ := net.SplitHostPort(o.MetricsAddr)
	// The kubelet's, kube-proxy's and the control plane's well-known ports.
	for _, taken := range []string{"10248", "10249", "10250", "10255", "10256", "10257", "10258", "10259"} {
		if strconv.Itoa(int(o.KubeletPort)) == taken || metricsPort == taken {
			t.Errorf("default port %s is a kubelet or control-plane port", taken)
		}
	}
	if strconv.Itoa(int(o.KubeletPort)) == metricsPort {
		t.Errorf("kubelet API and metrics share port %s", metricsPort)
	}
	host, _ := os.Hostname()
	if o.NodeName == host || !strings.HasPrefix(o.NodeName, "runlet") {
		t.Errorf("default --nodename %q: want runlet-<host>, never the host's name %q", o.NodeName, host)
	}
}

func TestDefaultNodeName(t *testing.T) {
	for host, want := range map[string]string{
		"worker-1":                 "runlet-worker-1",
		"Worker_1.example.com":     "runlet-worker-1",
		"":                         "runlet",
		"___":                      "runlet",
		"ip-10-0-0-1.ec2.internal": "runlet-ip-10-0-0-1",
	} {
		if got := defaultNodeName(host); got != want {
			t.Errorf("defaultNodeName(%q) = %q, want %q", host, got, want)
		}
	}
}

func TestFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // substring of the error; "" = valid
	}{
		{[]string{"--nodename", "Bad_Name"}, "--nodename"},
		{[]string{"--kubelet-port", "0"}, "--kubelet-port"},
		{[]string{"--kubelet-port", "70000"}, "--kubelet-port"},
		{[]string{"--node-labels", "team=a,tier=edge"}, ""},
		{[]string{"--node-labels", "bad key=a"}, "--node-labels"},
		{[]string{"--register-with-taints", "dedicated=edge:NoSchedule,gpu:NoExecute"}, ""},
		{[]string{"--register-with-taints", "dedicated=edge"}, "--register-with-taints"},
		{[]string{"--register-with-taints", "a:Sometimes"}, "--register-with-taints"},
		{[]string{"--max-pods=-5"}, "--max-pods"},
		{[]string{"--max-pods=0"}, ""},
		{[]string{"--log-level=verbose"}, "--log-level"},
		{[]string{"--address=localhost"}, "--address"},
		{[]string{"--node-ip=10.0.0"}, "--node-ip"},
		{[]string{"--metrics-addr=10301"}, "--metrics-addr"},
		{[]string{"--metrics-addr=:10301"}, ""},
		{[]string{"--metrics-addr="}, ""},
		{[]string{"--pleg-relist-period=0s"}, "--pleg-relist-period"},
		{[]string{"--kube-api-qps=-1"}, "--kube-api-qps"},
		{[]string{"--kube-api-burst=-1"}, "--kube-api-burst"},
		{[]string{"--event-qps=-1"}, "--event-qps"},
		{[]string{"--event-qps=0", "--event-burst=0"}, ""},
		{[]string{"--event-burst=0"}, "--event-burst"},
		{[]string{"--pod-sync-workers=0"}, "--pod-sync-workers"},
		{[]string{"--image-pull-timeout=0s"}, "--image-pull-timeout"},
		{[]string{"--offline-start-after=-1s"}, "--offline-start-after"},
		{[]string{"--offline-start-after=soon"}, "offline-start-after"},
		{[]string{"--offline-start-after=0"}, ""},
		{[]string{"--pod-max-pids=0"}, "--pod-max-pids"},
		{[]string{"--pod-max-pids=-1"}, ""},
		{[]string{"--root-dir="}, "--root-dir"},
		{[]string{"--tls-cert-file=/c.pem"}, "--tls-private-key-file"},
		{[]string{"--manifest-url-header=A:b"}, "--manifest-url-header needs --manifest-url"},
		{[]string{"--manifest-url=http://h/p", "--manifest-url-header=nocolon"}, "--manifest-url-header"},
		{[]string{"--cluster-domain=Cluster_Local"}, "--cluster-domain"},
		{[]string{"--system-reserved=cpu=lots"}, "--system-reserved"},
		{[]string{"--allowed-unsafe-sysctls=kernel.msg*,not a sysctl"}, "--allowed-unsafe-sysctls"},
	} {
		o, err := parseFlags(tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want an error naming %s", tc.args, err, tc.want)
		case tc.want == "" && strings.Contains(strings.Join(tc.args, " "), "taints") && len(o.RegisterWithTaints) != 2:
			t.Errorf("%v: parsed %v", tc.args, o.RegisterWithTaints)
		}
	}
}

// --help prints the usage for main to show on stdout, and is not an error
// to exit 2 with.
func TestHelpFlag(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		_, err := parseFlags([]string{arg})
		var help helpRequested
		if !errors.As(err, &help) {
			t.Fatalf("%s: %v; want the usage", arg, err)
		}
		var out strings.Builder
		help.print(&out)
		if !strings.Contains(out.String(), "--nodename") || !strings.Contains(out.String(), "Usage:") {
			t.Errorf("%s printed %q", arg, out.String())
		}
	}
}

// The unauthenticated endpoints listen on loopback unless asked otherwise.
func TestMetricsOnLoopbackByDefault(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(o.MetricsAddr); !net.ParseIP(host).IsLoopback() {
		t.Errorf("default --metrics-addr %q is not on loopback", o.MetricsAddr)
	}
}

func TestTakenPortIsFatal(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	free := freePort(t)

	o, _ := parseFlags([]string{"--address", "127.0.0.1", "--kubelet-port", strconv.Itoa(port),
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(free)})
	if _, err := listenEarly(o); err == nil || !strings.Contains(err.Error(), "--kubelet-port") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("kubelet port taken: got %v", err)
	}

	o, _ = parseFlags([]string{"--address", "127.0.0.1", "--kubelet-port", strconv.Itoa(free),
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(port)})
	if _, err := listenEarly(o); err == nil || !strings.Contains(err.Error(), "--metrics-addr") || !strings.Contains(err.Error(), "in use") {
		t.Errorf("metrics port taken: got %v", err)
	}

	o, _ = parseFlags([]string{"--address", "127.0.0.1", "--kubelet-port", strconv.Itoa(free), "--metrics-addr", ""})
	l, err := listenEarly(o)
	if err != nil || l != nil {
		t.Errorf("metrics disabled: got listener %v, error %v", l, err)
	}
}

func TestCheckNodeNameRefusesAForeignNode(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset(
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-vk"}, Spec: v1.NodeSpec{Taints: []v1.Taint{
			{Key: "virtual-kubelet.io/provider", Value: "aci", Effect: v1.TaintEffectNoSchedule}}}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "runlet-a"}, Spec: v1.NodeSpec{Taints: []v1.Taint{
			{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}}}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "runlet-untainted",
			Annotations: map[string]string{nodeinfo.RegisteredByAnnotation: "runlet"}}},
	)
	nodes := client.CoreV1().Nodes()
	for name, ok := range map[string]bool{"worker-1": false, "other-vk": false, "runlet-a": true, "runlet-untainted": true, "new": true} {
		_, err := checkNodeName(ctx, nodes, name)
		if ok != (err == nil) {
			t.Errorf("%s: got %v", name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--nodename") {
			t.Errorf("%s: the error does not say what to change: %v", name, err)
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
