# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm accounting: the model's ``accounting`` section, Slinky's slurmdbd and its database.

Slinky's slurm chart 1.2.1 turns ``accounting.enabled`` into an Accounting resource
(helm/slurm/templates/accounting/accounting-cr.yaml); its operator (slurm-operator v1.2.1) runs
slurmdbd as the StatefulSet ``<release>-accounting`` behind a Service of that name, writes
slurmdbd.conf into the Secret of that name with StoragePass read from
``storageConfig.passwordKeyRef`` (internal/builder/accountingbuilder/accounting_config.go: the
Secret must exist before the operator can render it), and gives slurm.conf
AccountingStorageType=accounting_storage/slurmdbd, AccountingStorageHost=<release>-accounting and
port 6819 (internal/builder/controllerbuilder/controller_config.go). Slurm workers never talk to
slurmdbd: slurmctld sends it every job's record, the pods' and bare metal's alike.

The database is the site's (``database.host`` names it) or, when the model names none, one the
collection runs beside slurmdbd: MariaDB as a StatefulSet of the chart's extraObjects, started from
the image's own programs (never its entrypoint) with the settings slurmdbd checks at its start
(Slurm 26.05 src/plugins/accounting_storage/mysql/accounting_storage_mysql.c,
_check_database_variables): innodb_lock_wait_timeout 900, innodb_log_file_size 64M,
max_allowed_packet 16M, and innodb_snapshot_isolation OFF (MariaDB 11.6.2 and later turn it on, and
slurmdbd then dies on the first write conflict); innodb_buffer_pool_size is the site's
(slinky_accounting_database_args; Slurm wants at least 2G of its 4G recommendation, else it logs an
error and runs on). The password comes from the Secret the model names, in the pod's environment
only: an init container writes the SQL that creates the database and the user (and sets the
password again at every start, so a changed Secret takes effect when the pod is made again) to a
memory volume that mariadbd runs with --init-file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

# The database the collection runs when the model names none.
MANAGED = "slime-accounting-db"
MANAGED_PORT = 3306
# The official MariaDB image's user (docker.io/library/mariadb), whose programs the pod runs.
MYSQL_UID = 999
DATA_DIR = "/var/lib/mysql"
INIT_DIR = "/run/slime-db"
# Slurm's own recommendations, checked by slurmdbd at its start (module docstring).
SERVER_ARGS = ("--innodb-lock-wait-timeout=900", "--innodb-log-file-size=64M", "--max-allowed-packet=16M",
               "--innodb-snapshot-isolation=OFF")
# The chart's accounting values the model decides; a site's values may set the rest (slurmdbd's image and
# resources, podSpec, extraConf, service).
OWN_VALUES = ("enabled", "external", "externalConfig", "storageConfig")
DEFAULTS = {"enabled": False, "database": None, "tres": []}
DATABASE_DEFAULTS = {"host": "", "port": MANAGED_PORT, "name": "slurm_acct_db", "user": "slurm",
                     "password_secret": {"name": "slurm-accounting-db", "key": "password"}}
_SQL_NAME_RE = re.compile(r"^[A-Za-z0-9_]{1,64}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?$")
_SECRET_RE = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_SECRET_KEY_RE = re.compile(r"^[-._A-Za-z0-9]{1,253}$")
# AccountingStorageTRES entries: a type, or type/name (gres/gpu, gres/gpu:a100, license/matlab, fs/lustre).
_TRES_RE = re.compile(r"^[a-z]+(/[A-Za-z0-9_.:-]+)?$")

# The init container: the data directory initialized once (a subdirectory, as a volume's root may
# hold lost+found), then the SQL of the database and its user, written where only this pod reads.
INIT_SCRIPT = r"""set -eu
umask 077
data=%(data)s/data
if [ ! -d "$data/mysql" ]; then
  mkdir -p "$data"
  mariadb-install-db --no-defaults --datadir="$data" --auth-root-authentication-method=socket --skip-test-db >/dev/null
fi
# the password as an SQL string: backslashes and quotes escaped
pw=$(printf '%%s' "$SLIME_DB_PASSWORD" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
cat >%(init)s/init.sql <<SQL
CREATE DATABASE IF NOT EXISTS \`$SLIME_DB_NAME\`;
CREATE USER IF NOT EXISTS '$SLIME_DB_USER'@'%%' IDENTIFIED BY '$pw';
ALTER USER '$SLIME_DB_USER'@'%%' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON \`$SLIME_DB_NAME\`.* TO '$SLIME_DB_USER'@'%%';
SQL
""" % {"data": DATA_DIR, "init": INIT_DIR}


