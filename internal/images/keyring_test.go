/*
Copyright 2014 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// The keyring cases of k8s.io/kubernetes/pkg/credentialprovider/keyring_test.go
// (v1.37.2), without the credential hashes runlet does not keep.
package images

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestURLsMatch(t *testing.T) {
	for _, test := range []struct {
		globURL, targetURL string
		matchExpected      bool
	}{
		// match when there is no path component
		{"*.kubernetes.io", "prefix.kubernetes.io", true},
		{"prefix.*.io", "prefix.kubernetes.io", true},
		{"prefix.kubernetes.*", "prefix.kubernetes.io", true},
		{"*-good.kubernetes.io", "prefix-good.kubernetes.io", true},
		// match with path components
		{"*.kubernetes.io/blah", "prefix.kubernetes.io/blah", true},
		{"prefix.*.io/foo", "prefix.kubernetes.io/foo/bar", true},
		// match with path components and ports
		{"*.kubernetes.io:1111/blah", "prefix.kubernetes.io:1111/blah", true},
		{"prefix.*.io:1111/foo", "prefix.kubernetes.io:1111/foo/bar", true},
		// no match when number of parts mismatch
		{"*.kubernetes.io", "kubernetes.io", false},
		{"*.*.kubernetes.io", "prefix.kubernetes.io", false},
		{"*.*.kubernetes.io", "kubernetes.io", false},
		{"*kubernetes.io", "a.kubernetes.io", false},
		// match when number of parts match
		{"*kubernetes.io", "kubernetes.io", true},
		{"*.*.*.kubernetes.io", "a.b.c.kubernetes.io", true},
		// no match when some parts mismatch
		{"kubernetes.io", "kubernetes.com", false},
		{"k*.io", "quay.io", false},
		// no match when ports mismatch
		{"*.kubernetes.io:1234/blah", "prefix.kubernetes.io:1111/blah", false},
		{"prefix.*.io/foo", "prefix.kubernetes.io:1111/foo/bar", false},
	} {
		matched, _ := URLsMatchStr(test.globURL, test.targetURL)
		if matched != test.matchExpected {
			t.Errorf("Expected match result of %s and %s to be %t, but was %t",
				test.globURL, test.targetURL, test.matchExpected, matched)
		}
	}
}

// keyringFor is a keyring from one dockercfg entry of user foo, password bar.
func keyringFor(t *testing.T, url string) *BasicDockerKeyring {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte("foo:bar"))
	var cfg DockerConfig
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{%q: {"email": "foo@bar.baz", "auth": %q}}`, url, auth)), &cfg); err != nil {
		t.Fatal(err)
	}
	keyring := &BasicDockerKeyring{}
	keyring.Add(cfg)
	return keyring
}

func TestDockerKeyringForGlob(t *testing.T) {
	for i, test := range []struct{ globURL, targetURL string }{
		{"https://hello.kubernetes.io", "hello.kubernetes.io"},
		{"https://*.docker.io", "prefix.docker.io"},
		{"https://prefix.*.io", "prefix.docker.io"},
		{"https://prefix.docker.*", "prefix.docker.io"},
		{"https://*.docker.io/path", "prefix.docker.io/path"},
		{"https://prefix.*.io/path", "prefix.docker.io/path/subpath"},
		{"https://prefix.docker.*/path", "prefix.docker.io/path"},
		{"https://*.docker.io:8888", "prefix.docker.io:8888"},
		{"https://prefix.*.io:8888", "prefix.docker.io:8888"},
		{"https://prefix.docker.*:8888", "prefix.docker.io:8888"},
		{"https://*.docker.io/path:1111", "prefix.docker.io/path:1111"},
		{"https://*.docker.io/v1/", "prefix.docker.io/path:1111"},
		{"https://*.docker.io/v2/", "prefix.docker.io/path:1111"},
		{"https://prefix.docker.*/path:1111", "prefix.docker.io/path:1111"},
		{"prefix.docker.io:1111", "prefix.docker.io:1111/path"},
		{"*.docker.io:1111", "prefix.docker.io:1111/path"},
	} {
		creds, ok := keyringFor(t, test.globURL).Lookup(test.targetURL + "/foo/bar")
		if !ok {
			t.Errorf("%d: Didn't find expected URL: %s", i, test.targetURL)
			continue
		}
		if val := creds[0]; val.Username != "foo" || val.Password != "bar" || val.Email != "foo@bar.baz" {
			t.Errorf("%d: got %+v", i, val)
		}
	}
}

