package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ServiceSource lists a namespace's services (internal/objects).
type ServiceSource interface {
	List(namespace string) ([]*v1.Service, error)
}

// Services serves the services of containers' service links through the
// checkpoint.
type Services struct {
	ServiceSource
	Store *Store
}

// List returns a namespace's services: from the API online, from the
// checkpoint offline. Only what service links are made of is kept.
func (s Services) List(namespace string) ([]*v1.Service, error) {
	rel := servicesFile(namespace)
	if s.Store.Offline() {
		var list []*v1.Service
		found, err := s.Store.getObject(rel, &list)
		if err == nil && found != kept {
			err = fmt.Errorf("services of namespace %s are not in the node's checkpoint, and the apiserver has not answered yet", namespace)
		}
		return list, err
	}
	list, err := s.ServiceSource.List(namespace)
	if err != nil {
		return nil, err
	}
	kept := make([]*v1.Service, 0, len(list))
	versions := make([]string, 0, len(list))
	for _, svc := range list {
		kept = append(kept, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace},
			Spec:       v1.ServiceSpec{ClusterIP: svc.Spec.ClusterIP, ClusterIPs: svc.Spec.ClusterIPs, Ports: svc.Spec.Ports},
		})
		versions = append(versions, svc.Name+"@"+svc.ResourceVersion)
	}
	sort.Strings(versions)
	s.Store.putObject(rel, strings.Join(versions, ","), kept)
	return list, nil
}

// TokenSource hands out service account tokens (internal/token).
type TokenSource interface {
	GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	DeleteServiceAccountToken(podUID types.UID)
}

// Tokens serves pods' service account tokens through the checkpoint.
type Tokens struct {
	TokenSource
	Store *Store
}

// GetServiceAccountToken returns a token: requested from the API online;
// offline, the one the pod had, even if it expired meanwhile: its volume
// then holds what it held before, until the API hands out a new one.
func (t Tokens) GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.UID == "" {
		return t.TokenSource.GetServiceAccountToken(namespace, name, tr)
	}
	rel := tokenFile(ref.UID, tokenKey(namespace, name, tr))
	if t.Store.Offline() {
		var tok authenticationv1.TokenRequest
		found, err := t.Store.getObject(rel, &tok)
		if err == nil && found != kept {
			err = fmt.Errorf("no token of service account %s/%s in the node's checkpoint, and the apiserver has not answered yet", namespace, name)
		}
		return &tok, err
	}
	got, err := t.TokenSource.GetServiceAccountToken(namespace, name, tr)
	if err == nil {
		t.Store.putObject(rel, hashKey(got.Status.Token), &authenticationv1.TokenRequest{Spec: got.Spec, Status: got.Status})
	}
	return got, err
}

// tokenKey names one token request of a pod, as the token manager keys its cache.
func tokenKey(namespace, name string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	ref := tr.Spec.BoundObjectRef
	return fmt.Sprintf("%q/%q/%#v/%d/%s/%s/%s", namespace, name, tr.Spec.Audiences, exp, ref.Kind, ref.Name, ref.UID)
}

// TrustBundleSource reads ClusterTrustBundles' anchors (internal/trustbundle).
type TrustBundleSource interface {
	ByName(ctx context.Context, name string, allowMissing bool) ([]byte, error)
	BySigner(ctx context.Context, signer string, sel *metav1.LabelSelector, allowMissing bool) ([]byte, error)
}

// TrustBundles serves clusterTrustBundle projections through the checkpoint.
type TrustBundles struct {
	TrustBundleSource
	Store *Store
}

// ByName is a bundle's anchors; see TrustBundleSource.
func (b TrustBundles) ByName(ctx context.Context, name string, allowMissing bool) ([]byte, error) {
	return b.get(trustBundleKey(&name, nil, nil), allowMissing, func() ([]byte, error) {
		return b.TrustBundleSource.ByName(ctx, name, allowMissing)
	})
}

// BySigner is the anchors of a signer's bundles that sel picks.
func (b TrustBundles) BySigner(ctx context.Context, signer string, sel *metav1.LabelSelector, allowMissing bool) ([]byte, error) {
	return b.get(trustBundleKey(nil, &signer, sel), allowMissing, func() ([]byte, error) {
		return b.TrustBundleSource.BySigner(ctx, signer, sel, allowMissing)
	})
}

type trustBundleEntry struct {
	Key string `json:"key"`
	PEM []byte `json:"pem"`
}

func (b TrustBundles) get(key string, allowMissing bool, fromAPI func() ([]byte, error)) ([]byte, error) {
	rel := trustBundleFile(key)
	if b.Store.Offline() {
		var e trustBundleEntry
		found, err := b.Store.getObject(rel, &e)
		switch {
		case err != nil:
			return nil, err
		case found == kept:
			return e.PEM, nil
		case allowMissing:
			return []byte{}, nil
		}
		return nil, errors.New("ClusterTrustBundle " + key + " is not in the node's checkpoint, and the apiserver has not answered yet")
	}
	pem, err := fromAPI()
	if err == nil {
		b.Store.putObject(rel, pemVersion(pem), &trustBundleEntry{Key: key, PEM: pem})
	}
	return pem, err
}

// pemVersion identifies a bundle's certificates whatever their order (the
// trust bundle manager shuffles them on every call).
func pemVersion(pem []byte) string {
	blocks := strings.SplitAfter(string(pem), "-----END CERTIFICATE-----")
	sort.Strings(blocks)
	return hashKey(strings.Join(blocks, ""))
}
