// Package images is what the kubelet does around an image pull: the pod's
// pull secrets turned into registry credentials (the credential provider's
// docker keyring), and pulls that run apart from the pods waiting for them.
package images

import (
	"encoding/json"
	"fmt"

	"github.com/distribution/reference"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// SecretGetter reads a secret (envvars.APIObjects is one).
type SecretGetter interface {
	Secret(namespace, name string) (*v1.Secret, error)
}

// PullSecrets returns the pod's imagePullSecrets that could be read, and the
// names of those that could not, as the kubelet's getPullSecretsForPod: a
// missing secret does not stop the pull, which may still work without it.
// The ServiceAccount's imagePullSecrets are already in the pod: the API
// server's ServiceAccount admission copies them there when the pod is
// created, and the kubelet reads only the pod's.
func PullSecrets(pod *v1.Pod, get SecretGetter) (secrets []v1.Secret, missing []string) {
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue // API validation let empty names through once; ignore them as the kubelet does
		}
		var s *v1.Secret
		var err error
		if get != nil {
			s, err = get.Secret(pod.Namespace, ref.Name)
		}
		if get == nil || err != nil || s == nil {
			missing = append(missing, ref.Name)
			continue
		}
		secrets = append(secrets, *s)
	}
	return secrets, missing
}

// MakeKeyring builds a keyring from the secrets of type
// kubernetes.io/dockerconfigjson (.dockerconfigjson) and the legacy
// kubernetes.io/dockercfg (.dockercfg); other secrets are ignored. It is
// the credential provider's secretsToTrackedDockerConfigs.
func MakeKeyring(secrets []v1.Secret) (*BasicDockerKeyring, error) {
	keyring := &BasicDockerKeyring{}
	for _, s := range secrets {
		if b := s.Data[v1.DockerConfigJsonKey]; s.Type == v1.SecretTypeDockerConfigJson && len(b) > 0 {
			var cfg DockerConfigJSON
			if err := json.Unmarshal(b, &cfg); err != nil {
				return nil, fmt.Errorf("pull secret %s/%s: %w", s.Namespace, s.Name, err)
			}
			keyring.Add(cfg.Auths)
		} else if b := s.Data[v1.DockerConfigKey]; s.Type == v1.SecretTypeDockercfg && len(b) > 0 {
			var cfg DockerConfig
			if err := json.Unmarshal(b, &cfg); err != nil {
				return nil, fmt.Errorf("pull secret %s/%s: %w", s.Namespace, s.Name, err)
			}
			keyring.Add(cfg)
		}
	}
	return keyring, nil
}

// Credentials returns what to try, in order, to pull image with the
// secrets: every keyring entry that matches the image's repository (as the
// kubelet's parsers.ParseImageName normalises it: "busybox" is
// "docker.io/library/busybox"), the most specific first. None means an
// anonymous pull.
func Credentials(image string, secrets []v1.Secret) ([]runtime.Credential, error) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil, fmt.Errorf("couldn't parse image name %q: %v", image, err)
	}
	keyring, err := MakeKeyring(secrets)
	if err != nil {
		return nil, err
	}
	auths, _ := keyring.Lookup(named.Name())
	out := make([]runtime.Credential, 0, len(auths))
	for _, a := range auths {
		out = append(out, runtime.Credential{Server: reference.Domain(named), Username: a.Username, Password: a.Password})
	}
	return out, nil
}

// ValidName checks an image name as the kubelet's applyDefaultImageTag does
// before anything else: a name that does not parse is InvalidImageName.
func ValidName(image string) error {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("couldn't parse image name %q: %v", image, err)
	}
	return nil
}
