#!/usr/bin/env bash
# Build the container images the real-Kubernetes lab's pods run, with podman and from local
# inputs only (no registry is reachable), and save them in one archive that containerd 1.7 takes
# with `ctr -n k8s.io images import` (docker-archive: the names are in its manifest.json RepoTags):
#   ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/kube/images/all.tar
# One archive, not one per image: the Slurm images share their Debian and Slurm layers, which a
# node then reads and unpacks once (749 MB instead of 1.8 GB; one node's import 12 s, not 27 s).
# Two images only some labs run have archives of their own, NAME.tar beside it (lab/kube/up.sh
# imports each where it is needed): mariadb (661 MB; labs with the collection's accounting
# database) and prometheus (418 MB; the lab whose tests scrape).
#
#   lab/kube/images.sh [--require-all] [NAME...]   build (all, or the NAMEs) and save
#   lab/kube/images.sh list                        print name=reference, one a line
#   lab/kube/images.sh refs all.tar|NAME.tar       print the references an archive holds
#
# Images (recipes in lab/kube/images/, written for this project from reading upstream):
#   slurmctld slurmd slurmrestd slurmdbd login
#                                       Slinky's Slurm images (their container contract, for
#                                       slurm-operator v1.2.1) from Debian forky's Slurm 26.05
#   mariadb                             the accounting database the slinky role runs (MariaDB 11.8
#                                       from Debian forky, as docker.io/library/mariadb:11.8)
#   prometheus                          a Prometheus for the tests (Debian forky's), not the collection's
#   logfile                             the Slurm pods' logfile sidecar / login initconf (the
#                                       chart's default there is docker.io/library/alpine)
#   pause                               the pod sandbox, from k8s.io/kubernetes' pause.c
#   slurm-operator slurm-operator-webhook coredns cert-manager-{controller,webhook,cainjector,
#   startupapicheck}                    the static Go binaries in $SLIME_CACHE/k8s/bin, each
#                                       with its <name>.version stamp (which gives the tag)
# An image whose binary is not built yet is skipped with a note; --require-all makes that an
# error naming the missing binaries.
#
# Cached: each image carries the label slime.lab.sum, a checksum of its recipe (Containerfile,
# every file it COPYs, its base image's id, build arguments); it is rebuilt only when that
# changes. The archive is saved once every image exists, again only when an image's id changed
# (all.tar.id).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$here/images
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}
archives=$cache/kube/images
bin=$cache/k8s/bin
K8S_VERSION=${K8S_VERSION:-v1.36.2}
prefix=localhost/slime-kube
slurm_tag=26.05-forky
label=slime.lab.sum

die() { echo "images.sh: error: $*" >&2; exit 1; }
log() { echo "images.sh: $*" >&2; }

slurm_images=(slurmctld slurmd slurmrestd slurmdbd login)
bin_images=(slurm-operator slurm-operator-webhook coredns
            cert-manager-controller cert-manager-webhook cert-manager-cainjector
            cert-manager-startupapicheck)
own_archive_images=(mariadb prometheus)
all_images=("${slurm_images[@]}" "${own_archive_images[@]}" logfile pause "${bin_images[@]}")

# --- inputs -----------------------------------------------------------------------------------
pause_dir() { echo "$cache/k8s/go/mod/k8s.io/kubernetes@$K8S_VERSION/build/pause"; }

# The pause image's tag: build/pause/Makefile's TAG (kubeadm's PauseVersion says the same).
pause_tag() {
  local mk tag
  mk=$(pause_dir)/Makefile
  [ -f "$mk" ] || return 1
  tag=$(sed -n 's/^TAG[[:space:]]*?=[[:space:]]*\([0-9.]*\)[[:space:]]*$/\1/p' "$mk")
  [ -n "$tag" ] && echo "$tag"
}

