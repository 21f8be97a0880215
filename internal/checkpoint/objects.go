package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/internal/objects"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Namespaces and names of objects are DNS labels or subdomains: "_" never
// occurs in them, and separates the parts of a file name.
func configMapFile(ns, name string) string { return filepath.Join(configMapsDir, ns+"_"+name+".json") }
func secretFile(ns, name string) string    { return filepath.Join(secretsDir, ns+"_"+name+".json") }
func servicesFile(ns string) string        { return filepath.Join(servicesDir, ns+".json") }
func tokenFile(uid types.UID, key string) string {
	return filepath.Join(tokensDir, string(uid)+"_"+hashKey(key)+".json")
}
func trustBundleFile(key string) string { return filepath.Join(trustBundlesDir, hashKey(key)+".json") }

// hashKey names a file after a key that may hold any character.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

// indexObjects records the object files of one directory; one that fails
// its checks is refused.
func (s *Store) indexObjects(dir string) {
	for _, rel := range s.entries(dir) {
		var raw json.RawMessage
		sum, err := readEntry(filepath.Join(s.dir, rel), &raw)
		if err != nil {
			s.refuse(rel, err)
			continue
		}
		s.objects[rel] = sum
	}
}

// putObject keeps v as the object file rel, if a pod of the checkpoint
// refers to it and it changed; a nil v records that the API has no such
// object (an optional reference). version, when not empty, identifies v's
// content (a resourceVersion): the same version again costs no encoding.
func (s *Store) putObject(rel, version string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wants(rel) {
		return
	}
	if version != "" && s.versions[rel] == version {
		return
	}
	content, sum, err := encode(v)
	if err != nil {
		s.log.WithError(err).WithField("file", rel).Warn("object not checkpointed")
		return
	}
	s.versions[rel] = version
	if s.objects[rel] == sum {
		return
	}
	s.objects[rel] = sum
	s.queue(rel, content)
}

// lookup is what the checkpoint holds of one object.
type lookup int

const (
	notKept lookup = iota // the checkpoint knows nothing of it
	absent                // the API had no such object
	kept                  // read into the value asked for
)

// getObject reads the object file rel into v.
func (s *Store) getObject(rel string, v any) (lookup, error) {
	s.mu.Lock()
	_, found := s.objects[rel]
	content := s.pending[rel]
	s.mu.Unlock()
	if !found {
		return notKept, nil
	}
	var raw json.RawMessage
	var err error
	if content != nil {
		_, err = decode(content, &raw)
	} else {
		_, err = readEntry(filepath.Join(s.dir, rel), &raw)
	}
	if err == nil && string(raw) == "null" {
		return absent, nil
	}
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return notKept, fmt.Errorf("checkpoint %s: %w", rel, err)
	}
	return kept, nil
}

// wants reports whether a pod of the checkpoint refers to the object file
// rel. Call with s.mu held.
func (s *Store) wants(rel string) bool {
	if dir, name := filepath.Split(rel); filepath.Clean(dir) == tokensDir {
		uid, _, _ := strings.Cut(name, "_")
		_, ok := s.pods[types.UID(uid)]
		return ok
	}
	if s.wanted == nil {
		s.wanted = s.references()
	}
	return s.wanted.Has(rel)
}

// references are the object files the checkpoint's pods refer to, tokens
// aside. Call with s.mu held.
func (s *Store) references() sets.Set[string] {
	out := sets.New[string]()
	for _, e := range s.pods {
		pod := e.pod
		for name := range objects.ConfigMapNames(pod) {
			out.Insert(configMapFile(pod.Namespace, name))
		}
		for name := range objects.SecretNames(pod) {
			out.Insert(secretFile(pod.Namespace, name))
		}
		// The apiserver's own service is in every container's environment;
		// the namespace's services only with service links.
		out.Insert(servicesFile(metav1.NamespaceDefault))
		if pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
			out.Insert(servicesFile(pod.Namespace))
		}
		for _, vol := range pod.Spec.Volumes {
			if vol.Projected == nil {
				continue
			}
			for _, src := range vol.Projected.Sources {
				if ctb := src.ClusterTrustBundle; ctb != nil {
					out.Insert(trustBundleFile(trustBundleKey(ctb.Name, ctb.SignerName, ctb.LabelSelector)))
				}
			}
		}
	}
	return out
}

// collectGarbage drops the objects no pod of the checkpoint refers to any
// more. Call with s.mu held.
func (s *Store) collectGarbage() {
	if !s.gcDue {
		return // no pod changed since the last look
	}
	s.gcDue = false
	for rel := range s.objects {
		if !s.wants(rel) {
			delete(s.objects, rel)
			delete(s.versions, rel)
			s.queue(rel, nil)
		}
	}
}

// trustBundleKey names what a clusterTrustBundle projection asks for: a
// bundle by name, or the bundles of a signer that a selector picks.
func trustBundleKey(name *string, signer *string, sel *metav1.LabelSelector) string {
	if name != nil {
		return "name:" + *name
	}
	s := ""
	if signer != nil {
		s = *signer
	}
	b, _ := json.Marshal(sel)
	return "signer:" + s + ":" + string(b)
}

// stripped is an object without its managed fields, for the checkpoint.
func stripped(meta *metav1.ObjectMeta) metav1.ObjectMeta {
	m := *meta
	m.ManagedFields = nil
	return m
}
