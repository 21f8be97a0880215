#!/bin/bash
# Build stand-ins for the e2e test images of k8s.io/kubernetes v1.37.2 (test/utils/image/manifest.go)
# without any registry, and import them into podman's local storage under the exact names the e2e
# specs use. Nothing is pulled: rootfs trees are assembled from an upstream busybox built from source
# (Debian's source package, without Debian's patches), binaries compiled from the k8s.io/kubernetes
# module (agnhost, nonewprivs, pause.c) and k8s.io/sample-apiserver, the control plane's etcd, and
# Debian binaries plus the shared libraries ldd reports (bash, curl, dig, getent, ipc-utils, glibc
# hostname, nginx). Work dirs live under
# ~/.cache/runlet/conformance-v1.37.2/images; an image already in podman is skipped.
#
# Usage: images.sh [image ...]   images: busybox pause agnhost nonroot nonewprivs kitten nautilus
#                                        ipc-utils glibc-dns-testing nginx sample-apiserver
#                                        etcd (default: all)
# Env:   CONF_REBUILD_IMAGES=1 rebuilds images that exist. Progress on stderr.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
W=$CONF_CACHE/images/work
KSRC=$(go env GOMODCACHE)/k8s.io/kubernetes@$CP_K8S_VERSION
PODMAN=(podman --runtime runc)
REG=registry.k8s.io/e2e-test-images
DEFPATH='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# ---------- helpers ----------
# mk_busybox_root DIR : rootfs laid out like docker.io/library/busybox (all applets hard-linked in /bin)
mk_busybox_root() {
  local d=$1; rm -rf "$d"; mkdir -p "$d"/{bin,etc,home,root,tmp,usr/sbin,usr/bin,usr/local/bin,var/spool/mail,var/www,dev,proc,sys}
  chmod 1777 "$d/tmp"; chmod 700 "$d/root"
  local bb; bb=$(upstream_busybox)
  cp "$bb" "$d/bin/busybox"
  for a in $("$bb" --list); do [ "$a" = busybox ] || ln "$d/bin/busybox" "$d/bin/$a"; done
  cat > "$d/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
  cat > "$d/etc/group" <<'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
EOF
  printf 'hosts: files dns\n' > "$d/etc/nsswitch.conf"
}
# upstream_busybox: path of a static busybox built from upstream's source with its defconfig, as the
# images' busybox is. Debian's busybox-static will not do: its ash runs its own applets before anything
# on PATH, drops environment variables whose names are not shell identifiers (`data-1`, a patch of
# Debian's), and bash in its place words errors differently from ash ("can't create /file: …").
upstream_busybox() {
  local dir=$CONF_CACHE/images/busybox-src out=$CONF_CACHE/images/busybox-src/busybox
  [ -x "$out" ] && { echo "$out"; return; }
  log "building busybox from source (once, about 3 min)"
  rm -rf "$dir"; mkdir -p "$dir/lists/partial" "$dir/parts" "$dir/cache"
  # the source package through a sources list of our own: the host's apt config stays as it is
  printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    >"$dir/parts/src.sources"
  local apt=(apt-get -qq -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$dir/parts"
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" -o APT::Sandbox::User=root)
  "${apt[@]}" update >&2
  ( cd "$dir" && "${apt[@]}" source --download-only busybox >&2 )
  local tars=("$dir"/busybox_*.orig.tar.bz2)
  tar -C "$dir" -xjf "${tars[0]}"
  local srcs=("$dir"/busybox-*/) src; src=${srcs[0]}
  # defconfig, static; tc does not build against current kernel headers (no CBQ)
  make -C "$src" -s defconfig >"$dir/defconfig.log" 2>&1
  sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/; s/^CONFIG_TC=y/# CONFIG_TC is not set/' "$src/.config"
  make -C "$src" -s -j"$(nproc)" busybox >"$dir/build.log" 2>&1 || die "busybox build failed: $dir/build.log"
  cp "$src/busybox" "$out.tmp"; mv "$out.tmp" "$out"
  echo "$out"
}
# add_dyn ROOT SRC [DEST] : copy an ELF binary plus every shared library ldd reports (same paths; a
# static binary has none)
add_dyn() {
  local root=$1 src=$2 dest=${3:-$2}
  mkdir -p "$root$(dirname "$dest")"; cp -L "$src" "$root$dest"
  { ldd "$src" 2>/dev/null || true; } | awk '/=> \//{print $3} /^[ \t]*\/lib/{print $1}' | while read -r lib; do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"
  done
}
# import_root ROOT NAME [--change ...]... : tar the tree and `podman import` it under NAME
import_root() {
  local root=$1 name=$2; shift 2
  local old; old=$("${PODMAN[@]}" image inspect --format '{{.Id}}' "$name" 2>/dev/null || true)
  tar --numeric-owner -C "$root" -cf - . | "${PODMAN[@]}" import -q "$@" - "$name" >/dev/null
  # drop the previous build of this name if nothing else references it (never -f: no container removal)
  if [ -n "$old" ]; then "${PODMAN[@]}" rmi "$old" >/dev/null 2>&1 || true; fi
  log "imported $name ($(du -sh "$root" | cut -f1))"
}
# add_fake_registry ROOT : ROOT/var/registry/pause/{manifests,blobs} in the layout fakeregistryserver reads
add_fake_registry() {
  local root=$1 oci=$W/pause-oci
  "${PODMAN[@]}" image exists registry.k8s.io/pause:3.10.2 || build_pause
  rm -rf "$oci"; "${PODMAN[@]}" push -q registry.k8s.io/pause:3.10.2 "oci:$oci:pause" >/dev/null
  python3 - "$oci" "$root/var/registry/pause" <<'PY'
import hashlib, json, os, shutil, sys
oci, dst = sys.argv[1], sys.argv[2]
def put(base, digest, data):
    algo, h = digest.split(':'); d = os.path.join(base, algo, h[:2], h); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, 'data'), 'wb').write(data)