# Download k8s.io/kubernetes into the module cache when its pause sources are missing (with the
# Go environment of the tier's build scripts: tests/k8s/go-env.sh, run from the repository root).
fetch_pause_src() {
  [ -f "$(pause_dir)/linux/pause.c" ] && return 0
  log "k8s.io/kubernetes@$K8S_VERSION is not in the module cache: go mod download"
  (
    # shellcheck disable=SC2034  # here: read by go-env.sh
    here=$root
    # shellcheck source=../../tests/k8s/go-env.sh
    . "$root/tests/k8s/go-env.sh"
    go_env "the pause image"
    [ -n "$(mod_field "k8s.io/kubernetes@$K8S_VERSION" Dir)" ]
  ) || die "cannot download k8s.io/kubernetes@$K8S_VERSION for build/pause/linux/pause.c"
  [ -f "$(pause_dir)/linux/pause.c" ] || die "no $(pause_dir)/linux/pause.c in k8s.io/kubernetes@$K8S_VERSION"
}

# bin_tag NAME: the image tag from the binary's version stamp, as upstream tags its images
# (slurm-operator: 1.2.1; coredns: v1.14.7; cert-manager: v1.21.1). Fails without a stamp.
bin_tag() {
  local stamp key v
  stamp=$(cat "$bin/$1.version" 2>/dev/null) || return 1
  case $1 in
    slurm-operator*) key=slurm-operator ;;
    coredns) key=coredns ;;
    cert-manager-*) key=cert-manager ;;
  esac
  v=$(tr ' ' '\n' <<<"$stamp" | sed -n "s/^$key=\(.*\)\$/\1/p" | head -n 1)
  [ -n "$v" ] || die "$bin/$1.version ($stamp) names no $key version"
  case $1 in slurm-operator*) v=${v#v} ;; esac
  echo "$v"
}

# ref NAME: the image reference (fails when it cannot be known yet). The images the slinky role
# installs are named as a mirror of upstream's keeps them, each at its upstream path under the lab's
# registry ($prefix: the lab inventory's image_registry, docs/slinky.md): Slinky's under
# slinkyproject/, cert-manager's under jetstack/, the logfile sidecar where the chart's alpine
# is (library/alpine, tag forky: a Debian image, not alpine). The Slurm images keep their own tag
# (26.05-forky), which the inventory sets; the operator's and cert-manager's carry their charts'
# appVersion. CoreDNS and pause are the lab's own (lab/kube/manifests, node/containerd.toml).
ref() {
  local tag
  case $1 in
    slurmctld|slurmd|slurmrestd|slurmdbd|login) echo "$prefix/slinkyproject/$1:$slurm_tag" ;;
    mariadb) echo "$prefix/library/mariadb:11.8" ;;
    prometheus) echo "$prefix/prometheus:forky" ;;
    logfile) echo "$prefix/library/alpine:forky" ;;
    pause) tag=$(pause_tag) || return 1; echo "$prefix/pause:$tag" ;;
    slurm-operator*) tag=$(bin_tag "$1") || return 1; echo "$prefix/slinkyproject/$1:$tag" ;;
    cert-manager-*) tag=$(bin_tag "$1") || return 1; echo "$prefix/jetstack/$1:$tag" ;;
    *) tag=$(bin_tag "$1") || return 1; echo "$prefix/$1:$tag" ;;
  esac
}

# --- checksums and builds ---------------------------------------------------------------------
# recipe_sum CONTAINERFILE CONTEXT [EXTRA...]: checksum of the Containerfile, of every file its
# COPY lines take from CONTEXT (not --from=), and of the EXTRA strings (base ids, build args).
recipe_sum() {
  local cf=$1 ctx=$2 line f word words
  shift 2
  [ -f "$cf" ] || die "missing recipe $cf"
  {
    sha256sum <"$cf"
    while read -r line; do
      read -r -a words <<<"$line"
      case ${words[1]:-} in --from=*) continue ;; esac
      # words: COPY [--flags] SRC... DEST
      for word in "${words[@]:1:${#words[@]}-2}"; do
        case $word in --*) continue ;; esac
        f=$ctx/$word
        [ -f "$f" ] || die "missing input $f (COPY in $cf)"
        printf '%s ' "$word"; sha256sum <"$f"
      done
    done < <(grep -E '^COPY[[:space:]]' "$cf")
    printf '%s\n' "$@"
  } | sha256sum | cut -c1-16
}