def settings(raw):
    """(section, errors): the model's accounting section with defaults; every error at once.
    section: {enabled, managed, database: {host, port, name, user, password_secret: {name, key}}, tres}."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, ["accounting=%r must be a mapping of %s (see docs/howto-accounting.md)"
                      % (raw, ", ".join(sorted(DEFAULTS)))]
    errors = ["accounting.%s is not a setting; allowed: %s" % (key, ", ".join(sorted(DEFAULTS)))
              for key in sorted(set(raw) - set(DEFAULTS) - {"managed"}, key=str)]  # managed: derived
    enabled = raw.get("enabled", False)
    if not isinstance(enabled, bool):
        errors.append("accounting.enabled=%r must be true or false" % (enabled,))
    database = _database(errors, raw.get("database"))
    tres = raw.get("tres") or []
    if not isinstance(tres, list) or [t for t in tres if not isinstance(t, str) or not _TRES_RE.match(t)]:
        errors.append("accounting.tres=%r must be a list of AccountingStorageTRES entries (e.g. gres/gpu:a100, "
                      "license/matlab, fs/lustre)" % (tres,))
    if errors:
        return None, errors
    return {"enabled": enabled, "managed": database["host"] == "", "database": database,
            "tres": list(tres)}, []


def _database(errors, raw):
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        errors.append("accounting.database=%r must be a mapping of %s" % (raw, ", ".join(sorted(DATABASE_DEFAULTS))))
        return copy.deepcopy(DATABASE_DEFAULTS)
    errors += ["accounting.database.%s is not a setting; allowed: %s" % (key, ", ".join(sorted(DATABASE_DEFAULTS)))
               for key in sorted(set(raw) - set(DATABASE_DEFAULTS), key=str)]
    out = dict(copy.deepcopy(DATABASE_DEFAULTS), **dict((k, v) for k, v in raw.items() if v is not None))
    if not isinstance(out["host"], str) or (out["host"] and not _HOST_RE.match(out["host"])):
        errors.append("accounting.database.host=%r must be a host name or address (empty: the collection runs "
                      "the database)" % (out["host"],))
    port = out["port"]
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append("accounting.database.port=%r must be a port, 1-65535" % (port,))
    for key in ("name", "user"):
        if not isinstance(out[key], str) or not _SQL_NAME_RE.match(out[key]):
            errors.append("accounting.database.%s=%r must be 1-64 letters, digits or '_'" % (key, out[key]))
    secret = out["password_secret"]
    if isinstance(secret, str):
        secret = {"name": secret, "key": DATABASE_DEFAULTS["password_secret"]["key"]}
    if (not isinstance(secret, dict) or set(secret) - {"name", "key"}
            or not _SECRET_RE.match(str(secret.get("name", "")))
            or not _SECRET_KEY_RE.match(str(secret.get("key", DATABASE_DEFAULTS["password_secret"]["key"])))):
        errors.append("accounting.database.password_secret=%r must be {name: a Secret's name, key: its key} "
                      "(in the Slurm namespace)" % (out["password_secret"],))
    else:
        out["password_secret"] = dict(DATABASE_DEFAULTS["password_secret"], **secret)
    return out


def of(model):
    """The model's accounting section where accounting is on, else None."""
    section = model.get("accounting")
    return section if section and section["enabled"] else None


def tres(model):
    """AccountingStorageTRES beyond Slurm's defaults: the model's GPUs (gres/gpu, and gres/gpu:TYPE for each
    type it names) and the section's own, in order, each once."""
    out = []
    gpus = model.get("gpus")
    if gpus and gpus.get("nodes"):
        out.append("gres/gpu")
        out += ["gres/gpu:%s" % group["type"] for group in gpus["nodes"] if group.get("type")]
    out += (of(model) or {}).get("tres", [])
    return [entry for index, entry in enumerate(out) if entry not in out[:index]]


