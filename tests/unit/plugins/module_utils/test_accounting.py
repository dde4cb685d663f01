# -*- coding: utf-8 -*-
# Copyright (c) 2026 slime.hybrid contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm accounting (module_utils/accounting.py): the model's section, the slurm chart's values (rendered
by the real chart 1.2.1 with helm where it is here), the database the collection runs and its init
script (run with a real shell). Against real slurmdbd, MariaDB and Slurm: molecule kube, verify_accounting.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess

import pytest

from ansible_collections.slime.hybrid.plugins.module_utils import accounting, cluster_model, slinky

MODEL = {
    "name": "lab", "slurm_version": "26.05", "network_mode": "nat",
    "controller": {"host": "slurm-controller-0", "address": "10.244.0.10", "port": 6817},
    "nodeport": {"address": "192.0.2.10", "port": 30017},
    "slurmd_port": 6818, "srun_port_range": "60001-60100", "max_node_count": 64,
}
DATABASE = {"image": "docker.io/library/mariadb:11.8", "claim": None, "args": ["--innodb-buffer-pool-size=4G"]}


def model(section=None, **changes):
    return cluster_model.normalize(dict(MODEL, accounting=section, **changes) if section is not None else dict(MODEL, **changes))


def values(m, nodesets=None, database=None):
    return slinky.chart_values(m, nodesets or {"slinky": {}}, accounting_database=dict(DATABASE, **(database or {})))


def test_off_by_default_and_a_model_is_its_own_input():
    m = model()
    assert m["accounting"]["enabled"] is False and accounting.of(m) is None
    on = model({"enabled": True})
    assert accounting.of(on)["managed"] is True
    assert on["accounting"]["database"] == accounting.DATABASE_DEFAULTS
    assert cluster_model.normalize(on) == on and cluster_model.normalize(m) == m
    site = model({"enabled": True, "database": {"host": "db.example.org", "password_secret": "acct-db"}})
    assert site["accounting"]["managed"] is False
    assert site["accounting"]["database"]["password_secret"] == {"name": "acct-db", "key": "password"}


def test_every_error_at_once_naming_the_value():
    section, errors = accounting.settings({
        "enabled": "yes", "tres": ["gres/gpu", "GPU!"], "colour": 1,
        "database": {"host": "db host", "port": 0, "name": "slurm-db", "user": "a'b",
                     "password_secret": {"name": "Bad_Name"}, "size": 1}})
    assert section is None
    assert errors == [
        "accounting.colour is not a setting; allowed: database, enabled, tres",
        "accounting.enabled='yes' must be true or false",
        "accounting.database.size is not a setting; allowed: host, name, password_secret, port, user",
        "accounting.database.host='db host' must be a host name or address (empty: the collection runs the database)",
        "accounting.database.port=0 must be a port, 1-65535",
        "accounting.database.name='slurm-db' must be 1-64 letters, digits or '_'",
        "accounting.database.user=\"a'b\" must be 1-64 letters, digits or '_'",
        "accounting.database.password_secret={'name': 'Bad_Name'} must be {name: a Secret's name, key: its key} "
        "(in the Slurm namespace)",
        "accounting.tres=['gres/gpu', 'GPU!'] must be a list of AccountingStorageTRES entries (e.g. gres/gpu:a100, "
        "license/matlab, fs/lustre)",
    ]
    with pytest.raises(cluster_model.ModelError) as error:
        model({"enabled": 1})
    assert "accounting.enabled=1 must be true or false" in str(error.value)


def test_off_the_values_have_no_accounting_and_no_accounting_service_accounts():
    out = values(model())
    assert "accounting" not in out
    assert "AccountingStorageTRES" not in out["controller"]["extraConfMap"]
    assert [o["metadata"]["name"] for o in out["extraObjects"]] == [
        "slurm-controller", "slurm-login", "slurm-restapi", "slurm-worker", "slime-health"]