idx = json.load(open(os.path.join(oci, 'index.json')))
mdig = idx['manifests'][0]['digest']
man = json.load(open(os.path.join(oci, 'blobs', *mdig.split(':'))))
for b in [man['config']] + man['layers']:
    put(os.path.join(dst, 'blobs'), b['digest'], open(os.path.join(oci, 'blobs', *b['digest'].split(':')), 'rb').read())
# fakeregistryserver takes Content-Type from the manifest's mediaType field: make sure it is there
man = {'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.manifest.v1+json', **{k: v for k, v in man.items() if k != 'schemaVersion'}}
raw = json.dumps(man, separators=(',', ':')).encode()
dig = 'sha256:' + hashlib.sha256(raw).hexdigest()
put(os.path.join(dst, 'manifests'), dig, raw)
open(os.path.join(dst, 'manifests', 'testing'), 'w').write(dig + '\n')
print('fake registry: pause:testing ->', dig, file=sys.stderr)
PY
  chmod -R a+rX "$root/var/registry"
}
gobuild() { # OUT PKG
  local mod; mod=$(conf_module)
  ( cd "$mod" && conf_go build -trimpath -ldflags='-s -w' -o "$1" "$2" )
}

# add_dns_tools ROOT : the host's dig (bind9-dnsutils) and glibc getent with their libraries. The DNS
# specs' queriers run `dig +search …` and `getent hosts …` in agnhost (alpine: bind-tools, musl-utils)
# and in glibc-dns-testing (Debian: dnsutils, libc-bin); glibc 2.36's getent has the files and dns
# lookups built in.
add_dns_tools() {
  command -v dig >/dev/null || die "dig is missing (apt-get install bind9-dnsutils; hack/conformance/run.sh does)"
  add_dyn "$1" "$(command -v dig)" /usr/bin/dig
  add_dyn "$1" "$(command -v getent)" /usr/bin/getent
}

