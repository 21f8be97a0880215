#!/bin/bash
# Build the upstream e2e suite of k8s.io/kubernetes v1.37.2 from the wrapper module hack/conformance/mod:
#   e2e.test  `go test -c k8s.io/kubernetes/test/e2e`, with the control plane's version stamp
#   ginkgo    the ginkgo CLI (parallel runs)
#   agnhost   the e2e test server (goes into the agnhost image)
# into ~/.cache/runlet/conformance-v1.37.2/bin. Each is skipped when present; one build per cache at a
# time. e2e.test takes about 4 min with the control plane's Go caches warm (8 min cold) on 2 cores.
# Usage: build.sh [e2e.test|ginkgo|agnhost]...   (default: all three). Progress on stderr.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LD=$(k8s_ldflags)

build_one() { # NAME
  local name=$1 out=$CONF_BIN_DIR/$1 mod t0
  [ -x "$out" ] && return 0
  mod=$(conf_module)
  mkdir -p "$CONF_BIN_DIR"
  t0=$(date +%s)
  case $name in
    e2e.test)
      log "building e2e.test ($CP_K8S_VERSION; ~4 min warm, ~8 min cold)"
      ( cd "$mod" && conf_go test -c -trimpath -ldflags="$LD" -o "$out.tmp" k8s.io/kubernetes/test/e2e ) ;;
    ginkgo)
      ( cd "$mod" && conf_go build -o "$out.tmp" github.com/onsi/ginkgo/v2/ginkgo ) ;;
    agnhost)
      ( cd "$mod" && conf_go build -trimpath -ldflags="-s -w" -o "$out.tmp" k8s.io/kubernetes/test/images/agnhost ) ;;
    *) die "unknown binary $name (e2e.test, ginkgo, agnhost)" ;;
  esac
  mv -f "$out.tmp" "$out"
  log "built $name in $(( $(date +%s) - t0 ))s"
}

build_all() { for b in "$@"; do build_one "$b"; done; }

want=("${@:-e2e.test}")
[ $# -eq 0 ] && want=(e2e.test ginkgo agnhost)
missing=(); for b in "${want[@]}"; do [ -x "$CONF_BIN_DIR/$b" ] || missing+=("$b"); done
[ ${#missing[@]} -eq 0 ] || with_lock build build_all "${missing[@]}"
echo "$CONF_BIN_DIR"
