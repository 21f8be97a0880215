package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

const configHead = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func writeConfig(t *testing.T, dir, name, body string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(configHead+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFilePrecedence(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "config.yaml", "maxPods: 50\nclusterDNS: [10.96.0.10]\nport: 10400\nevictionHard: {memory.available: 1Gi}\n"+
		"registerWithTaints: []\nrotateCertificates: false\ncontainerLogMaxSize: 20Mi\nauthentication: {webhook: {enabled: false}}\n")
	dropins := filepath.Join(dir, "conf.d")
	if err := os.Mkdir(dropins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, dropins, "20-b.conf", "port: 10500\n")
	writeConfig(t, dropins, "10-a.conf", "port: 10450\nmaxPods: 70\n")
	for _, tc := range []struct {
		name  string
		args  []string
		check func(o *options) bool
	}{
		{"file over defaults", []string{"--config", file}, func(o *options) bool {
			return o.MaxPods == 50 && o.KubeletPort == 10400 && o.RegisterWithTaints == nil && !o.RotateCertificates && o.ContainerLogMaxSize == 20<<20 &&
				!o.AuthWebhook && o.PodSyncWorkers == 10 && reflect.DeepEqual(o.EvictionHard, map[string]string{"memory.available": "1Gi"})
		}},
		{"flags over the file", []string{"--config", file, "--max-pods=60", "--cluster-dns=10.0.0.2", "--eviction-hard=", "--authentication-token-webhook"}, func(o *options) bool {
			return o.MaxPods == 60 && o.KubeletPort == 10400 && len(o.ClusterDNS) == 1 && o.ClusterDNS[0].Equal(net.ParseIP("10.0.0.2")) &&
				len(o.EvictionHard) == 0 && o.AuthWebhook
		}},
		{"drop-ins in order over the file", []string{"--config", file, "--config-dir", dropins}, func(o *options) bool {
			return o.MaxPods == 70 && o.KubeletPort == 10500
		}},
		{"flags over the drop-ins", []string{"--config-dir", dropins, "--kubelet-port=10600"}, func(o *options) bool {
			return o.MaxPods == 70 && o.KubeletPort == 10600
		}},
	} {
		o, err := parseFlags(append([]string{"--nodename", "n"}, tc.args...))
		if err != nil || !tc.check(o) {
			t.Errorf("%s: %+v, %v", tc.name, o, err)
		}
	}
}

func TestConfigFileWarningsAndErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeConfig(t, dir, "config.yaml", "maxPods: 5\ncgroupDriver: systemd\ncpuManagerPolicy: static\nmaxPodz: 1\n")
	o, err := parseFlags([]string{"--nodename", "n", "--config", file, "--bootstrap-serving-cert"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--bootstrap-serving-cert is deprecated: use --rotate-server-certificates",
		"--config " + file + `: unknown field "maxPodz"`,
		"KubeletConfiguration fields runlet does not honour: cgroupDriver, cpuManagerPolicy",
	}
	if !reflect.DeepEqual(o.warnings, want) || !o.BootstrapServingCert {
		t.Errorf("warnings %q, want %q", o.warnings, want)
	}
	bad := writeConfig(t, dir, "bad.yaml", "evictionHard: {memory.available: lots}\n")
	if _, err := parseFlags([]string{"--nodename", "n", "--config", bad}); err == nil || !strings.HasPrefix(err.Error(), "--config "+bad+": evictionHard: ") {
		t.Errorf("bad value: error %v", err)
	}
}

// TestConfigRoundTrip writes the effective configuration of flags that
// set every honoured field, reads it back as --config, and expects the
// same configuration: each field is mapped both ways.
func TestConfigRoundTrip(t *testing.T) {
	o, err := parseFlags([]string{"--nodename", "n", "--address=10.1.2.3", "--kubelet-port=10500", "--tls-cert-file=/c", "--tls-private-key-file=/k",
		"--rotate-server-certificates", "--client-ca-file=/ca", "--authentication-token-webhook=false",
		"--authorization-mode=AlwaysAllow", "--event-qps=7", "--event-burst=8", "--cluster-domain=c.local", "--cluster-dns=10.0.0.10,10.0.0.11",
		"--image-gc-high-threshold=90", "--image-gc-low-threshold=70", "--max-pods=33", "--pod-cidr=10.244.0.0/24", "--pod-max-pids=100",
		"--resolv-conf=", "--kube-api-qps=9", "--kube-api-burst=10", "--eviction-hard=memory.available<2Gi", "--eviction-pressure-transition-period=1m",
		"--container-log-max-size=1Gi", "--container-log-max-files=3", "--system-reserved=cpu=1", "--kube-reserved=memory=1Gi",
		"--allowed-unsafe-sysctls=kernel.msg*", "--seccomp-default", "--register-with-taints=a=b:NoExecute", "--pod-manifest-path=/m",
		"--manifest-url=http://x/", "--manifest-url-header=X-A:1"})
	if err != nil {
		t.Fatal(err)
	}
	want := effectiveConfig(o)
	want.APIVersion, want.Kind = kubeletv1beta1.SchemeGroupVersion.String(), "KubeletConfiguration"
	data, _ := json.Marshal(want)
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := parseFlags([]string{"--nodename", "n", "--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.warnings) != 0 {
		t.Errorf("warnings %q", back.warnings)
	}
	got := effectiveConfig(back)
	got.TypeMeta = want.TypeMeta
	if gj, _ := json.Marshal(got); string(gj) != string(data) {
		t.Errorf("read back\n%s\nwant\n%s", gj, data)
	}
}
