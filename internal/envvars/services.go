package envvars

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// serviceEnv is the kubelet's service links: the services of the pod's
// namespace when enabled, and always the API server's own service.
func (r *Resolver) serviceEnv(ns string, links bool) (map[string]string, error) {
	env := map[string]string{}
	if r.objs == nil {
		return env, nil
	}
	all, err := r.objs.Services(metav1.NamespaceDefault)
	if err != nil {
		return nil, err
	}
	if links && ns != metav1.NamespaceDefault {
		own, err := r.objs.Services(ns)
		if err != nil {
			return nil, err
		}
		all = append(all, own...)
	}
	chosen := map[string]*v1.Service{}
	for _, s := range all {
		if !serviceIPSet(s) || len(s.Spec.Ports) == 0 {
			continue
		}
		master := s.Namespace == metav1.NamespaceDefault && s.Name == "kubernetes"
		if _, taken := chosen[s.Name]; master && !taken {
			chosen[s.Name] = s
		} else if s.Namespace == ns && links {
			chosen[s.Name] = s
		}
	}
	for _, s := range chosen {
		addServiceVars(env, s)
	}
	return env, nil
}

func serviceIPSet(s *v1.Service) bool {
	return s.Spec.ClusterIP != v1.ClusterIPNone && s.Spec.ClusterIP != ""
}

// addServiceVars adds NAME_SERVICE_HOST, NAME_SERVICE_PORT[_PORTNAME] and
// the Docker link variables, as the kubelet's envvars.FromServices.
func addServiceVars(env map[string]string, s *v1.Service) {
	prefix := envName(s.Name)
	ip := s.Spec.ClusterIP
	env[prefix+"_SERVICE_HOST"] = ip
	env[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for i, sp := range s.Spec.Ports {
		if sp.Name != "" {
			env[prefix+"_SERVICE_PORT_"+envName(sp.Name)] = strconv.Itoa(int(sp.Port))
		}
		proto := string(v1.ProtocolTCP)
		if sp.Protocol != "" {
			proto = string(sp.Protocol)
		}
		url := fmt.Sprintf("%s://%s", strings.ToLower(proto), net.JoinHostPort(ip, strconv.Itoa(int(sp.Port))))
		if i == 0 {
			env[prefix+"_PORT"] = url
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, sp.Port, strings.ToUpper(proto))
		env[pp] = url
		env[pp+"_PROTO"] = strings.ToLower(proto)
		env[pp+"_PORT"] = strconv.Itoa(int(sp.Port))
		env[pp+"_ADDR"] = ip
	}
}

func envName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