image_id() { podman image inspect -f '{{.Id}}' "$1" 2>/dev/null; }
built() { podman image exists "$1" && [ "$(podman image inspect -f "{{ index .Labels \"$label\" }}" "$1" 2>/dev/null)" = "$2" ]; }

# build REF CONTAINERFILE CONTEXT [--build-arg K=V]...: build REF unless it carries the current
# recipe checksum (base images' ids count: the build args name them by reference).
build() {
  local ref=$1 cf=$2 ctx=$3 sum a id t0=$SECONDS extra=()
  shift 3
  for a in "$@"; do
    extra+=("$a")
    case $a in BASE=*|MINBASE=*)
      id=$(image_id "${a#*=}") || die "base image ${a#*=} of $ref is missing"
      extra+=("${a%%=*}-id=$id") ;;
    esac
  done
  sum=$(recipe_sum "$cf" "$ctx" "${extra[@]}")
  if built "$ref" "$sum"; then log "cached: $ref"; return 0; fi
  log "building $ref"
  local args=()
  for a in "$@"; do args+=(--build-arg "$a"); done
  podman build --pull=never -q --label "$label=$sum" "${args[@]}" -t "$ref" -f "$cf" "$ctx" >/dev/null \
    || die "podman build of $ref failed ($cf)"
  log "built $ref in $((SECONDS - t0)) s"
}

# save_archive TAR NAME...: $archives/TAR of the images NAME..., unless it holds their current names
# and ids; nothing while one of them is not built yet.
save_archive() {
  local tar=$archives/$1 n r refs=() ids
  shift
  for n in "$@"; do
    if ! r=$(ref "$n") || ! podman image exists "$r"; then log "not saved: $n not built yet"; return 0; fi
    refs+=("$r")
  done
  # the names count too: the archive carries them (a renamed image has the same id)
  ids=$({ printf '%s\n' "${refs[@]}"; podman image inspect -f '{{.Id}}' "${refs[@]}"; } | sha256sum | cut -c1-16)
  if [ -s "$tar" ] && [ "$(cat "$tar.id" 2>/dev/null)" = "$ids" ]; then return 0; fi
  rm -f "$tar.id"
  podman save -m -q --format docker-archive -o "$tar.tmp" "${refs[@]}" >/dev/null 2>&1 \
    || { rm -f "$tar.tmp"; die "podman save of ${refs[*]} failed"; }
  mv -f "$tar.tmp" "$tar"
  echo "$ids" >"$tar.id"
  log "saved $tar (${#refs[@]} images)"
}

# archive NAME: the archive that holds image NAME (NAME.tar for own_archive_images, else all.tar).
archive() { if [[ " ${own_archive_images[*]} " == *" $1 "* ]]; then echo "$1.tar"; else echo all.tar; fi; }

# save_all: all.tar of every image but own_archive_images, and NAME.tar of each of those.
save_all() {
  local n core=()
  for n in "${all_images[@]}"; do
    if [ "$(archive "$n")" = all.tar ]; then
      core+=("$n")
      rm -f "$archives/$n.tar" "$archives/$n.tar.id"   # archives of one image each that earlier versions saved
    else
      save_archive "$n.tar" "$n"
    fi
  done
  save_archive all.tar "${core[@]}"
}

# --- the images -------------------------------------------------------------------------------
minbase=
need_minbase() {
  [ -n "$minbase" ] && return 0
  [ -x "$root/lab/minbase.sh" ] || die "missing $root/lab/minbase.sh"
  minbase=$("$root/lab/minbase.sh" forky) || die "lab/minbase.sh forky failed"
}

slurm_base=
build_slurm_base() {
  [ -n "$slurm_base" ] && return 0
  need_minbase
  slurm_base=$prefix/slurm-base:$slurm_tag
  build "$slurm_base" "$src/slurm/Containerfile.base" "$src/slurm" "MINBASE=$minbase"
}

static_base=
build_static_base() {
  [ -n "$static_base" ] && return 0
  need_minbase
  static_base=$prefix/static-base:forky
  build "$static_base" "$src/static/Containerfile" "$src/static" "MINBASE=$minbase"
}

build_pause() {
  local ref=$1 dir tmp sum cflags
  fetch_pause_src
  dir=$(pause_dir)
  command -v gcc >/dev/null || die "gcc is needed to compile $dir/linux/pause.c (apt-get install gcc libc6-dev)"
  cflags="-Os -Wall -Werror -static -DVERSION=v${ref##*:}-$K8S_VERSION"
  tmp=$(mktemp -d)
  cp "$dir/linux/pause.c" "$tmp/pause.c"
  : >"$tmp/pause"   # recipe_sum wants every COPY input; the binary's source and flags count instead
  sum=$(recipe_sum "$src/pause/Containerfile" "$tmp" "cflags=$cflags" "pause.c=$(sha256sum <"$tmp/pause.c")")
  if built "$ref" "$sum"; then rm -rf "$tmp"; log "cached: $ref"; return 0; fi
  # shellcheck disable=SC2086  # cflags is a list of flags
  gcc $cflags -o "$tmp/pause" "$tmp/pause.c" || { rm -rf "$tmp"; die "gcc failed on $dir/linux/pause.c"; }
  log "building $ref"
  podman build --pull=never -q --label "$label=$sum" -t "$ref" -f "$src/pause/Containerfile" "$tmp" >/dev/null \
    || { rm -rf "$tmp"; die "podman build of $ref failed"; }
  rm -rf "$tmp"
  log "built $ref"
}

# one NAME: build image NAME (when needed).
one() {
  local name=$1 r
  case $name in
    slurmctld|slurmd|slurmrestd|slurmdbd|login)
      build_slurm_base
      r=$(ref "$name")
      build "$r" "$src/slurm/Containerfile.$name" "$src/slurm" "BASE=$slurm_base" ;;
    mariadb|prometheus)
      need_minbase
      r=$(ref "$name")
      build "$r" "$src/$name/Containerfile" "$src/$name" "MINBASE=$minbase" ;;
    logfile)
      need_minbase
      r=$(ref logfile)
      build "$r" "$src/logfile/Containerfile" "$src/logfile" "MINBASE=$minbase" ;;
    pause)
      fetch_pause_src
      r=$(ref pause) || die "cannot read TAG from $(pause_dir)/Makefile"
      build_pause "$r" ;;
    *)
      if [ ! -x "$bin/$name" ] || [ ! -s "$bin/$name.version" ]; then
        die "missing $bin/$name or its .version stamp"
      fi
      r=$(ref "$name") || die "cannot read the version of $bin/$name"
      build_static_base
      if [ "$name" = coredns ]; then
        build "$r" "$src/gobin/Containerfile.$name" "$bin" "BASE=$static_base" "MINBASE=$minbase"
      else
        build "$r" "$src/gobin/Containerfile.$name" "$bin" "BASE=$static_base"
      fi ;;
  esac
}

