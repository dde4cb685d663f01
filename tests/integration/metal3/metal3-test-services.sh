#!/usr/bin/env bash
# Test doubles for the Metal3 side of slime.hybrid, on this host, without KVM:
#   - sushy-tools' Redfish emulator with its FAKE systems driver (no libvirt), HTTP basic
#     auth, on 127.0.0.1:$METAL3_REDFISH_PORT (plain HTTP, eight systems) and
#     127.0.0.1:$METAL3_REDFISH_TLS_PORT (HTTPS with a self-signed certificate, one system);
#   - a fake IPMI BMC (pyghmi's server side, tests/integration/metal3/fake_ipmi_bmc.py) on
#     UDP 127.0.0.1:$METAL3_IPMI_PORT;
#   - a standalone Ironic $IRONIC_VERSION from PyPI in its own venv (the all-in-one `ironic` command:
#     API and conductor in one process, rpc_transport=none), noauth, sqlite, on
#     127.0.0.1:$METAL3_IRONIC_PORT. Not Debian 12's Ironic 21.4: its API stops at 1.81 and
#     baremetal-operator v0.13.2 requires 1.89 or newer (pkg/provisioner/ironic/clients/features.go,
#     `baseline = 89`) and uses up to 1.110; Ironic 35.0.0 serves 1.111.
#
# Usage: tests/integration/metal3/metal3-test-services.sh install|up|down|status
#   install install what is missing (as up does) and start nothing
#   up      install what is missing (apt: ipmitool, curl, openssl; pip: sushy-tools and pyghmi
#           into one venv, Ironic into another, FakeIPA into a third), start what is not running,
#           wait until it answers, write
#           $state/endpoints.json (addresses, systems, test credentials) for the tests
#   down    stop what `up` started (pid files under $state/run) and nothing else
#   status  say what runs
#
# Idempotent; everything lives under ${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/metal3
# (logs in logs/). Run as root on Debian 12 (no systemd needed: the package scripts are
# kept from starting services, and the processes run in the background here).
set -euo pipefail

here=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${SLIME_CACHE:-$HOME/.cache/slime-hybrid}/metal3
venv=$cache/venv
# What one set of services runs on and writes (pids, logs, configurations, Ironic's database, the
# config drives): METAL3_STATE_DIR, by default the cache itself; another directory and other ports
# (METAL3_*_PORT) run a second set beside the first (the kube-faults lane's, beside the Metal3 tier's).
# The installed software (venvs, sources) and the BMC password are shared.
state=${METAL3_STATE_DIR:-$cache}
# METAL3_BMCS_ONLY=1: `up` starts the BMCs and the HTTP server only, no Ironic and no FakeIPA (the BMC
# preflight tests of make integration talk to the BMCs alone).
BMCS_ONLY=${METAL3_BMCS_ONLY:-0}
run=$state/run
logs=$state/logs
SUSHY_TOOLS_VERSION=${SUSHY_TOOLS_VERSION:-2.2.0}
PYGHMI_VERSION=${PYGHMI_VERSION:-1.6.19}
IRONIC_VERSION=${IRONIC_VERSION:-35.0.0}
ironic_venv=$state/ironic-venv
# Metal3's FakeIPA (metal3-io/utility-images fake-ipa/, not on PyPI): answers Ironic as the
# ironic-python-agent of the deploy ramdisk would (lookup, heartbeats, deploy and clean steps),
# booted by the sushy-tools fake driver's external notifier when a system is powered on.
FAKE_IPA_REF=${FAKE_IPA_REF:-ff1d62e}
FAKE_IPA_TARBALL=${FAKE_IPA_TARBALL:-${SLIME_VENDOR_DIR:-$here/../shared/vendor}/src/fake-ipa-utility-images-$FAKE_IPA_REF.tar.gz}
fipa_venv=$state/fake-ipa-venv
FAKE_IPA_PORT=${METAL3_FAKE_IPA_PORT:-9999}
REDFISH_PORT=${METAL3_REDFISH_PORT:-8001}
REDFISH_TLS_PORT=${METAL3_REDFISH_TLS_PORT:-8002}
IRONIC_PORT=${METAL3_IRONIC_PORT:-6385}
IPMI_PORT=${METAL3_IPMI_PORT:-6230}
HTTP_PORT=${METAL3_HTTP_PORT:-8088}
# Ironic's [api]ramdisk_heartbeat_timeout (default 300): the agent heartbeats every 0.3-0.6 x this
# and Ironic moves on to the next step only at a heartbeat, so a short one keeps each deploy short.
HEARTBEAT_TIMEOUT=${METAL3_HEARTBEAT_TIMEOUT:-20}
IPMI_POWER=on
ADDR=127.0.0.1
BMC_USER="admin"

