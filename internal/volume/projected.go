package volume

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/runlet/runlet/internal/volume/atomic"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// setUpProjected writes configMaps, secrets, downward API fields, service
// account tokens, ClusterTrustBundles' anchors and pod certificates into one directory (tmpfs), as the kubelet's
// projected plugin. Each source that fails is reported; none is written
// until all succeed.
func (m *Manager) setUpProjected(pod *v1.Pod, name string, src *v1.ProjectedVolumeSource, dir string, args mountArgs) error {
	payload, err := m.projectedPayload(pod, name, src, args)
	if err != nil {
		return err
	}
	return m.writeVolume(pod, name, v1.StorageMediumMemory, dir, payload, args)
}

func (m *Manager) projectedPayload(pod *v1.Pod, name string, src *v1.ProjectedVolumeSource, args mountArgs) (map[string]atomic.FileProjection, error) {
	defaultMode := orDefaultMode(src.DefaultMode)
	var errs []error
	payload := map[string]atomic.FileProjection{}
	add := func(p map[string]atomic.FileProjection, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		maps.Copy(payload, p)
	}
	for i, s := range src.Sources {
		switch {
		case s.Secret != nil:
			optional := isTrue(s.Secret.Optional)
			sec, err := m.secret(pod.Namespace, s.Secret.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(secretPayload(s.Secret.Items, sec, defaultMode, optional))
		case s.ConfigMap != nil:
			optional := isTrue(s.ConfigMap.Optional)
			cm, err := m.configMap(pod.Namespace, s.ConfigMap.Name, optional)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			add(configMapPayload(s.ConfigMap.Items, cm, defaultMode, optional))
		case s.DownwardAPI != nil:
			add(m.downwardAPIPayload(s.DownwardAPI.Items, pod, defaultMode))
		case s.ServiceAccountToken != nil:
			add(m.tokenPayload(pod, s.ServiceAccountToken, defaultMode, args))
		case s.ClusterTrustBundle != nil:
			add(m.trustBundlePayload(s.ClusterTrustBundle, defaultMode, args))
		case s.PodCertificate != nil:
			add(m.podCertificatePayload(pod, name, i, s.PodCertificate, defaultMode, args))
		}
	}
	return payload, utilerrors.NewAggregate(errs)
}

// trustBundlePayload is the anchors of one ClusterTrustBundle, by name, or
// of all of a signer's that match a label selector. The file is 0600 when a
// user or group will own it, as a token's.
func (m *Manager) trustBundlePayload(src *v1.ClusterTrustBundleProjection, defaultMode int32, args mountArgs) (map[string]atomic.FileProjection, error) {
	if m.cfg.TrustBundles == nil {
		return nil, errors.New("cannot get ClusterTrustBundles: no API server")
	}
	optional := isTrue(src.Optional)
	var anchors []byte
	var err error
	switch {
	case src.Name != nil:
		anchors, err = m.cfg.TrustBundles.ByName(context.Background(), *src.Name, optional)
	case src.SignerName != nil:
		anchors, err = m.cfg.TrustBundles.BySigner(context.Background(), *src.SignerName, src.LabelSelector, optional)
	default:
		err = errors.New("ClusterTrustBundle projection requires either name or signerName to be set")
	}
	if err != nil {
		return nil, err
	}
	mode := defaultMode
	if args.fsUser != nil || args.fsGroup != nil {
		mode = 0600
	}
	return map[string]atomic.FileProjection{src.Path: {Data: anchors, Mode: mode, FsUser: args.fsUser}}, nil
}

// podCertificatePayload is the key and certificate chain the pod's signer
// issued for the source, in the files it names: the credential bundle (key,
// then chain), the key, the chain. Until they are issued the volume waits,
// as on the kubelet.
func (m *Manager) podCertificatePayload(pod *v1.Pod, volume string, index int, src *v1.PodCertificateProjection, defaultMode int32, args mountArgs) (map[string]atomic.FileProjection, error) {
	if m.cfg.PodCertificates == nil {
		return nil, errors.New("cannot get pod certificates: no API server")
	}
	key, chain, err := m.cfg.PodCertificates.Credentials(pod, volume, index, src)
	if err != nil {
		return nil, err
	}
	mode := defaultMode
	if args.fsUser != nil || args.fsGroup != nil {
		mode = 0600
	}
	out := map[string]atomic.FileProjection{}
	for path, data := range map[string][]byte{src.CredentialBundlePath: append(slices.Clone(key), chain...), src.KeyPath: key, src.CertificateChainPath: chain} {
		if path != "" {
			out[path] = atomic.FileProjection{Data: data, Mode: mode, FsUser: args.fsUser}
		}
	}
	return out, nil
}

// tokenPayload is a token of the pod's service account, requested through
// the TokenRequest API and bound to the pod, so it dies with the pod. The
// file is 0600 when a user or group will own it (the fsGroup change then
// makes it 0640).
func (m *Manager) tokenPayload(pod *v1.Pod, tp *v1.ServiceAccountTokenProjection, defaultMode int32, args mountArgs) (map[string]atomic.FileProjection, error) {
	if m.cfg.Tokens == nil {
		return nil, errors.New("cannot get service account tokens: no API server")
	}
	mode := defaultMode
	if args.fsUser != nil || args.fsGroup != nil {
		mode = 0600
	}
	var auds []string
	if tp.Audience != "" {
		auds = []string{tp.Audience}
	}
	tr, err := m.cfg.Tokens.GetServiceAccountToken(pod.Namespace, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         auds,
			ExpirationSeconds: tp.ExpirationSeconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
			},
		},
	})
	if err != nil {
		return nil, err
	}
	return map[string]atomic.FileProjection{
		tp.Path: {Data: []byte(tr.Status.Token), Mode: mode, FsUser: args.fsUser},
	}, nil
}
