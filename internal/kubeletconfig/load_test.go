package kubeletconfig

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

// write makes the files of a test under a temporary directory: "config"
// is the --config file, names under "d/" are drop-ins.
func write(t *testing.T, files map[string]string) (file, dir string) {
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := files["config"]; ok {
		file = filepath.Join(root, "config")
	}
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err == nil {
		dir = filepath.Join(root, "d")
	}
	return file, dir
}

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		check func(t *testing.T, c *Config)
	}{{
		name:  "file only",
		files: map[string]string{"config": head + "maxPods: 50\naddress: 10.0.0.1\nrotateCertificates: false\n"},
		check: func(t *testing.T, c *Config) {
			if c.MaxPods != 50 || c.Address != "10.0.0.1" || !c.Has("maxPods") || !c.Has("rotateCertificates") || c.Has("port") {
				t.Errorf("got %+v", c.KubeletConfiguration)
			}
		},
	}, {
		name: "drop-ins in lexical order over the file",
		files: map[string]string{
			"config":          head + "maxPods: 50\nclusterDomain: a.local\n",
			"d/20-b.conf":     head + "maxPods: 70\n",
			"d/10-a.conf":     head + "maxPods: 60\nport: 10400\n",
			"d/30-skip.yaml":  head + "maxPods: 99\n",
			"d/sub/40-c.conf": head + "clusterDomain: c.local\n",
		},
		check: func(t *testing.T, c *Config) {
			if c.MaxPods != 70 || c.Port != 10400 || c.ClusterDomain != "c.local" {
				t.Errorf("got maxPods %d, port %d, clusterDomain %q", c.MaxPods, c.Port, c.ClusterDomain)
			}
		},
	}, {
		name: "a drop-in merges into maps and null removes",
		files: map[string]string{
			"config":      head + "systemReserved: {cpu: 100m, memory: 1Gi}\nmaxPods: 5\n",
			"d/10-a.conf": head + "systemReserved: {memory: 2Gi}\nmaxPods: null\nevictionHard: {memory.available: 1Gi}\n",
		},
		check: func(t *testing.T, c *Config) {
			if want := map[string]string{"cpu": "100m", "memory": "2Gi"}; !reflect.DeepEqual(c.SystemReserved, want) || c.Has("maxPods") {
				t.Errorf("systemReserved %v, maxPods set %v", c.SystemReserved, c.Has("maxPods"))
			}
			// The kubelet's drop-ins patch the defaulted evictionHard.
			if c.EvictionHard["memory.available"] != "1Gi" || c.EvictionHard["nodefs.available"] != "10%" {
				t.Errorf("evictionHard %v", c.EvictionHard)
			}
		},
	}, {
		name:  "zero values are set; relative paths follow the file",
		files: map[string]string{"config": head + "registerWithTaints: []\nresolvConf: \"\"\nstaticPodPath: manifests\n"},
		check: func(t *testing.T, c *Config) {
			if !c.Has("registerWithTaints") || !c.Has("resolvConf") || *c.ResolverConfig != "" || !filepath.IsAbs(c.StaticPodPath) {
				t.Errorf("got %+v", c.KubeletConfiguration)
			}
		},
	}, {
		name:  "unknown field is a warning naming it",
		files: map[string]string{"config": head + "maxPods: 5\nmaxPodz: 6\n"},
		check: func(t *testing.T, c *Config) {
			if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `unknown field "maxPodz"`) || c.MaxPods != 5 {
				t.Errorf("warnings %q, maxPods %d", c.Warnings, c.MaxPods)
			}
		},
	}, {
		name:  "mergeDefaultEvictionSettings keeps the defaults not named",
		files: map[string]string{"config": head + "mergeDefaultEvictionSettings: true\nevictionHard: {memory.available: 1Gi}\n"},
		check: func(t *testing.T, c *Config) {
			if c.EvictionHard["memory.available"] != "1Gi" || c.EvictionHard["imagefs.available"] != "15%" {
				t.Errorf("evictionHard %v", c.EvictionHard)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			file, dir := write(t, tc.files)
			if !strings.Contains(tc.name, "drop-in") {
				dir = ""
			}
			c, err := Load(file, dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, config, want string
	}{
		{"missing file", "", "--config /nonexistent/config: open /nonexistent/config"},
		{"not yaml", "a: b: c", "not YAML"},
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n",
			`kind "KubeProxyConfiguration": expected apiVersion kubelet.config.k8s.io/v1beta1, kind KubeletConfiguration`},
		{"no apiVersion", "maxPods: 5\n", "apiVersion (none), kind (none): expected"},
		{"bad duration", head + "evictionPressureTransitionPeriod: soon\n", "evictionPressureTransitionPeriod: time: invalid duration"},
		{"wrong type", head + "maxPods: many\n", "maxPods: "},
		{"bad quantity", head + "evictionHard: {memory.available: lots}\n", "evictionHard: "},
		{"bad IP", head + "clusterDNS: [10.96.0.10, dns]\n", `clusterDNS: [1]: "dns" is not an IP address`},
		{"bad enum", head + "authorization: {mode: RBAC}\n", `authorization.mode: "RBAC" is not one of Webhook, AlwaysAllow`},
		{"bad log size", head + "containerLogMaxSize: 0\n", "containerLogMaxSize: "},
		{"bad taint", head + "registerWithTaints: [{key: a, effect: Sometimes}]\n", "registerWithTaints: [0]: effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "/nonexistent/config"
			if tc.config != "" {
				file, _ = write(t, map[string]string{"config": tc.config})
			}
			_, err := Load(file, "")
			if err == nil || !strings.HasPrefix(err.Error(), "--config "+file+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one naming the file and %q", err, tc.want)
			}
		})
	}
}

func TestDropinErrorNamesItsFile(t *testing.T) {
	_, dir := write(t, map[string]string{"d/10-a.conf": head + "port: 0\n"})
	_, err := Load("", dir)
	if want := "--config-dir " + filepath.Join(dir, "10-a.conf") + ": port: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v; want prefix %q", err, want)
	}
}

func TestUnhonoured(t *testing.T) {
	file, _ := write(t, map[string]string{"config": head + `
maxPods: 5
cgroupDriver: systemd
cpuManagerPolicy: none
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: true, cacheTTL: 1m}
  x509: {clientCAFile: /ca.crt}
`})
	c, err := Load(file, "")
	if err != nil {
		t.Fatal(err)
	}
	got := c.Unhonoured([]string{"maxPods", "authentication.webhook.enabled", "authentication.x509.clientCAFile"})
	want := []string{"authentication.anonymous", "authentication.webhook.cacheTTL", "cgroupDriver", "cpuManagerPolicy"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unhonoured %q, want %q", got, want)
	}
}

func TestConfigz(t *testing.T) {
	h, err := Handler(&kubeletv1beta1.KubeletConfiguration{MaxPods: 7})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/configz", nil))
	var got map[string]map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	kc := got["kubeletconfig"]
	if kc["kind"] != "KubeletConfiguration" || kc["apiVersion"] != "kubelet.config.k8s.io/v1beta1" || kc["maxPods"] != 7.0 {
		t.Errorf("configz %s", rec.Body)
	}
}