log() { echo "metal3-test-services: $*"; }
die() { echo "metal3-test-services: ERROR: $*" >&2; exit 1; }

# Fixed systems of the fake driver: uuid name power_state mac (the TLS emulator gets the last).
SYSTEMS=(
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000001 bm-redfish-0 On 52:54:00:6c:3c:01"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000002 bm-redfish-1 Off 52:54:00:6c:3c:02"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000003 bm-redfish-2 Off 52:54:00:6c:3c:03"
  # one per vendor scheme of baremetal-operator (molecule/metal3: each enrolled by the operator)
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000004 bm-redfish-3 Off 52:54:00:6c:3c:04"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000005 bm-redfish-4 On 52:54:00:6c:3c:05"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000006 bm-redfish-5 Off 52:54:00:6c:3c:06"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000007 bm-redfish-6 On 52:54:00:6c:3c:07"
  "4c0a4f3e-5a1b-4b8e-9d5e-000000000008 bm-redfish-7 Off 52:54:00:6c:3c:08"
)
TLS_SYSTEM="4c0a4f3e-5a1b-4b8e-9d5e-000000000010 bm-redfish-tls On 52:54:00:6c:3c:10"
# METAL3_EXTRA_SYSTEMS=N: N more fake systems on the plain emulator, bm-scale-1..N (uuid
# 4c0a4f3e-5a1b-4b8e-9d5e-1NNNNNNNNNNN, MAC 52:54:01:00:HH:LL), powered off: the hosts of
# benchmarks/metal3_scale.sh. Read when the emulator starts (`up` after `down`).
EXTRA_SYSTEMS=${METAL3_EXTRA_SYSTEMS:-0}
if ! [[ $EXTRA_SYSTEMS =~ ^[0-9]{1,5}$ ]] || [ "$EXTRA_SYSTEMS" -gt 65535 ]; then
  echo "metal3-test-services: METAL3_EXTRA_SYSTEMS=$EXTRA_SYSTEMS is not a count from 0 to 65535" >&2; exit 2
fi
for ((i = 1; i <= EXTRA_SYSTEMS; i++)); do
  SYSTEMS+=("$(printf '4c0a4f3e-5a1b-4b8e-9d5e-1%011d bm-scale-%d Off 52:54:01:00:%02x:%02x' "$i" "$i" $((i / 256)) $((i % 256)))")
done

# --- helpers ------------------------------------------------------------------------
# True when something accepts TCP connections on $ADDR:$1.
port_open() { (exec 3<>"/dev/tcp/$ADDR/$1") 2>/dev/null; }
udp_bound() { [ -n "$(ss -Hlun "sport = :$1" 2>/dev/null)" ]; }

# The pid recorded for service $1 if that process is alive and still the one we started
# (its command line contains the marker recorded beside the pid).
live_pid() {
  local pidf=$run/$1.pid pid marker
  [ -f "$pidf" ] || return 1
  read -r pid marker <"$pidf" || true
  [ -n "${pid:-}" ] || return 1
  # /proc/PID/cmdline reads empty for a moment while the process execs (right after start()):
  # read it again before calling the service gone.
  for _ in 1 2 3; do
    [ -r "/proc/$pid/cmdline" ] || return 1
    if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker"; then echo "$pid"; return 0; fi
    sleep 0.2
  done
  return 1
}

# start NAME MARKER CMD...: run CMD in its own session (so `down` can stop its whole
# process group), output to logs/NAME.log, pid + marker to run/NAME.pid.
start() {
  local name=$1 marker=$2; shift 2
  setsid "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  echo "$! $marker" >"$run/$name.pid"
}

# wait_http NAME URL SECONDS [CURL-ARGS...]: until URL answers 2xx; on timeout show the log.
wait_http() {
  local name=$1 url=$2 secs=$3; shift 3
  local deadline=$((SECONDS + secs))
  until curl -fsS -o /dev/null -m 3 "$@" "$url" 2>/dev/null; do
    if ! live_pid "$name" >/dev/null; then
      tail -n 30 "$logs/$name.log" >&2 || true
      die "$name exited while starting (log: $logs/$name.log)"
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 30 "$logs/$name.log" >&2 || true
      die "$name does not answer on $url after $secs s (log: $logs/$name.log)"
    fi
    sleep 0.5
  done
}