# --- main -------------------------------------------------------------------------------------
if [ "${1:-}" = list ]; then
  for n in "${all_images[@]}"; do
    if r=$(ref "$n"); then echo "$n=$r"; else log "$n: reference not known yet (no version stamp or source)"; fi
  done
  exit 0
fi
if [ "${1:-}" = refs ]; then
  [ $# = 2 ] || die "usage: images.sh refs all.tar|NAME.tar"
  for n in "${all_images[@]}"; do
    [ "$(archive "$n")" = "$2" ] || continue
    ref "$n" || die "$n: reference not known yet (no version stamp or source)"
  done
  exit 0
fi

require_all=0
names=()
for a in "$@"; do
  case $a in
    --require-all) require_all=1 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $a" ;;
    *) [[ " ${all_images[*]} " == *" $a "* ]] || die "unknown image $a (known: ${all_images[*]})"
       names+=("$a") ;;
  esac
done
[ ${#names[@]} -gt 0 ] || names=("${all_images[@]}")

command -v podman >/dev/null || die "podman is not installed (make deps)"
missing=()
for n in "${names[@]}"; do
  [[ " ${bin_images[*]} " == *" $n "* ]] || continue
  if [ ! -x "$bin/$n" ] || [ ! -s "$bin/$n.version" ]; then missing+=("$n"); fi
done
if [ ${#missing[@]} -gt 0 ] && [ $require_all = 1 ]; then
  die "binaries missing in $bin: ${missing[*]} (tests/k8s/k8s-test-bins.sh builds them)"
fi

mkdir -p "$archives"
t0=$SECONDS
for n in "${names[@]}"; do
  if [[ " ${missing[*]} " == *" $n "* ]]; then
    log "skipped $n: no $bin/$n (or its .version stamp) yet"
    continue
  fi
  one "$n"
done
save_all
log "done in $((SECONDS - t0)) s; archive in $archives"