# ---------- images ----------
build_base() { mk_busybox_root "$W/busybox-root"; }

build_busybox() { # registry.k8s.io/e2e-test-images/busybox:1.37.0-2 == FROM busybox:1.37.0 (CMD ["sh"])
  [ -d "$W/busybox-root" ] || build_base
  import_root "$W/busybox-root" $REG/busybox:1.37.0-2 --change "ENV $DEFPATH" --change 'CMD ["sh"]'
}

# add_deb_bin ROOT PKG BIN DEST : a binary of a Debian package (downloaded, not installed) plus its libraries
add_deb_bin() {
  local root=$1 pkg=$2 bin=$3 dest=$4 deb=$CONF_CACHE/images/debs x=$W/$2-deb
  if ! ls "$deb/${pkg}"_*.deb >/dev/null 2>&1; then mkdir -p "$deb"; ( cd "$deb" && apt-get download -qq -o APT::Sandbox::User=root "$pkg" ); fi
  local debs=("$deb/${pkg}"_*.deb)
  rm -rf "$x"; mkdir -p "$x"; dpkg-deb -x "${debs[0]}" "$x"
  add_dyn "$root" "$x$bin" "$dest"
}

build_agnhost() { # alpine + agnhost; ENTRYPOINT ["/agnhost"] CMD ["pause"]
  local r=$W/agnhost-root
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"
  bash "$CONF_HACK_DIR/build.sh" agnhost >/dev/null
  cp "$CONF_BIN_DIR/agnhost" "$r/agnhost"; ln -s agnhost "$r/agnhost-2"
  mkdir -p "$r/uploads"
  cp "$KSRC/test/images/agnhost/porter/localhost.crt" "$KSRC/test/images/agnhost/porter/localhost.key" "$r/"
  chmod 644 "$r/localhost.crt" "$r/localhost.key"
  # alpine's apk packages in the real image: bash, curl (nc/ip/ss/wget come from busybox here)
  add_dyn "$r" /usr/bin/bash /bin/bash
  add_dyn "$r" /usr/bin/curl /usr/bin/curl
  # the real image's bind-tools dig and musl's getent
  add_dns_tools "$r"
  # alpine's busybox nc speaks UDP (`nc -w 1 -u`, the networking specs); OpenBSD's nc does it the same way
  rm -f "$r/bin/nc"; add_deb_bin "$r" netcat-openbsd /bin/nc.openbsd /usr/bin/nc
  # /var/registry: content for `agnhost fake-registry-server` (the real image crane-copies
  # registry.k8s.io/pause:3.10.2 there as pause:testing; here it is built from the local pause image)
  add_fake_registry "$r"
  # user/group the real image creates (SupplementalGroups tests)
  echo 'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >> "$r/etc/passwd"
  echo 'user-defined-in-image:x:1000:' >> "$r/etc/group"
  echo 'group-defined-in-image:x:50000:user-defined-in-image' >> "$r/etc/group"
  mkdir -p "$r/home/user-defined-in-image"; chown 1000:1000 "$r/home/user-defined-in-image"
  # the base's release file (alpine:3.21, test/images/agnhost/BASEIMAGE), which kitten and nautilus
  # inherit: the ImageVolume spec reads it through the mounted image
  printf 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.21.3\nPRETTY_NAME="Alpine Linux v3.21"\nHOME_URL="https://alpinelinux.org/"\nBUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"\n' \
    >"$r/etc/os-release"
  import_root "$r" $REG/agnhost:2.66.1 --change "ENV $DEFPATH" \
    --change 'EXPOSE 80' --change 'EXPOSE 8080' --change 'EXPOSE 8081' --change 'EXPOSE 9376' --change 'EXPOSE 5000' --change 'ENTRYPOINT ["/agnhost"]' --change 'CMD ["pause"]'
  # AgnhostPrev (2.55) is used by a few Conformance specs (pod lifecycle image update, statefulset fixtures)
  local old; old=$("${PODMAN[@]}" image inspect --format '{{.Id}}' "$REG/agnhost:2.55" 2>/dev/null || true)
  if [ -n "$old" ]; then "${PODMAN[@]}" untag "$old" "$REG/agnhost:2.55" || true; fi
  "${PODMAN[@]}" tag "$REG/agnhost:2.66.1" "$REG/agnhost:2.55"
  if [ -n "$old" ]; then "${PODMAN[@]}" rmi "$old" >/dev/null 2>&1 || true; fi
  log "tagged $REG/agnhost:2.55 (same content as 2.66.1)"
}