# True while process $1 exists and is not a zombie (PID 1 here may reap late).
running() {
  local state
  state=$(sed -n 's/^[0-9]* (.*) \([A-Z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

stop() {
  local name=$1 pid
  if pid=$(live_pid "$name"); then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      running "$pid" || break
      sleep 0.1
    done
    if running "$pid"; then kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; fi
    log "stopped $name (pid $pid)"
  fi
  rm -f "$run/$name.pid"
}

# --- installation -------------------------------------------------------------------
install_apt() {
  local need=() pkg
  # genisoimage (mkisofs), isolinux, syslinux-common: Ironic builds the virtual-media boot ISO with
  # them (UEFI from the ESP image below, legacy BIOS with isolinux), as ironic-image does.
  for pkg in ipmitool curl openssl iproute2 python3-venv genisoimage isolinux syslinux-common dosfstools; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  log "apt-get install ${need[*]} (log: $logs/apt.log)"
  # A maintainer script would start a service through invoke-rc.d: a policy-rc.d that answers
  # 101 keeps them stopped (ours run in the background below). Only remove it if we put it there.
  local policy=/usr/sbin/policy-rc.d ours=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# slime.hybrid metal3-test-services: no service starts during apt-get\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    ours=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  local rc=0
  {
    apt-get update -q &&
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}"
  } >>"$logs/apt.log" 2>&1 || rc=$?
  [ $ours -eq 1 ] && rm -f "$policy"
  [ $rc -eq 0 ] || { tail -n 20 "$logs/apt.log" >&2; die "apt-get install ${need[*]} failed (log: $logs/apt.log)"; }
}

# install_venv VENV COMMAND LOG REQUIREMENT...: the requirements in their own venv, unless COMMAND
# is there and the venv's stamp already names exactly these requirements.
install_venv() {
  local dir=$1 command=$2 logf=$logs/$3; shift 3
  local want="$*"
  [ -x "$dir/bin/$command" ] && [ "$(cat "$dir/.versions" 2>/dev/null)" = "$want" ] && return 0
  log "pip install $want into $dir (log: $logf)"
  # Debian's python3 (not a pyenv shim on PATH): the venv must outlive whatever PATH says.
  [ -x "$dir/bin/python" ] || /usr/bin/python3 -m venv "$dir" >>"$logf" 2>&1 \
    || die "cannot create $dir (python3-venv missing?)"
  # --no-compile: bytecode only for what runs (on first use), as in scripts/install-deps.sh
  "$dir/bin/pip" install -q --no-compile "$@" >>"$logf" 2>&1 \
    || { tail -n 20 "$logf" >&2; die "pip install $want failed"; }
  echo "$want" >"$dir/.versions"
}

# --- configuration ------------------------------------------------------------------
# The BMC password of the emulators: random once, kept (0600) so the tests can read it.
password() {
  local f=$cache/credentials
  if [ ! -s "$f" ]; then
    (umask 077; printf '%s\n' "bmc-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$f")
  fi
  head -n1 "$f"
}

# python literal of the fake systems given as "uuid name power mac" lines
systems_literal() {
  local line uuid name power mac
  echo "["
  for line in "$@"; do
    read -r uuid name power mac <<<"$line"
    printf "    {'uuid': '%s', 'name': '%s', 'power_state': '%s', 'external_notifier': True,\n     'nics': [{'mac': '%s', 'ip': '192.0.2.%d'}]},\n" \
      "$uuid" "$name" "$power" "$mac" "$((16#${mac##*:}))"
  done
  echo "]"
}

write_sushy_config() {
  local dir=$state/sushy pw
  mkdir -p "$dir"
  pw=$(password)
  # htpasswd with a bcrypt digest (the only kind sushy-tools accepts); bcrypt comes with it.
  if [ ! -s "$dir/htpasswd" ] || ! SLIME_BMC_PW=$pw "$venv/bin/python" - "$dir/htpasswd" "$BMC_USER" <<'PY'
import os, sys, bcrypt
path, user = sys.argv[1], sys.argv[2]
pw = os.environ["SLIME_BMC_PW"].encode()
for line in open(path):
    u, _, h = line.strip().partition(":")
    if u == user and bcrypt.checkpw(pw, h.encode()):
        sys.exit(0)
sys.exit(1)
PY
  then
    SLIME_BMC_PW=$pw "$venv/bin/python" - "$dir/htpasswd" "$BMC_USER" <<'PY'
import os, sys, bcrypt
path, user = sys.argv[1], sys.argv[2]
pw = os.environ["SLIME_BMC_PW"].encode()
fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
with os.fdopen(fd, "w") as f:
    f.write("%s:%s\n" % (user, bcrypt.hashpw(pw, bcrypt.gensalt(rounds=4)).decode()))
os.replace(path + ".tmp", path)
PY
  fi
  local name port systems
  for name in redfish redfish-tls; do
    if [ "$name" = redfish ]; then port=$REDFISH_PORT; systems=$(systems_literal "${SYSTEMS[@]}")
    else port=$REDFISH_TLS_PORT; systems=$(systems_literal "$TLS_SYSTEM"); fi
    cat >"$dir/$name.conf" <<EOF
# sushy-emulator configuration (a Python file) written by tests/integration/metal3/metal3-test-services.sh
SUSHY_EMULATOR_LISTEN_IP = '$ADDR'
SUSHY_EMULATOR_LISTEN_PORT = $port
SUSHY_EMULATOR_AUTH_FILE = '$dir/htpasswd'
SUSHY_EMULATOR_FAKE_DRIVER = True
SUSHY_EMULATOR_STATE_DIR = '$dir/state-$name'
SUSHY_EMULATOR_FAKE_SYSTEMS = $systems
# Every power change of a system is PUT here (FakeIPA boots its agent when a system goes On with
# a boot device other than Hdd); it must answer before anything powers a system.
EXTERNAL_NOTIFICATION_URL = 'http://$ADDR:$FAKE_IPA_PORT'
EOF
    if [ "$name" = redfish-tls ]; then
      cat >>"$dir/$name.conf" <<EOF
SUSHY_EMULATOR_SSL_CERT = '$dir/tls.crt'
SUSHY_EMULATOR_SSL_KEY = '$dir/tls.key'
EOF
    fi
  done
  if [ ! -s "$dir/tls.crt" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=slime-test-bmc" \
      -addext "subjectAltName=IP:$ADDR" -keyout "$dir/tls.key" -out "$dir/tls.crt" >>"$logs/openssl.log" 2>&1 \
      || die "openssl could not make the test certificate (log: $logs/openssl.log)"
    chmod 600 "$dir/tls.key"
  fi
}

write_ironic_config() {
  local dir=$state/ironic
  mkdir -p "$dir/locks" "$dir/images" "$dir/master_images" "$dir/httpboot" "$dir/tftpboot"
  cat >"$dir/ironic.conf" <<EOF
# Standalone Ironic for the slime.hybrid tests, written by tests/integration/metal3/metal3-test-services.sh.
# Interfaces as Metal3's ironic-image enables them, minus what needs a network or DHCP here.
[DEFAULT]
auth_strategy = noauth
rpc_transport = none
host = slime-test-conductor
# What baremetal-operator v0.13.2 asks for (pkg/hardwareutils/bmc/*.go: drivers redfish, idrac
# and ipmi; boot ipxe, redfish-virtual-media, redfish-https, idrac-redfish-virtual-media; inspect
# agent, pkg/provisioner/ironic/register.go; deploy ramdisk/custom-agent for live ISOs and
# custom deploys), plus fake-hardware for the tests of tests/integration/metal3.
enabled_hardware_types = redfish,idrac,ipmi,fake-hardware
enabled_power_interfaces = redfish,idrac-redfish,ipmitool,fake
enabled_management_interfaces = redfish,idrac-redfish,ipmitool,noop,fake
enabled_boot_interfaces = ipxe,redfish-virtual-media,redfish-https,idrac-redfish-virtual-media,fake
enabled_deploy_interfaces = direct,ramdisk,custom-agent,fake
default_deploy_interface = direct
enabled_inspect_interfaces = agent,no-inspect,redfish,fake
enabled_network_interfaces = noop
default_network_interface = noop
enabled_vendor_interfaces = no-vendor,ipmitool,redfish,idrac-redfish,fake
enabled_bios_interfaces = no-bios,redfish,idrac-redfish,fake
enabled_raid_interfaces = no-raid,redfish,idrac-redfish,fake
enabled_firmware_interfaces = no-firmware,redfish,fake
enabled_console_interfaces = no-console,fake
enabled_rescue_interfaces = no-rescue,fake
isolinux_bin = /usr/lib/ISOLINUX/isolinux.bin
ldlinux_c32 = /usr/lib/syslinux/modules/bios/ldlinux.c32
log_file = $logs/ironic-service.log
use_stderr = false
debug = false
tempdir = $dir
[service_catalog]
# Where the deploy ramdisk (and the conductor itself) reaches the API: no Keystone here.
endpoint_override = http://$ADDR:$IRONIC_PORT
[api]
host_ip = $ADDR
port = $IRONIC_PORT
api_workers = 1
ramdisk_heartbeat_timeout = $HEARTBEAT_TIMEOUT
[agent]
# FakeIPA speaks plain HTTP (Metal3's scale tests set OS_AGENT__REQUIRE_TLS=false the same way).
require_tls = false
# Nothing to collect from a fake agent.
deploy_logs_collect = never
# FakeIPA acknowledges standby.power_off but never runs it (its commands run when polled, and
# its StandbyExtension has no agent to read the BMC from): after the deploy Ironic waits for the
# soft power-off, then powers off through the BMC. 1 retry x 1 s instead of 6 x 5 s.
post_deploy_get_power_state_retries = 1
post_deploy_get_power_state_retry_interval = 1
[conductor]
automated_clean = false
# The EFI system partition the virtual-media boot ISO gets (ironic-image ships one).
bootloader = http://$ADDR:$HTTP_PORT/images/esp.img
# Ironic's default (60 s), as Metal3 runs it. Each Redfish call hashes the BMC password with 600,000
# rounds of PBKDF2-SHA512 for its session cache key (Ironic 35.0.0 ironic/drivers/modules/redfish/utils.py,
# SessionCache.__init__): a power sync of every node every 10 s kept a third of a core busy. No test
# changes a power state behind Ironic's back: the operator's and FakeIPA's power changes go through it.
sync_power_state_interval = 60
heartbeat_interval = 5
[database]
connection = sqlite:///$dir/ironic.sqlite
[dhcp]
dhcp_provider = none
[deploy]
http_root = $dir/httpboot
http_url = http://$ADDR:$HTTP_PORT
# automatedCleaningMode metadata: only the agent's erase_devices_metadata (as Metal3's Ironic is
# configured), not its erase_devices at the agent's own priority 10.
erase_devices_priority = 0
erase_devices_metadata_priority = 10
[pxe]
tftp_root = $dir/tftpboot
tftp_master_path = $dir/tftpboot/master_images
images_path = $dir/images
instance_master_path = $dir/master_images
[redfish]
connection_attempts = 2
connection_retry_interval = 1
[ipmi]
command_retry_timeout = 10
min_command_interval = 1
[oslo_concurrency]
lock_path = $dir/locks
EOF
}

write_fake_ipa_config() {
  local dir=$state/fake-ipa
  mkdir -p "$dir/configdrives"
  cat >"$dir/fake-ipa.conf" <<EOF
# FakeIPA configuration (a Python file of FAKE_IPA_* settings, fake-ipa/conf.py upstream),
# written by tests/integration/metal3/metal3-test-services.sh
FAKE_IPA_API_URL = 'http://$ADDR:$IRONIC_PORT'
# Ironic's built-in inspection (inspect interface agent): FakeIPA posts a small inventory (its
# NICs, 2 CPUs) at every boot; outside inspection Ironic refuses it and FakeIPA goes on to lookup.
FAKE_IPA_INSPECTION_CALLBACK_URL = 'http://$ADDR:$IRONIC_PORT/v1/continue_inspection'
FAKE_IPA_ADVERTISE_ADDRESS_IP = '$ADDR'
FAKE_IPA_ADVERTISE_ADDRESS_PORT = $FAKE_IPA_PORT
SUSHY_FAKE_IPA_LISTEN_IP = '$ADDR'
SUSHY_FAKE_IPA_LISTEN_PORT = $FAKE_IPA_PORT
FAKE_IPA_INSECURE = True
# seconds from the power-on request to the agent's first call (upstream default 180-240): longer than
# the fake driver's power delay (1-11 s, fakedriver.py set_power_state), or the inspection data
# arrives before Ironic is in "inspect wait" and is refused (404), and only the lookup is retried
FAKE_IPA_MIN_BOOT_TIME = 14
FAKE_IPA_MAX_BOOT_TIME = 16
# where fake_ipa_run.py keeps the config drive of each write_image step it answers
SLIME_CONFIGDRIVE_DIR = '$dir/configdrives'
EOF
}

# --- services -----------------------------------------------------------------------
up_emulator() {
  local name=$1 port=$2 scheme=http curlargs=()
  [ "$name" = redfish-tls ] && { scheme=https; curlargs=(-k); }
  if live_pid "$name" >/dev/null; then
    log "$name already running (pid $(live_pid "$name"))"
  else
    port_open "$port" && die "$ADDR:$port is taken by another process; set METAL3_REDFISH_PORT/METAL3_REDFISH_TLS_PORT"
    rm -rf "$state/sushy/state-$name"   # fresh power states each start
    start "$name" "$state/sushy/$name.conf" "$venv/bin/sushy-emulator" --config "$state/sushy/$name.conf"
    wait_http "$name" "$scheme://$ADDR:$port/redfish/v1/Systems" 30 "${curlargs[@]}" -u "$BMC_USER:$(password)"
    log "$name up on $scheme://$ADDR:$port"
  fi
}

up_fake_ipa() {
  local script=$here/tests/integration/metal3/fake_ipa_run.py
  if live_pid fake-ipa >/dev/null; then
    log "fake-ipa already running (pid $(live_pid fake-ipa))"; return
  fi
  port_open "$FAKE_IPA_PORT" && die "$ADDR:$FAKE_IPA_PORT is taken by another process; set METAL3_FAKE_IPA_PORT"
  start fake-ipa "$state/fake-ipa/fake-ipa.conf" "$fipa_venv/bin/python" "$script" --config "$state/fake-ipa/fake-ipa.conf"
  # Its IPA API answers under /<node uuid>/ only; a PUT without pending power is a no-op (204).
  local deadline=$((SECONDS + 30))
  until curl -fsS -o /dev/null -m 3 -X PUT -H 'Content-Type: application/json' --data '{"name": "probe"}' "http://$ADDR:$FAKE_IPA_PORT/" 2>/dev/null; do
    live_pid fake-ipa >/dev/null || { tail -n 30 "$logs/fake-ipa.log" >&2 || true; die "fake-ipa exited while starting (log: $logs/fake-ipa.log)"; }
    [ $SECONDS -lt $deadline ] || die "fake-ipa does not answer on http://$ADDR:$FAKE_IPA_PORT after 30 s (log: $logs/fake-ipa.log)"
    sleep 0.5
  done
  log "fake-ipa up on http://$ADDR:$FAKE_IPA_PORT (agent API and sushy-tools' notifications)"
}

up_ironic() {
  local dir=$state/ironic
  if live_pid ironic >/dev/null; then
    log "ironic already running (pid $(live_pid ironic))"; return
  fi
  port_open "$IRONIC_PORT" && die "$ADDR:$IRONIC_PORT is taken by another process; set METAL3_IRONIC_PORT"
  [ -x "$ironic_venv/bin/ironic" ] || die "$ironic_venv/bin/ironic (all-in-one API + conductor) not found"
  # A fresh database each start: the tests enroll nodes of their own.
  rm -f "$dir/ironic.sqlite"
  "$ironic_venv/bin/ironic-dbsync" --config-file "$dir/ironic.conf" create_schema >>"$logs/ironic-dbsync.log" 2>&1 \
    || { tail -n 20 "$logs/ironic-dbsync.log" >&2; die "ironic-dbsync create_schema failed (log: $logs/ironic-dbsync.log)"; }
  # Without REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE: requests lets them override a session's
  # verify=False (psf/requests#3829), so redfish_verify_ca=False (Metal3's
  # disableCertificateVerification) could be ignored.
  start ironic "$dir/ironic.conf" env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE "$ironic_venv/bin/ironic" --config-file "$dir/ironic.conf"
  wait_http ironic "http://$ADDR:$IRONIC_PORT/v1" 90
  # The API answers before the conductor has registered its hardware types.
  local deadline=$((SECONDS + 60))
  until curl -fsS -m 3 -H "X-OpenStack-Ironic-API-Version: latest" "http://$ADDR:$IRONIC_PORT/v1/drivers" 2>/dev/null | grep -q '"redfish"'; do
    [ $SECONDS -lt $deadline ] || { tail -n 30 "$logs/ironic-service.log" >&2 || true; die "ironic lists no redfish driver after 60 s (log: $logs/ironic-service.log)"; }
    live_pid ironic >/dev/null || { tail -n 30 "$logs/ironic.log" "$logs/ironic-service.log" >&2 || true; die "ironic exited while starting"; }
    sleep 0.5
  done
  log "ironic up on http://$ADDR:$IRONIC_PORT (API and conductor in one process, noauth, sqlite)"
}

up_ipmi() {
  local script=$here/tests/integration/metal3/fake_ipmi_bmc.py
  if live_pid ipmi >/dev/null; then
    log "ipmi already running (pid $(live_pid ipmi))"; return
  fi
  udp_bound "$IPMI_PORT" && die "UDP $ADDR:$IPMI_PORT is taken by another process; set METAL3_IPMI_PORT"
  [ -f "$script" ] || die "$script not found"
  password >/dev/null
  start ipmi "$script" "$venv/bin/python" "$script" --address "$ADDR" --port "$IPMI_PORT" \
    --user "$BMC_USER" --password-file "$cache/credentials" --power "$IPMI_POWER"
  # Ready when ipmitool (what Ironic's ipmi driver runs) gets a session; -E: password from env.
  local deadline=$((SECONDS + 20))
  until IPMI_PASSWORD=$(password) ipmitool -I lanplus -H "$ADDR" -p "$IPMI_PORT" -U "$BMC_USER" -E -N 1 -R 1 \
      power status >/dev/null 2>&1; do
    live_pid ipmi >/dev/null || { tail -n 20 "$logs/ipmi.log" >&2 || true; die "the fake IPMI BMC exited (log: $logs/ipmi.log)"; }
    [ $SECONDS -lt $deadline ] || die "the fake IPMI BMC gives no session after 20 s (log: $logs/ipmi.log)"
    sleep 0.5
  done
  log "ipmi up on ipmi://$ADDR:$IPMI_PORT (UDP)"
}

# The HTTP server of the provisioning network (Metal3's ironic-image runs one beside Ironic):
# Ironic's http_root (boot configs, config drives) and images/ with the test disk image and its
# checksum file, which Ironic validates (a HEAD request) before it deploys.
up_http() {
  local root=$state/ironic/httpboot
  mkdir -p "$root/images"
  if [ ! -s "$root/images/slime-test.qcow2" ]; then
    head -c 1048576 /dev/zero >"$root/images/slime-test.qcow2"
    (cd "$root/images" && sha256sum slime-test.qcow2 >slime-test.qcow2.sha256sum)
  fi
  # What baremetal-operator hands Ironic as the deploy kernel and ramdisk (DEPLOY_KERNEL_URL,
  # DEPLOY_RAMDISK_URL): nothing here boots them, so placeholders that Ironic can fetch.
  [ -s "$root/images/ipa.kernel" ] || echo "no deploy ramdisk on this test machine" >"$root/images/ipa.kernel"
  [ -s "$root/images/esp.img" ] || /usr/sbin/mkfs.vfat -C -n ESP "$root/images/esp.img" 1440 >/dev/null \
    || die "mkfs.vfat could not make the test ESP image"
  [ -s "$root/images/ipa.initramfs" ] || echo "no deploy ramdisk on this test machine" >"$root/images/ipa.initramfs"
  if live_pid http >/dev/null; then
    log "http already running (pid $(live_pid http))"; return
  fi
  port_open "$HTTP_PORT" && die "$ADDR:$HTTP_PORT is taken by another process; set METAL3_HTTP_PORT"
  start http "http.server $HTTP_PORT" /usr/bin/python3 -m http.server "$HTTP_PORT" --bind "$ADDR" --directory "$root"
  wait_http http "http://$ADDR:$HTTP_PORT/images/slime-test.qcow2.sha256sum" 20
  log "http up on http://$ADDR:$HTTP_PORT (images/slime-test.qcow2)"
}

# A port on $ADDR nothing listens on: the "unreachable BMC".
closed_port() {
  local p
  for p in 9 19 29 39 49; do port_open "$p" || { echo "$p"; return; }; done
  die "no closed port found among 9 19 29 39 49"
}

write_endpoints() {
  local closed pw
  closed=$(closed_port)
  pw=$(password)
  (umask 077; "$venv/bin/python" - "$state/endpoints.json" <<EOF
import json, sys
systems = []
for line in """$(printf '%s\n' "${SYSTEMS[@]}")""".splitlines():
    uuid, name, power, mac = line.split()
    systems.append({"uuid": uuid, "name": name, "power_state": power, "macs": [mac],
                    "system_id": "/redfish/v1/Systems/" + uuid})
uuid, name, power, mac = "$TLS_SYSTEM".split()
tls = {"uuid": uuid, "name": name, "power_state": power, "macs": [mac], "system_id": "/redfish/v1/Systems/" + uuid}
data = {
    "redfish": {"endpoint": "http://$ADDR:$REDFISH_PORT", "host": "$ADDR", "port": $REDFISH_PORT, "systems": systems},
    "redfish_tls": {"endpoint": "https://$ADDR:$REDFISH_TLS_PORT", "host": "$ADDR", "port": $REDFISH_TLS_PORT,
                    "ca_file": "$state/sushy/tls.crt", "systems": [tls]},
    "username": "$BMC_USER",
    "password": "$pw",
    "closed_port": $closed,
    "ipmi": {"address": "ipmi://$ADDR:$IPMI_PORT", "host": "$ADDR", "port": $IPMI_PORT, "power_state": "$IPMI_POWER"},
    "ironic": {"url": "http://$ADDR:$IRONIC_PORT"},
    "fake_ipa": {"url": "http://$ADDR:$FAKE_IPA_PORT", "configdrives": "$state/fake-ipa/configdrives"},
    "http": {"url": "http://$ADDR:$HTTP_PORT", "image": "http://$ADDR:$HTTP_PORT/images/slime-test.qcow2",
             "checksum": "http://$ADDR:$HTTP_PORT/images/slime-test.qcow2.sha256sum",
             "deploy_kernel": "http://$ADDR:$HTTP_PORT/images/ipa.kernel",
             "deploy_ramdisk": "http://$ADDR:$HTTP_PORT/images/ipa.initramfs"},
    "logs": "$logs",
}
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(data, f, indent=2)
import os
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
EOF
  )
}

cmd_install() {
  [ "$(id -u)" = 0 ] || die "run as root (apt-get)"
  mkdir -p "$cache" "$run" "$logs"
  # one install at a time (two sets of services may start together)
  exec 8>"$cache/.install.lock"
  flock 8
  install_apt
  install_venv "$venv" sushy-emulator pip.log "sushy-tools==$SUSHY_TOOLS_VERSION" "pyghmi==$PYGHMI_VERSION"
  install_venv "$ironic_venv" ironic pip-ironic.log "ironic==$IRONIC_VERSION" sushy-oem-idrac
  install_fake_ipa
  exec 8>&-   # the services started later must not hold the lock
}

# FakeIPA from its source tarball (pbr takes the version from PBR_VERSION outside a git checkout,
# as upstream's Dockerfile sets it), with its requirements.txt (Flask, requests, tenacity).
install_fake_ipa() {
  local want="fake-ipa@$FAKE_IPA_REF" src=$cache/src/utility-images-$FAKE_IPA_REF
  [ -x "$fipa_venv/bin/fake-ipa" ] && [ "$(cat "$fipa_venv/.versions" 2>/dev/null)" = "$want" ] && return 0
  [ -f "$FAKE_IPA_TARBALL" ] || die "$FAKE_IPA_TARBALL not found (set FAKE_IPA_TARBALL or SLIME_VENDOR_DIR)"
  rm -rf "$src" && mkdir -p "$cache/src"
  tar -xzf "$FAKE_IPA_TARBALL" -C "$cache/src" || die "cannot unpack $FAKE_IPA_TARBALL"
  [ -x "$fipa_venv/bin/python" ] || /usr/bin/python3 -m venv "$fipa_venv" >>"$logs/pip-fake-ipa.log" 2>&1 \
    || die "cannot create $fipa_venv"
  log "pip install FakeIPA ($FAKE_IPA_REF) into $fipa_venv (log: $logs/pip-fake-ipa.log)"
  PBR_VERSION=6.0.0 "$fipa_venv/bin/pip" install -q --no-compile "$src/fake-ipa" -r "$src/fake-ipa/requirements.txt" \
    >>"$logs/pip-fake-ipa.log" 2>&1 || { tail -n 20 "$logs/pip-fake-ipa.log" >&2; die "pip install FakeIPA failed"; }
  echo "$want" >"$fipa_venv/.versions"
}

cmd_up() {
  cmd_install
  write_sushy_config
  write_ironic_config
  write_fake_ipa_config
  [ "$BMCS_ONLY" = 1 ] || up_fake_ipa
  up_emulator redfish "$REDFISH_PORT"
  up_emulator redfish-tls "$REDFISH_TLS_PORT"
  up_ipmi
  up_http
  [ "$BMCS_ONLY" = 1 ] || up_ironic
  write_endpoints
  log "ok; endpoints and test credentials in $state/endpoints.json"
}

cmd_down() {
  local name
  for name in ironic http ipmi redfish-tls redfish fake-ipa; do stop "$name"; done
  log "down"
}

cmd_status() {
  local name pid rc=0 url
  for name in redfish redfish-tls ipmi http ironic fake-ipa; do
    case $name in
      redfish) url=http://$ADDR:$REDFISH_PORT ;;
      redfish-tls) url=https://$ADDR:$REDFISH_TLS_PORT ;;
      ipmi) url=ipmi://$ADDR:$IPMI_PORT ;;
      http) url=http://$ADDR:$HTTP_PORT ;;
      ironic) url=http://$ADDR:$IRONIC_PORT ;;
      fake-ipa) url=http://$ADDR:$FAKE_IPA_PORT ;;
    esac
    if pid=$(live_pid "$name"); then
      printf '%-12s running  pid %-7s %s\n' "$name" "$pid" "$url"
    else
      printf '%-12s stopped\n' "$name"; rc=3
    fi
  done
  return $rc
}

case ${1:-} in
  install) cmd_install ;;
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 install|up|down|status" >&2; exit 2 ;;
esac
