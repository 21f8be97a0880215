// Package envvars builds a container's environment as the kubelet does when
// it creates the container: envFrom, then env in order with $(VAR)
// expansion, values from configMaps, secrets, the downward API and resource
// fields, then the service links. A configMap or secret that is missing (and
// not optional) is an error naming it, which becomes the container's
// CreateContainerConfigError.
package envvars

import (
	"fmt"
	"sort"
	"strings"

	"github.com/runlet/runlet/internal/envvars/expansion"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Objects reads the API objects an environment may refer to.
type Objects interface {
	ConfigMap(namespace, name string) (*v1.ConfigMap, error)
	Secret(namespace, name string) (*v1.Secret, error)
	// Services lists the services of every namespace.
	// Services lists a namespace's services.
	Services(namespace string) ([]*v1.Service, error)
}

// Pod is what the environment may draw on besides the spec: the addresses
// the pod has on this node, and what the node offers it.
type Pod struct {
	*v1.Pod
	PodIPs  []string
	HostIPs []string
	// NodeAllocatable gives the limits of a container that sets none
	// (resourceFieldRef), as on the kubelet.
	NodeAllocatable v1.ResourceList
}

// Resolver builds environments from the API objects objs reads.
type Resolver struct {
	objs Objects
}

// NewResolver returns a resolver; objs may be nil where no API server is
// known (a pod referring to configMaps or secrets then fails to start).
func NewResolver(objs Objects) *Resolver { return &Resolver{objs: objs} }

// Env returns the container's environment, sorted by name.
func (r *Resolver) Env(pod Pod, c *v1.Container) ([]v1.EnvVar, error) {
	svc, err := r.serviceEnv(pod.Namespace, pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks)
	if err != nil {
		return nil, fmt.Errorf("listing services for the service links: %w", err)
	}
	l := lookups{r: r, ns: pod.Namespace, data: map[string]map[string]string{}}
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		if err := l.addFrom(env, from); err != nil {
			return nil, err
		}
	}
	mapping := expansion.MappingFuncFor(env, svc)
	for _, e := range c.Env {
		val, ok, err := l.value(pod, c, e, mapping)
		if err != nil {
			return nil, err
		}
		if ok {
			env[e.Name] = val
		}
	}
	for k, v := range svc {
		if _, set := env[k]; !set {
			env[k] = v
		}
	}
	out := make([]v1.EnvVar, 0, len(env))
	for k, v := range env {
		out = append(out, v1.EnvVar{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ExpandCommand expands $(VAR) in the container's command and args from its
// environment, as the kubelet does.
func ExpandCommand(c *v1.Container, env []v1.EnvVar) (command, args []string) {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	mapping := expansion.MappingFuncFor(vars)
	expand := func(in []string) []string {
		if in == nil {
			return nil
		}
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = expansion.Expand(s, mapping)
		}
		return out
	}
	return expand(c.Command), expand(c.Args)
}

// lookups reads each configMap and secret once per environment.
type lookups struct {
	r    *Resolver
	ns   string
	data map[string]map[string]string // "<Kind>/<name>" → data
}

// kind is a source of env values: configMaps and secrets differ only in
// their names and in how they are read.
type kind struct {
	name string // as the kubelet's errors spell it: "ConfigMap", "Secret"
	read func(objs Objects, ns, name string) (map[string]string, error)
}

var (
	configMapKind = kind{"ConfigMap", func(objs Objects, ns, name string) (map[string]string, error) {
		cm, err := objs.ConfigMap(ns, name)
		if err != nil {
			return nil, err
		}
		return cm.Data, nil
	}}
	secretKind = kind{"Secret", func(objs Objects, ns, name string) (map[string]string, error) {
		s, err := objs.Secret(ns, name)
		if err != nil {
			return nil, err
		}
		data := make(map[string]string, len(s.Data))
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}}
)

func (l *lookups) addFrom(env map[string]string, from v1.EnvFromSource) error {
	var data map[string]string
	var err error
	switch {
	case from.ConfigMapRef != nil:
		data, err = l.source(configMapKind, from.ConfigMapRef.Name, from.ConfigMapRef.Optional)
	case from.SecretRef != nil:
		data, err = l.source(secretKind, from.SecretRef.Name, from.SecretRef.Optional)
	}
	for k, v := range data {
		env[from.Prefix+k] = v
	}
	return err
}

// value resolves one env entry; ok is false for an optional source that
// is missing (the variable is then left out).
func (l *lookups) value(pod Pod, c *v1.Container, e v1.EnvVar, mapping func(string) string) (string, bool, error) {
	if e.Value != "" || e.ValueFrom == nil {
		return expansion.Expand(e.Value, mapping), true, nil
	}
	src := e.ValueFrom
	switch {
	case src.FieldRef != nil:
		v, err := fieldValue(pod, src.FieldRef.FieldPath)
		return v, err == nil, wrapEnv(e.Name, err)
	case src.ResourceFieldRef != nil:
		v, err := ResourceFieldValue(pod.Pod, c, src.ResourceFieldRef, pod.NodeAllocatable)
		return v, err == nil, wrapEnv(e.Name, err)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		return l.key(configMapKind, ref.Name, ref.Key, ref.Optional)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		return l.key(secretKind, ref.Name, ref.Key, ref.Optional)
	}
	return "", false, fmt.Errorf("env %s: unsupported valueFrom source", e.Name)
}

// key is one key of a configMap or secret.
func (l *lookups) key(k kind, name, key string, optional *bool) (string, bool, error) {
	data, err := l.source(k, name, optional)
	if err != nil || data == nil {
		return "", false, err
	}
	v, ok := data[key]
	if !ok && !isTrue(optional) {
		return "", false, fmt.Errorf("couldn't find key %s in %s %s/%s", key, k.name, l.ns, name)
	}
	return v, ok, nil
}

// source is a configMap's or secret's data; nil, and no error, when it is
// missing but optional.
func (l *lookups) source(k kind, name string, optional *bool) (map[string]string, error) {
	id := k.name + "/" + name
	if data, ok := l.data[id]; ok {
		return data, nil
	}
	if l.r.objs == nil {
		return nil, fmt.Errorf("couldn't get %s %s/%s: no API server to read it from", lowerFirst(k.name), l.ns, name)
	}
	data, err := k.read(l.r.objs, l.ns, name)
	if optionalMissing(err, optional) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = map[string]string{} // present but empty: not "missing"
	}
	l.data[id] = data
	return data, nil
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

func optionalMissing(err error, optional *bool) bool {
	return err != nil && apierrors.IsNotFound(err) && isTrue(optional)
}

func isTrue(b *bool) bool { return b != nil && *b }

func wrapEnv(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("env %s: %w", name, err)
}