build_pause() { # registry.k8s.io/pause:3.10.2: FROM scratch, static pause.c, USER 65535:65535
  local r=$W/pause-root; rm -rf "$r"; mkdir -p "$r"
  gcc -Os -Wall -Werror -static -DVERSION=v3.10.2-0 -o "$r/pause" "$KSRC/build/pause/linux/pause.c"
  strip "$r/pause"
  import_root "$r" registry.k8s.io/pause:3.10.2 --change 'USER 65535:65535' --change 'ENTRYPOINT ["/pause"]'
}

build_nonroot() { # debian-base + USER 1234 (here: busybox root)
  [ -d "$W/busybox-root" ] || build_base
  import_root "$W/busybox-root" $REG/nonroot:1.5 --change "ENV $DEFPATH" --change 'USER 1234'
}

build_nonewprivs() { # alpine + setuid /usr/local/bin/nnp, CMD ["nnp"]
  local r=$W/nonewprivs-root
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"
  gobuild "$r/usr/local/bin/nnp" k8s.io/kubernetes/test/images/nonewprivs
  chmod 4755 "$r/usr/local/bin/nnp"
  import_root "$r" $REG/nonewprivs:1.4 --change "ENV $DEFPATH" --change 'CMD ["nnp"]'
}

build_webimg() { # kitten/nautilus: FROM agnhost; COPY html/X.jpg, data.json; CMD ["test-webserver"]
  local n=$1 r=$W/$1-root
  [ -d "$W/agnhost-root" ] || build_agnhost
  rm -rf "$r"; cp -a "$W/agnhost-root" "$r"
  cp "$KSRC/test/images/$n/html/$n.jpg" "$KSRC/test/images/$n/html/data.json" "$r/"; chmod 644 "$r/$n.jpg" "$r/data.json"
  import_root "$r" "$REG/$n:1.8" --change "ENV $DEFPATH" \
    --change 'EXPOSE 80' --change 'EXPOSE 8080' --change 'EXPOSE 8081' --change 'EXPOSE 9376' --change 'EXPOSE 5000' --change 'ENTRYPOINT ["/agnhost"]' --change 'CMD ["test-webserver"]'
}

build_sample_apiserver() { # alpine + /sample-apiserver (test/images/sample-apiserver), ENTRYPOINT ["/sample-apiserver"]
  local r=$W/sample-apiserver-root
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"
  # k8s.io/sample-apiserver of the control plane's version (the wrapper module pins it), where upstream's
  # 1.29.2 image holds that release's: the spec checks the aggregation of a wardle.example.com server,
  # not its age
  log "building sample-apiserver (once, about 2 min)"
  gobuild "$r/sample-apiserver" k8s.io/sample-apiserver
  import_root "$r" $REG/sample-apiserver:1.29.2 --change "ENV $DEFPATH" --change 'ENTRYPOINT ["/sample-apiserver"]'
}

build_etcd() { # registry.k8s.io/etcd:3.7.0-0: distroless + /usr/local/bin/etcd{,ctl}; here the control plane's etcd
  local r=$W/etcd-root b
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"; mkdir -p "$r/usr/local/bin" "$r/var/etcd"
  for b in etcd etcdctl; do
    [ -x "$CP_BIN_DIR/$b" ] || die "$CP_BIN_DIR/$b is missing (make cp builds it)"
    add_dyn "$r" "$CP_BIN_DIR/$b" /usr/local/bin/$b
  done
  import_root "$r" registry.k8s.io/etcd:3.7.0-0 --change "ENV $DEFPATH"
}