def test_the_managed_database_slurmdbd_and_its_service_accounts():
    out = values(model({"enabled": True}, image_registry="localhost/slime-kube"))
    assert out["accounting"] == {
        "enabled": True, "podSpec": {"serviceAccountName": "slurm-accounting"},
        "storageConfig": {"host": accounting.MANAGED, "port": 3306, "database": "slurm_acct_db", "username": "slurm",
                          "passwordKeyRef": {"name": "slurm-accounting-db", "key": "password"}}}
    kinds = [(o["kind"], o["metadata"]["name"]) for o in out["extraObjects"]]
    assert ("ServiceAccount", "slurm-accounting") in kinds and ("ServiceAccount", accounting.MANAGED) in kinds
    assert kinds[-2:] == [("Service", accounting.MANAGED), ("StatefulSet", accounting.MANAGED)]
    sts = out["extraObjects"][-1]
    pod = sts["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == accounting.MANAGED
    assert pod["securityContext"]["runAsUser"] == 999 and pod["securityContext"]["runAsNonRoot"] is True
    # the image in the registry, the password from the Secret in the init container's environment only
    assert pod["containers"][0]["image"] == pod["initContainers"][0]["image"] == "localhost/slime-kube/library/mariadb:11.8"
    assert {"name": "SLIME_DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "slurm-accounting-db", "key": "password"}}} \
        in pod["initContainers"][0]["env"]
    assert "env" not in pod["containers"][0]
    args = pod["containers"][0]["args"]
    assert args[0] == "--no-defaults" and "--innodb-snapshot-isolation=OFF" in args
    assert args[-1] == "--innodb-buffer-pool-size=4G"  # the site's after the collection's: mariadbd takes the last
    assert sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"] == {"requests": {"storage": "10Gi"}}
    assert sts["spec"]["selector"]["matchLabels"] == out["extraObjects"][-2]["spec"]["selector"]


def test_a_sites_database_runs_none_of_its_own():
    out = values(model({"enabled": True, "database": {"host": "db.example.org", "port": 3307, "name": "acct",
                                                      "user": "slurmdbd", "password_secret": {"name": "db", "key": "pw"}}}))
    assert out["accounting"]["storageConfig"] == {"host": "db.example.org", "port": 3307, "database": "acct",
                                                  "username": "slurmdbd", "passwordKeyRef": {"name": "db", "key": "pw"}}
    names = [o["metadata"]["name"] for o in out["extraObjects"]]
    assert "slurm-accounting" in names and accounting.MANAGED not in names


GPUS = {"nodes": [{"names": "gpu-[1-2]", "type": "a100", "count": 4, "autodetect": "nvml"},
                  {"names": "gpu-3", "type": "h100", "count": 8, "autodetect": "nvml"}]}


def test_tres_grow_with_the_models_gpus():
    assert accounting.tres(model({"enabled": True})) == []
    m = model({"enabled": True, "tres": ["license/matlab", "gres/gpu"]}, gpus=GPUS)
    assert accounting.tres(m) == ["gres/gpu", "gres/gpu:a100", "gres/gpu:h100", "license/matlab"]
    assert values(m)["controller"]["extraConfMap"]["AccountingStorageTRES"] == "gres/gpu,gres/gpu:a100,gres/gpu:h100,license/matlab"
    # GPUs without accounting: no TRES (slurmctld refuses gres/gpu TRES without slurmdbd)
    assert "AccountingStorageTRES" not in values(model(gpus=GPUS))["controller"]["extraConfMap"]


def test_site_values_that_work_against_the_model_are_refused():
    on = model({"enabled": True})
    site = {"accounting": {"enabled": True, "storageConfig": {}, "slurmdbd": {"image": {"tag": "x"}}},
            "controller": {"extraConfMap": {"AccountingStorageTRES": "gres/gpu"}}}
    errors = slinky.model_values_errors(on, site)
    assert [e.split(" is set")[0] for e in errors] == [
        "slinky_slurm_values.accounting.enabled", "slinky_slurm_values.accounting.storageConfig",
        "slinky_slurm_values.controller.extraConfMap.AccountingStorageTRES"]
    assert slinky.model_values_errors(model(), site) == []


def test_service_accounts_a_site_leaves_out_are_the_collections():
    assert slinky.service_account_errors({"worker": "hpc-worker"}) == []
    out = slinky.chart_values(model({"enabled": True}), {"a": {}}, service_accounts={"worker": "hpc-worker"},
                              accounting_database=DATABASE)
    assert out["accounting"]["podSpec"]["serviceAccountName"] == "slurm-accounting"
    assert out["controller"]["podSpec"]["serviceAccountName"] == "slurm-controller"
    assert out["nodesets"]["a"]["podSpec"]["serviceAccountName"] == "hpc-worker"
    assert slinky.service_account_names({"worker": "hpc-worker"}) == dict(slinky.SERVICE_ACCOUNTS, worker="hpc-worker")


@pytest.mark.parametrize("ref, registry, out", [
    ("docker.io/library/mariadb:11.8", "m.example.org/hpc", "m.example.org/hpc/library/mariadb:11.8"),
    ("mariadb:11.8", "m.example.org", "m.example.org/library/mariadb:11.8"),
    ("registry.example.org:5000/db/mariadb@sha256:0f", "m", "m/db/mariadb@sha256:0f"),
    ("docker.io/library/mariadb:11.8", None, "docker.io/library/mariadb:11.8"),
])
def test_the_database_image_in_the_registry(ref, registry, out):
    assert slinky.mirrored_ref(ref, registry) == out


def _init(tmp_path, password):
    """Run the init container's script with a real shell, mariadb-install-db replaced by a recorder (the
    real one runs in molecule kube)."""
    data, init, bin_ = tmp_path / "data", tmp_path / "init", tmp_path / "bin"
    for d in (data, init, bin_):
        d.mkdir(exist_ok=True)
    (bin_ / "mariadb-install-db").write_text('#!/bin/sh\necho "$@" >>"%s/install.log"\nmkdir -p "$(echo "$@" | '
                                             'sed -n "s/.*--datadir=\\([^ ]*\\).*/\\1/p")/mysql"\n' % tmp_path)
    (bin_ / "mariadb-install-db").chmod(0o755)
    script = accounting.INIT_SCRIPT.replace(accounting.DATA_DIR, str(data)).replace(accounting.INIT_DIR, str(init))
    env = {"PATH": "%s:/usr/bin:/bin" % bin_, "SLIME_DB_PASSWORD": password, "SLIME_DB_NAME": "slurm_acct_db",
           "SLIME_DB_USER": "slurm"}
    subprocess.run(["/bin/sh", "-c", script], env=env, check=True)
    return (init / "init.sql").read_text(), (tmp_path / "install.log").read_text().splitlines()


def test_the_init_script_escapes_the_password_and_initializes_once(tmp_path):
    sql, installs = _init(tmp_path, "a'b\\c$d`e")
    assert sql.splitlines() == [
        "CREATE DATABASE IF NOT EXISTS `slurm_acct_db`;",
        "CREATE USER IF NOT EXISTS 'slurm'@'%' IDENTIFIED BY 'a\\'b\\\\c$d`e';",
        "ALTER USER 'slurm'@'%' IDENTIFIED BY 'a\\'b\\\\c$d`e';",
        "GRANT ALL PRIVILEGES ON `slurm_acct_db`.* TO 'slurm'@'%';",
    ]
    assert len(installs) == 1 and "--datadir=%s/data/data" % tmp_path in installs[0]
    assert oct((tmp_path / "init" / "init.sql").stat().st_mode & 0o777) == "0o600"
    _init(tmp_path, "new")  # the pod made again: the data directory stays, the password is set again
    assert len((tmp_path / "install.log").read_text().splitlines()) == 1


def test_the_real_chart_renders_the_accounting_as_the_operator_reads_it(slurm_chart):
    """Slinky's slurm chart 1.2.1, rendered by helm: the Accounting resource carries the model's storageConfig and
    the collection's ServiceAccount, the Controller references it, and the database is among the objects."""
    out = values(model({"enabled": True}))
    docs = slurm_chart(out)
    acct = docs[("Accounting", "slurm")]["spec"]
    assert acct["storageConfig"] == out["accounting"]["storageConfig"]
    assert acct["template"]["spec"]["serviceAccountName"] == "slurm-accounting"
    assert docs[("Controller", "slurm")]["spec"]["accountingRef"]["name"] == "slurm"
    assert docs[("StatefulSet", accounting.MANAGED)]["spec"]["template"]["spec"]["serviceAccountName"] == accounting.MANAGED
    assert ("Service", accounting.MANAGED) in docs
