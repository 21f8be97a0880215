package ocispec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// userRootfs has the users and groups the cases below resolve.
func userRootfs(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	_ = os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/passwd", "# users\nroot:x:0:0:root:/root:/bin/sh\nwww:x:33:33::/var/www:/bin/false\napp:x:1000:1001::/home/app:/bin/sh\n")
	write("etc/group", "root:x:0:\nwww:x:33:app\napp:x:1001:\nstaff:x:50:app,other\nvideo:x:44:\n")
	return root
}

func TestUser(t *testing.T) {
	root := userRootfs(t)
	for _, tc := range []struct {
		name      string
		sec       runtime.SecurityConfig
		imageUser string
		uid, gid  uint32
		groups    []uint32
	}{
		{"an image without a user runs as root", runtime.SecurityConfig{}, "", 0, 0, []uint32{0}},
		{"the image's named user, with its group and memberships", runtime.SecurityConfig{}, "app", 1000, 1001, []uint32{1001, 33, 50}},
		{"the image's user and group by name", runtime.SecurityConfig{}, "app:video", 1000, 44, []uint32{44, 33, 50}},
		{"the image's numeric user and group", runtime.SecurityConfig{}, "1000:7", 1000, 7, []uint32{7, 33, 50}},
		{"a numeric user the image does not know: group root", runtime.SecurityConfig{}, "4242", 4242, 0, []uint32{0}},
		{"runAsUser over the image's user, with the passwd group",
			runtime.SecurityConfig{RunAsUser: ptr(int64(33))}, "app", 33, 33, []uint32{33}},
		{"runAsUser and runAsGroup", runtime.SecurityConfig{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000))}, "", 1000, 2000, []uint32{2000, 33, 50}},
		{"runAsGroup on the image's named user (the core's Username)",
			runtime.SecurityConfig{Username: "app", RunAsGroup: ptr(int64(5))}, "app", 1000, 5, []uint32{5, 33, 50}},
		{"supplemental groups come last, each once",
			runtime.SecurityConfig{RunAsUser: ptr(int64(1000)), SupplementalGroups: []int64{3000, 50, 3000}}, "", 1000, 1001, []uint32{1001, 33, 50, 3000}},
	} {
		u, err := processUser(root, tc.sec, tc.imageUser)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if u.UID != tc.uid || u.GID != tc.gid || !reflect.DeepEqual(u.AdditionalGids, tc.groups) {
			t.Errorf("%s: %d:%d %v; want %d:%d %v", tc.name, u.UID, u.GID, u.AdditionalGids, tc.uid, tc.gid, tc.groups)
		}
	}
}

func TestUserErrors(t *testing.T) {
	root := userRootfs(t)
	for _, tc := range []struct {
		name, imageUser, want string
		sec                   runtime.SecurityConfig
	}{
		{"unknown user", "nobody", "unable to find user nobody", runtime.SecurityConfig{}},
		{"unknown group", "app:wheel", "unable to find group wheel", runtime.SecurityConfig{}},
		{"a group out of range", "", "out of range", runtime.SecurityConfig{RunAsGroup: ptr(int64(-1))}},
	} {
		if _, err := processUser(root, tc.sec, tc.imageUser); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if _, err := processUser(t.TempDir(), runtime.SecurityConfig{}, "app"); err == nil {
		t.Error("a named user in an image without /etc/passwd: no error")
	}
	if u, err := processUser(t.TempDir(), runtime.SecurityConfig{}, "12:34"); err != nil || u.UID != 12 || u.GID != 34 {
		t.Errorf("numeric IDs without /etc/passwd: %+v, %v; want 12:34", u, err)
	}
}

// TestUserDBStaysInRoot: an image's /etc/passwd that links to the host's
// file is not read through.
func TestUserDBStaysInRoot(t *testing.T) {
	root, host := t.TempDir(), t.TempDir()
	_ = os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	_ = os.WriteFile(filepath.Join(host, "passwd"), []byte("hostonly:x:77:77::/:/bin/sh\n"), 0o644)
	if err := os.Symlink(filepath.Join(host, "passwd"), filepath.Join(root, "etc/passwd")); err != nil {
		t.Fatal(err)
	}
	if u, err := processUser(root, runtime.SecurityConfig{}, "hostonly"); err == nil {
		t.Errorf("resolved the host's user through a symbolic link: %+v", u)
	}
}

// The spec carries the resolved user.
func TestBuildUser(t *testing.T) {
	in := base()
	in.Rootfs, in.Image.User = userRootfs(t), "app"
	if u := build(t, in).Process.User; u.UID != 1000 || u.GID != 1001 {
		t.Errorf("user %+v; want app, 1000:1001", u)
	}
	in.Image.User = "ghost"
	if _, err := Build(in); err == nil {
		t.Error("an unknown image user built a spec")
	}
}