build_ipcutils() { # alpine + util-linux (ipcmk/ipcs/ipcrm): here Debian's util-linux binaries
  local r=$W/ipc-utils-root
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"
  for b in ipcs ipcmk ipcrm; do add_dyn "$r" /usr/bin/$b; done
  import_root "$r" $REG/ipc-utils:1.4 --change "ENV $DEFPATH" --change 'CMD ["sh"]'
}

build_glibcdns() { # debian:bookworm-slim + dnsutils: here busybox root + Debian's glibc `hostname` (hostname -f), dig, getent
  local r=$W/glibc-dns-testing-root
  [ -d "$W/busybox-root" ] || build_base
  rm -rf "$r"; cp -a "$W/busybox-root" "$r"
  rm -f "$r/bin/hostname"; add_dyn "$r" /bin/hostname /bin/hostname
  add_dns_tools "$r" # dnsutils' dig and libc-bin's getent: the DNS specs' glibc querier
  import_root "$r" $REG/glibc-dns-testing:2.1.1 --change "ENV $DEFPATH" --change 'CMD ["sh"]'
}

build_nginx() { # nginx:1.27-alpine stand-in: Debian bookworm nginx 1.22.1 binary + libs on a busybox root
  local r=$W/nginx-root deb=$CONF_CACHE/images/debs x=$W/nginx-deb
  [ -d "$W/busybox-root" ] || build_base
  if ! ls "$deb"/nginx_*.deb >/dev/null 2>&1; then mkdir -p "$deb"; ( cd "$deb" && apt-get download -qq -o APT::Sandbox::User=root nginx nginx-common ); fi
  rm -rf "$x" "$r"; mkdir -p "$x"; for f in "$deb"/nginx_*.deb "$deb"/nginx-common_*.deb; do dpkg-deb -x "$f" "$x"; done
  cp -a "$W/busybox-root" "$r"
  # the binary's shared libs come from the host (same Debian 12 release as the .deb)
  mkdir -p "$r/usr/sbin"; cp "$x/usr/sbin/nginx" "$r/usr/sbin/nginx"
  ldd "$x/usr/sbin/nginx" | awk '/=> \//{print $3} /^[ \t]*\/lib/{print $1}' | while read -r lib; do
    mkdir -p "$r$(dirname "$lib")"; [ -e "$r$lib" ] || cp -L "$lib" "$r$lib"; done
  mkdir -p "$r/etc/nginx/conf.d" "$r/usr/share/nginx/html" "$r/var/log/nginx" "$r/var/lib/nginx" "$r/var/cache/nginx" "$r/run"
  cp "$x/etc/nginx/mime.types" "$r/etc/nginx/mime.types"
  ln -sf /dev/stdout "$r/var/log/nginx/access.log"; ln -sf /dev/stderr "$r/var/log/nginx/error.log"
  echo 'nginx:x:101:101:nginx:/var/cache/nginx:/sbin/nologin' >> "$r/etc/passwd"
  echo 'nginx:x:101:nginx' >> "$r/etc/group"
  cat > "$r/etc/nginx/nginx.conf" <<'EOF'
user  nginx;
worker_processes  auto;
error_log  /var/log/nginx/error.log notice;
pid        /run/nginx.pid;
events { worker_connections 1024; }
http {
    include       /etc/nginx/mime.types;
    default_type  application/octet-stream;
    access_log  /var/log/nginx/access.log;
    sendfile        on;
    keepalive_timeout  65;
    include /etc/nginx/conf.d/*.conf;
}
EOF
  cat > "$r/etc/nginx/conf.d/default.conf" <<'EOF'
server {
    listen       80;
    listen  [::]:80;
    server_name  localhost;
    location / {
        root   /usr/share/nginx/html;
        index  index.html index.htm;
    }
    error_page   500 502 503 504  /50x.html;
    location = /50x.html { root   /usr/share/nginx/html; }
}
EOF
  printf '<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n</body>\n</html>\n' > "$r/usr/share/nginx/html/index.html"
  printf '<!DOCTYPE html>\n<html><body><h1>An error occurred.</h1></body></html>\n' > "$r/usr/share/nginx/html/50x.html"
  for t in 1.27.0-2 1.28.0-2; do
    import_root "$r" $REG/nginx:$t --change "ENV $DEFPATH" --change 'EXPOSE 80' --change 'STOPSIGNAL SIGQUIT' \
      --change 'CMD ["nginx", "-g", "daemon off;"]'
  done
}

# the names each build produces: a build is skipped when all of them are in podman
names() {
  case $1 in
    busybox) echo $REG/busybox:1.37.0-2;; pause) echo registry.k8s.io/pause:3.10.2;;
    agnhost) echo $REG/agnhost:2.66.1 $REG/agnhost:2.55;; nonroot) echo $REG/nonroot:1.5;;
    nonewprivs) echo $REG/nonewprivs:1.4;; kitten|nautilus) echo "$REG/$1:1.8";;
    ipc-utils) echo $REG/ipc-utils:1.4;; glibc-dns-testing) echo $REG/glibc-dns-testing:2.1.1;;
    nginx) echo $REG/nginx:1.27.0-2 $REG/nginx:1.28.0-2;;
    sample-apiserver) echo $REG/sample-apiserver:1.29.2;; etcd) echo registry.k8s.io/etcd:3.7.0-0;;
    *) die "unknown image $1";;
  esac
}
# images built by another version of this script are rebuilt
RECIPE=$(sha256sum "$0" | cut -c1-16) STAMP=$CONF_CACHE/images/recipe
present() {
  [ "$(cat "$STAMP" 2>/dev/null)" = "$RECIPE" ] || return 1
  local n; for n in $(names "$1"); do "${PODMAN[@]}" image exists "$n" || return 1; done
}
build() {
  case $1 in
    busybox) build_busybox;; agnhost) build_agnhost;; pause) build_pause;;
    nonroot) build_nonroot;; nonewprivs) build_nonewprivs;; kitten|nautilus) build_webimg "$1";;
    ipc-utils) build_ipcutils;; glibc-dns-testing) build_glibcdns;; nginx) build_nginx;;
    sample-apiserver) build_sample_apiserver;; etcd) build_etcd;;
  esac
}
build_missing() {
  mkdir -p "$W"
  build_base # the busybox root every image starts from: cheap, and always fresh
  local stale=0
  [ "$(cat "$STAMP" 2>/dev/null)" = "$RECIPE" ] || stale=1
  for i in "$@"; do
    if [ "${CONF_REBUILD_IMAGES:-0}" = 1 ] || ! present "$i"; then build "$i"; fi
  done
  # a new recipe is recorded once every image was rebuilt with it
  if [ $stale = 0 ] || [ "$*" = "$ALL" ]; then echo "$RECIPE" >"$STAMP"; fi
}

ALL="busybox pause agnhost nonroot nonewprivs kitten nautilus ipc-utils glibc-dns-testing nginx sample-apiserver etcd"
if [ $# -gt 0 ]; then want=("$@"); else read -ra want <<<"$ALL"; fi
todo=()
for i in "${want[@]}"; do
  if [ "${CONF_REBUILD_IMAGES:-0}" = 1 ] || ! present "$i"; then todo+=("$i"); fi
done
# a new recipe rebuilds every image, not only the ones asked for
[ "$(cat "$STAMP" 2>/dev/null)" = "$RECIPE" ] || read -ra todo <<<"$ALL"
[ ${#todo[@]} -eq 0 ] || with_lock images build_missing "${todo[@]}"
log "e2e test images present: $(for i in "${want[@]}"; do names "$i"; done | wc -w)"
