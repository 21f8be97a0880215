package images

import (
	"reflect"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func secret(name string, typ v1.SecretType, key, data string) v1.Secret {
	return v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns1"}, Type: typ, Data: map[string][]byte{key: []byte(data)}}
}

// The cases of the credential provider's Test_MakeDockerKeyring: both
// secret types, auth or username/password, and secrets that are not pull
// secrets ignored.
func TestCredentialsFromSecrets(t *testing.T) {
	user := []runtime.Credential{{Server: "test.registry.io", Username: "user", Password: "password"}}
	for _, tc := range []struct {
		name    string
		image   string
		secrets []v1.Secret
		want    []runtime.Credential
	}{
		{"with .dockerconfigjson and auth field", "test.registry.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"test.registry.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}}`)}, user},
		{"with .dockercfg and auth field", "test.registry.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeDockercfg, v1.DockerConfigKey, `{"test.registry.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}`)}, user},
		{"with .dockerconfigjson and username/password fields", "test.registry.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"test.registry.io": {"username": "user", "password": "password"}}}`)}, user},
		{"with .dockercfg and username/password fields", "test.registry.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeDockercfg, v1.DockerConfigKey, `{"test.registry.io": {"username": "user", "password": "password"}}`)}, user},
		{"wrong type is ignored", "test.registry.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeOpaque, v1.DockerConfigJsonKey, `{"auths": {"test.registry.io": {"username": "user", "password": "password"}}}`)}, []runtime.Credential{}},
		{"other registry", "quay.io/a/b:1",
			[]v1.Secret{secret("s1", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"test.registry.io": {"username": "user", "password": "password"}}}`)}, []runtime.Credential{}},
		{"docker hub for a short name", "busybox",
			[]v1.Secret{secret("s1", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"https://index.docker.io/v1/": {"username": "hub", "password": "x"}}}`)},
			[]runtime.Credential{{Server: "docker.io", Username: "hub", Password: "x"}}},
		{"most specific first, across secrets", "reg.example:5000/team/app:2", []v1.Secret{
			secret("host", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"reg.example:5000": {"username": "host", "password": "1"}}}`),
			secret("team", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": {"reg.example:5000/team": {"username": "team", "password": "2"}}}`),
		}, []runtime.Credential{{Server: "reg.example:5000", Username: "team", Password: "2"}, {Server: "reg.example:5000", Username: "host", Password: "1"}}},
	} {
		got, err := Credentials(tc.image, tc.secrets)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if _, err := Credentials("test.registry.io/a", []v1.Secret{secret("bad", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{"auths": 1}`)}); err == nil {
		t.Error("a malformed pull secret gave no error")
	}
	if _, err := Credentials("Not A Name", nil); err == nil || ValidName("Not A Name") == nil || ValidName("busybox") != nil {
		t.Error("an image name that does not parse was accepted")
	}
}

type secretMap map[string]*v1.Secret

func (m secretMap) Secret(ns, name string) (*v1.Secret, error) {
	if s, ok := m[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func TestPullSecrets(t *testing.T) {
	s := secret("a", v1.SecretTypeDockerConfigJson, v1.DockerConfigJsonKey, `{}`)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1"}, Spec: v1.PodSpec{
		ImagePullSecrets: []v1.LocalObjectReference{{Name: "a"}, {Name: ""}, {Name: "gone"}}}}
	got, missing := PullSecrets(pod, secretMap{"ns1/a": &s})
	if len(got) != 1 || got[0].Name != "a" || !reflect.DeepEqual(missing, []string{"gone"}) {
		t.Errorf("secrets %v, missing %v", got, missing)
	}
	if got, missing := PullSecrets(pod, nil); len(got) != 0 || len(missing) != 2 {
		t.Errorf("without a getter: %v, %v", got, missing)
	}
}
