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

	"github.com/runlet/runlet/internal/envvars/expansion"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Objects reads the API objects an environment may refer to.
type Objects interface {
	ConfigMap(namespace, name string) (*v1.ConfigMap, error)
	Secret(namespace, name string) (*v1.Secret, error)
	// Services lists the services of every namespace.
	Services() ([]*v1.Service, error)
}

// Pod is what the environment may draw on besides the spec: the addresses
// the pod has on this node.
type Pod struct {
	*v1.Pod
	PodIPs  []string
	HostIPs []string
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
	l := lookups{r: r, ns: pod.Namespace, configMaps: map[string]*v1.ConfigMap{}, secrets: map[string]*v1.Secret{}}
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
	r          *Resolver
	ns         string
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
}

func (l *lookups) addFrom(env map[string]string, from v1.EnvFromSource) error {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := l.configMap(from.ConfigMapRef.Name)
		if optionalMissing(err, from.ConfigMapRef.Optional) {
			return nil
		}
		if err != nil {
			return err
		}
		for k, v := range cm.Data {
			env[from.Prefix+k] = v
		}
	case from.SecretRef != nil:
		s, err := l.secret(from.SecretRef.Name)
		if optionalMissing(err, from.SecretRef.Optional) {
			return nil
		}
		if err != nil {
			return err
		}
		for k, v := range s.Data {
			env[from.Prefix+k] = string(v)
		}
	}
	return nil
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
		v, err := resourceValue(pod.Pod, c, src.ResourceFieldRef)
		return v, err == nil, wrapEnv(e.Name, err)
	case src.ConfigMapKeyRef != nil:
		return l.configMapKey(src.ConfigMapKeyRef)
	case src.SecretKeyRef != nil:
		return l.secretKey(src.SecretKeyRef)
	}
	return "", false, fmt.Errorf("env %s: unsupported valueFrom source", e.Name)
}

func (l *lookups) configMapKey(ref *v1.ConfigMapKeySelector) (string, bool, error) {
	cm, err := l.configMap(ref.Name)
	if optionalMissing(err, ref.Optional) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	v, ok := cm.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, l.ns, ref.Name)
	}
	return v, ok, nil
}

func (l *lookups) secretKey(ref *v1.SecretKeySelector) (string, bool, error) {
	s, err := l.secret(ref.Name)
	if optionalMissing(err, ref.Optional) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	v, ok := s.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, l.ns, ref.Name)
	}
	return string(v), ok, nil
}

func (l *lookups) configMap(name string) (*v1.ConfigMap, error) {
	if cm, ok := l.configMaps[name]; ok {
		return cm, nil
	}
	if l.r.objs == nil {
		return nil, fmt.Errorf("couldn't get configMap %s/%s: no API server to read it from", l.ns, name)
	}
	cm, err := l.r.objs.ConfigMap(l.ns, name)
	if err == nil {
		l.configMaps[name] = cm
	}
	return cm, err
}

func (l *lookups) secret(name string) (*v1.Secret, error) {
	if s, ok := l.secrets[name]; ok {
		return s, nil
	}
	if l.r.objs == nil {
		return nil, fmt.Errorf("couldn't get secret %s/%s: no API server to read it from", l.ns, name)
	}
	s, err := l.r.objs.Secret(l.ns, name)
	if err == nil {
		l.secrets[name] = s
	}
	return s, err
}

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