def chart_values(values, model, service_account=None, database=None):
    """Add the accounting of a model where it is on to the slurm chart's values: the chart's
    `accounting` section (its storageConfig from the model), AccountingStorageTRES, and, when the
    model names no database, the one the collection runs (database: {image, claim, args,
    service_account})."""
    section = of(model)
    if not section:
        return values
    db = section["database"]
    host = MANAGED if section["managed"] else db["host"]
    values["accounting"] = {
        "enabled": True,
        "storageConfig": {"host": host, "port": db["port"], "database": db["name"], "username": db["user"],
                          "passwordKeyRef": dict(db["password_secret"])},
    }
    if service_account:
        values["accounting"]["podSpec"] = {"serviceAccountName": service_account}
    entries = tres(model)
    if entries:
        values["controller"]["extraConfMap"]["AccountingStorageTRES"] = ",".join(entries)
    if section["managed"]:
        values["extraObjects"] += database_objects(section, **(database or {}))
    return values


def _labels():
    return {"app.kubernetes.io/name": MANAGED, "app.kubernetes.io/component": "database",
            "app.kubernetes.io/managed-by": "slime.hybrid"}


def database_objects(section, image, claim=None, args=(), service_account=None):
    """The Service and StatefulSet of the database the collection runs (no namespace: the chart's
    extraObjects put them in the release's). claim: the data volume's PersistentVolumeClaim spec."""
    db = section["database"]
    labels = _labels()
    selector = {"app.kubernetes.io/name": MANAGED}
    secret = db["password_secret"]
    mounts = [{"name": "data", "mountPath": DATA_DIR}]
    container_security = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    pod = {
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": MYSQL_UID, "runAsGroup": MYSQL_UID,
                            "fsGroup": MYSQL_UID},
        "initContainers": [{
            "name": "init", "image": image, "command": ["/bin/sh", "-c", INIT_SCRIPT],
            "env": [{"name": "SLIME_DB_NAME", "value": db["name"]}, {"name": "SLIME_DB_USER", "value": db["user"]},
                    {"name": "SLIME_DB_PASSWORD", "valueFrom": {"secretKeyRef": dict(secret)}}],
            "volumeMounts": mounts + [{"name": "init", "mountPath": INIT_DIR}],
            "securityContext": container_security,
        }],
        "containers": [{
            "name": "mariadb", "image": image,
            "command": ["/usr/sbin/mariadbd"],
            "args": ["--no-defaults", "--datadir=%s/data" % DATA_DIR, "--port=%d" % MANAGED_PORT,
                     "--bind-address=0.0.0.0", "--skip-name-resolve", "--init-file=%s/init.sql" % INIT_DIR]
                    + list(SERVER_ARGS) + list(args or ()),
            "ports": [{"name": "mysql", "containerPort": MANAGED_PORT, "protocol": "TCP"}],
            "readinessProbe": {"tcpSocket": {"port": MANAGED_PORT}, "periodSeconds": 5},
            "volumeMounts": mounts + [{"name": "init", "mountPath": INIT_DIR, "readOnly": True},
                                      {"name": "socket", "mountPath": "/run/mysqld"}],
            "securityContext": container_security,
        }],
        "volumes": [{"name": "init", "emptyDir": {"medium": "Memory"}}, {"name": "socket", "emptyDir": {}}],
    }
    if service_account:
        pod["serviceAccountName"] = service_account
    claim = claim or {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}
    return [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": MANAGED, "labels": labels},
         "spec": {"selector": selector,
                  "ports": [{"name": "mysql", "port": MANAGED_PORT, "targetPort": "mysql", "protocol": "TCP"}]}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": MANAGED, "labels": labels},
         "spec": {"serviceName": MANAGED, "replicas": 1, "selector": {"matchLabels": selector},
                  "template": {"metadata": {"labels": labels}, "spec": pod},
                  "volumeClaimTemplates": [{"metadata": {"name": "data", "labels": labels}, "spec": claim}]}},
    ]


def values_errors(model, slurm_values):
    """What in the site's chart values works against the model's accounting: an accounting section of its
    own, or AccountingStorageTRES in extraConfMap, while the model's accounting is on."""
    if not of(model):
        return []
    site = (slurm_values or {}).get("accounting") or {}
    errors = ["slinky_slurm_values.accounting.%s is set and slime_cluster.accounting is on: the collection writes it "
              "from slime_cluster.accounting (the chart's slurmdbd, podSpec, extraConf and service stay the site's)" % key
              for key in OWN_VALUES if key in site]
    extra = (((slurm_values or {}).get("controller") or {}).get("extraConfMap") or {})
    if "AccountingStorageTRES" in extra:
        errors.append("slinky_slurm_values.controller.extraConfMap.AccountingStorageTRES is set and "
                      "slime_cluster.accounting is on: list the TRES in slime_cluster.accounting.tres")
    return errors
