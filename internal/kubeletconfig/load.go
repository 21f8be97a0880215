package kubeletconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/runlet/runlet/internal/eviction"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// Config is the KubeletConfiguration the files set, merged.
type Config struct {
	// KubeletConfiguration holds the merged values; a field the files did
	// not set is zero here (see Has).
	*kubeletv1beta1.KubeletConfiguration
	// Warnings name fields a file has that v1beta1 does not know, or has
	// twice: the kubelet decodes strictly and falls back to lenient
	// decoding with a warning, and so does runlet.
	Warnings []string
	// raw is the merged JSON: it tells a field set to its zero value
	// from one left out, which the typed struct cannot.
	raw map[string]any
	// origin names the file that last set each top-level field, for errors.
	origin map[string]string
}

// Load reads file (empty: none) and then every *.conf file under dir
// (empty: none) in lexical order, each merged over the ones before as a
// JSON merge patch (RFC 7386), as the kubelet's mergeKubeletConfigurations.
func Load(file, dir string) (*Config, error) {
	c := &Config{raw: map[string]any{}, origin: map[string]string{}}
	if file != "" {
		if err := c.add(file, "--config "+file, true); err != nil {
			return nil, err
		}
		c.mergeDefaultEviction()
	}
	if dir != "" {
		c.seedEvictionHard()
		files, err := dropins(dir)
		if err != nil {
			return nil, fmt.Errorf("--config-dir %s: %w", dir, err)
		}
		for _, f := range files {
			if err := c.add(f, "--config-dir "+f, false); err != nil {
				return nil, err
			}
		}
	}
	data, err := json.Marshal(c.raw)
	if err != nil {
		return nil, err
	}
	c.KubeletConfiguration = &kubeletv1beta1.KubeletConfiguration{}
	if err := json.Unmarshal(data, c.KubeletConfiguration); err != nil {
		return nil, err // each file decoded on its own already
	}
	return c, c.validate()
}

// add decodes one file and merges it over what c has. Relative paths in
// the --config file are relative to that file (the kubelet's
// resolveRelativePaths); the kubelet leaves those of drop-ins alone.
func (c *Config) add(path, label string, resolve bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	if len(data) == 0 {
		return fmt.Errorf("%s: the file is empty", label)
	}
	m, err := decode(data)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	warnings, err := decodeStrict(data, m)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	for _, w := range warnings {
		c.Warnings = append(c.Warnings, label+": "+w)
	}
	if resolve {
		resolvePaths(m, filepath.Dir(path))
	}
	c.raw = mergePatch(c.raw, m)
	for k := range m {
		c.origin[k] = label
	}
	return nil
}

// decode reads YAML or JSON into a map and checks apiVersion and kind.
func decode(data []byte) (map[string]any, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a KubeletConfiguration object")
	}
	want := kubeletv1beta1.SchemeGroupVersion.String()
	if m["apiVersion"] != want || m["kind"] != "KubeletConfiguration" {
		return nil, fmt.Errorf("apiVersion %v, kind %v: expected apiVersion %s, kind KubeletConfiguration",
			quoted(m["apiVersion"]), quoted(m["kind"]), want)
	}
	return m, nil
}

func quoted(v any) string {
	if v == nil {
		return "(none)"
	}
	return fmt.Sprintf("%q", fmt.Sprint(v))
}

var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := kubeletv1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// decodeStrict decodes data with apimachinery's strict decoder: unknown
// and duplicate fields come back as warnings; a value of the wrong type or
// form (a bad duration) is an error naming its field.
func decodeStrict(data []byte, m map[string]any) ([]string, error) {
	_, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err == nil {
		return nil, nil
	}
	if strict, ok := runtime.AsStrictDecodingError(err); ok {
		var w []string
		for _, e := range strict.Errors() {
			w = append(w, e.Error())
		}
		return w, nil
	}
	return nil, badField(m, err)
}

// badField finds the top-level field whose value does not decode: the
// decoder's own error does not always name it (a bad duration, say).
func badField(m map[string]any, err error) error {
	keys := sortedKeys(m)
	for _, k := range keys {
		one, _ := json.Marshal(map[string]any{k: m[k]})
		if ferr := json.Unmarshal(one, &kubeletv1beta1.KubeletConfiguration{}); ferr != nil {
			return fmt.Errorf("%s: %w", k, ferr)
		}
	}
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pathFields are the kubelet's KubeletConfigurationPathRefs that runlet reads.
var pathFields = [][]string{{"staticPodPath"}, {"tlsCertFile"}, {"tlsPrivateKeyFile"}, {"resolvConf"},
	{"authentication", "x509", "clientCAFile"}}

func resolvePaths(m map[string]any, root string) {
	for _, p := range pathFields {
		parent := m
		for _, k := range p[:len(p)-1] {
			parent, _ = parent[k].(map[string]any)
		}
		last := p[len(p)-1]
		if s, ok := parent[last].(string); ok && s != "" && !filepath.IsAbs(s) {
			parent[last] = filepath.Join(root, s)
		}
	}
}

// mergeDefaultEviction is the kubelet's mergeDefaultEvictionSettings: the
// --config file's evictionHard keeps the defaults it does not name.
func (c *Config) mergeDefaultEviction() {
	hard, ok := c.raw["evictionHard"].(map[string]any)
	if merge, _ := c.raw["mergeDefaultEvictionSettings"].(bool); !ok || !merge {
		return
	}
	for k, v := range eviction.DefaultEvictionHard {
		if _, set := hard[k]; !set {
			hard[k] = v
		}
	}
}

// seedEvictionHard gives drop-ins the kubelet's base to merge over: its
// drop-ins patch the defaulted configuration, so one evictionHard key
// changes that threshold and keeps the default others.
func (c *Config) seedEvictionHard() {
	if _, ok := c.raw["evictionHard"]; ok {
		return
	}
	hard := map[string]any{}
	for k, v := range eviction.DefaultEvictionHard {
		hard[k] = v
	}
	c.raw["evictionHard"] = hard
	c.origin["evictionHard"] = "the default evictionHard"
}