func TestKeyringMiss(t *testing.T) {
	for _, test := range []struct{ globURL, lookupURL string }{
		{"https://hello.kubernetes.io", "world.mesos.org/foo/bar"},
		{"https://*.docker.com", "prefix.docker.io"},
		{"https://suffix.*.io", "prefix.docker.io"},
		{"https://prefix.docker.c*", "prefix.docker.io"},
		{"https://prefix.*.io/path:1111", "prefix.docker.io/path/subpath:1111"},
		{"suffix.*.io", "prefix.docker.io"},
	} {
		if _, ok := keyringFor(t, test.globURL).Lookup(test.lookupURL + "/foo/bar"); ok {
			t.Errorf("Expected not to find URL %s, but found", test.lookupURL)
		}
	}
}

const defaultRegistryKey = defaultRegistryHost + "/v1/"

func TestKeyringDockerHub(t *testing.T) {
	keyring := keyringFor(t, "https://"+defaultRegistryKey)
	if val, ok := keyring.Lookup("world.mesos.org/foo/bar"); ok {
		t.Errorf("Found unexpected credential: %+v", val)
	}
	for _, image := range []string{"google/docker-registry", "jenkins", defaultRegistryKey + "/google/docker-registry", "docker.io/library/busybox"} {
		creds, ok := keyring.Lookup(image)
		if !ok || len(creds) != 1 || creds[0].Username != "foo" || creds[0].Password != "bar" {
			t.Errorf("%s: got %+v, %v", image, creds, ok)
		}
	}
}

func TestIsDefaultRegistryMatch(t *testing.T) {
	for image, expected := range map[string]bool{
		"foo/bar": true, "docker.io/foo/bar": true, "index.docker.io/foo/bar": true, "foo": true,
		"": false, "registry.tld/foo/bar": false, "registry:5000/foo/bar": false, "myhostdocker.io/foo/bar": false,
	} {
		if got := isDefaultRegistryMatch(image); got != expected {
			t.Errorf("Expected '%s' to be %t, got %t", image, expected, got)
		}
	}
}

func TestDockerKeyringLookup(t *testing.T) {
	ada := AuthConfig{Username: "ada", Password: "smash", Email: "ada@example.com"}
	grace := AuthConfig{Username: "grace", Password: "squash", Email: "grace@example.com"}
	dk := &BasicDockerKeyring{}
	dk.Add(DockerConfig{
		"bar.example.com/pong": DockerConfigEntry{Username: grace.Username, Password: grace.Password, Email: grace.Email},
		"bar.example.com":      DockerConfigEntry{Username: ada.Username, Password: ada.Password, Email: ada.Email},
	})
	for i, tt := range []struct {
		image string
		match []AuthConfig
		ok    bool
	}{
		// direct match
		{"bar.example.com", []AuthConfig{ada}, true},
		// direct match deeper than other possible matches
		{"bar.example.com/pong", []AuthConfig{grace, ada}, true},
		// no direct match, deeper path ignored
		{"bar.example.com/ping", []AuthConfig{ada}, true},
		// match first part of path token
		{"bar.example.com/pongz", []AuthConfig{grace, ada}, true},
		// match regardless of sub-path
		{"bar.example.com/pong/pang", []AuthConfig{grace, ada}, true},
		// no host match
		{"example.com", []AuthConfig{}, false},
		{"foo.example.com", []AuthConfig{}, false},
	} {
		match, ok := dk.Lookup(tt.image)
		if tt.ok != ok || !reflect.DeepEqual(tt.match, match) {
			t.Errorf("case %d: got %#v, %v; want %#v, %v", i, match, ok, tt.match, tt.ok)
		}
	}
}

