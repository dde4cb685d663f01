# A Slurm login node with Slinky's container contract: sackd + sshd under supervisord
# (slime.hybrid; see Containerfile.base and bin/login-entrypoint.sh). Read from
# SlinkyProject/containers @ 05efda0, schedmd/slurm/26.05/ubuntu26.04/Dockerfile, stages
# "sackd" and "login"; Slurm from Debian forky. Differences: no sssd/authselect (not in forky),
# no kubectl (upstream fetches it from pkgs.k8s.io, unreachable here), no openmpi.
ARG BASE
FROM $BASE
RUN apt-get update \
 && apt-get install -y sackd openssh-server \
 && apt-get clean && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /run/slurm && chown slurm:slurm /run/slurm \
 && rm -f /etc/ssh/ssh_host_*
COPY supervisor/sackd.conf supervisor/sshd.conf supervisor/notify-slurm.conf /etc/supervisor/conf.d/
COPY bin/login-entrypoint.sh /usr/local/bin/entrypoint.sh
RUN chmod 0755 /usr/local/bin/entrypoint.sh
EXPOSE 22/tcp
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
