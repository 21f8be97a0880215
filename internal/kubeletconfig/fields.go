package kubeletconfig

import (
	"reflect"
	"sort"
	"strings"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Has says whether the files set the field at path, a dotted JSON path
// such as "maxPods" or "authentication.webhook.enabled", zero or not.
func (c *Config) Has(path string) bool {
	_, ok := c.lookup(path)
	return ok
}

func (c *Config) lookup(path string) (any, bool) {
	var v any = c.raw
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// Unhonoured lists the fields the files set to a non-zero value that are
// not in honoured (dotted paths), so that runlet can name them once at
// start. An object part of whose fields are honoured is named field by
// field (authentication.anonymous.enabled), any other by its own name.
func (c *Config) Unhonoured(honoured []string) []string {
	leaf, inner := map[string]bool{}, map[string]bool{}
	for _, h := range honoured {
		leaf[h] = true
		for i := range h {
			if h[i] == '.' {
				inner[h[:i]] = true
			}
		}
	}
	var out []string
	for _, k := range sortedKeys(c.raw) {
		if known[k] { // unknown fields are warned about as such
			out = unhonoured(out, k, c.raw[k], leaf, inner)
		}
	}
	sort.Strings(out)
	return out
}

// known are the top-level fields of a v1beta1 KubeletConfiguration, bar
// apiVersion and kind.
var known = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[kubeletv1beta1.KubeletConfiguration]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" {
			m[name] = true
		}
	}
	return m
}()

func unhonoured(out []string, path string, v any, leaf, inner map[string]bool) []string {
	if leaf[path] || isZero(v) {
		return out
	}
	m, ok := v.(map[string]any)
	if !ok || !inner[path] {
		return append(out, path)
	}
	for _, k := range sortedKeys(m) {
		out = unhonoured(out, path+"."+k, m[k], leaf, inner)
	}
	return out
}

// isZero is the "not set" of a field in the files: false, 0, "", a zero
// duration or quantity ("0s", "0": kubeadm writes them), null, or an empty
// list or object, or an object of such values only.
func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case string:
		return v == "" || v == "0s" || v == "0"
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, e := range v {
			if !isZero(e) {
				return false
			}
		}
		return true
	}
	return false
}