// dockercfg entries with a scheme and a path match images that only match
// the host name.
func TestIssue3797(t *testing.T) {
	rex := AuthConfig{Username: "rex", Password: "tiny arms", Email: "rex@example.com"}
	dk := &BasicDockerKeyring{}
	dk.Add(DockerConfig{"https://quay.io/v1/": DockerConfigEntry{Username: rex.Username, Password: rex.Password, Email: rex.Email}})
	for _, image := range []string{"quay.io", "quay.io/foo", "quay.io/foo/bar"} {
		match, ok := dk.Lookup(image)
		if !ok || !reflect.DeepEqual(match, []AuthConfig{rex}) {
			t.Errorf("%s: got %#v, %v", image, match, ok)
		}
	}
}

func TestDecodeDockerConfigFieldAuth(t *testing.T) {
	for _, tc := range []struct {
		input, username, password string
		fail                      bool
	}{
		// auth field decodes to username & password
		{input: "Zm9vOmJhcg==", username: "foo", password: "bar"},
		// auth field without padding
		{input: "Zm9vOmJhcg", username: "foo", password: "bar"},
		// some test as before but with field not well padded
		{input: "Zm9vOmJhcg=", fail: true},
		// some test as before but with new line characters
		{input: "Zm9vOm\nJhcg==\n", username: "foo", password: "bar"},
		// standard encoding (with padding)
		{input: base64.StdEncoding.EncodeToString([]byte("foo:bar")), username: "foo", password: "bar"},
		// raw encoding (without padding)
		{input: base64.RawStdEncoding.EncodeToString([]byte("foo:bar")), username: "foo", password: "bar"},
		// the input is encoded with encodeDockerConfigFieldAuth (standard encoding)
		{input: encodeDockerConfigFieldAuth("foo", "bar"), username: "foo", password: "bar"},
		// good base64 data, but no colon separating username & password
		{input: "cGFudHM=", fail: true},
		// only new line characters are ignored
		{input: "Zm9vOmJhcg== ", fail: true},
		// bad base64 data
		{input: "pants", fail: true},
	} {
		username, password, err := decodeDockerConfigFieldAuth(tc.input)
		if (err != nil) != tc.fail || !tc.fail && (username != tc.username || password != tc.password) {
			t.Errorf("%q: got %q %q %v", tc.input, username, password, err)
		}
	}
}

func TestDockerConfigEntryJSONDecode(t *testing.T) {
	for _, tc := range []struct {
		input  string
		expect DockerConfigEntry
		fail   bool
	}{
		// simple case, just decode the fields
		{input: `{"username": "foo", "password": "bar", "email": "foo@example.com"}`,
			expect: DockerConfigEntry{Username: "foo", Password: "bar", Email: "foo@example.com"}},
		// auth field decodes to username & password
		{input: `{"auth": "Zm9vOmJhcg==", "email": "foo@example.com"}`,
			expect: DockerConfigEntry{Username: "foo", Password: "bar", Email: "foo@example.com"}},
		// auth field overrides username & password
		{input: `{"username": "foo", "password": "bar", "auth": "cGluZzpwb25n", "email": "foo@example.com"}`,
			expect: DockerConfigEntry{Username: "ping", Password: "pong", Email: "foo@example.com"}},
		// poorly-formatted auth causes failure
		{input: `{"auth": "pants", "email": "foo@example.com"}`, fail: true},
		// invalid JSON causes failure
		{input: `{"email": false}`, fail: true},
	} {
		var output DockerConfigEntry
		err := json.Unmarshal([]byte(tc.input), &output)
		if (err != nil) != tc.fail || !tc.fail && !reflect.DeepEqual(tc.expect, output) {
			t.Errorf("%s: got %+v, %v", tc.input, output, err)
		}
	}
}
