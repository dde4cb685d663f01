#!/usr/bin/env bash
# Runs on a bare-metal host (a configless slurmd node: srun and scontrol read the config slurmd
# cached). For SECONDS seconds: a job step from here to every pod worker in NODES, one after the
# other, and beside them slurmctld's NodeAddr of each sampled every 0.25 s and compared with WANT
# (where this host reaches it). Each launch is given up to 120 s: one that waits for its allocation
# on a busy machine (right after slurmctld's restart, say) is slow, not failed; one that cannot reach
# a pod fails with srun's own error. Prints, one per line:
#   start EPOCH                 when the soak began (seconds since the epoch)
#   launches N failed F
#   failure T ERROR             one per failed launch (T: seconds into the soak when it began)
#   window NODE T LENGTH ADDR   one per stretch of samples with a NodeAddr other than WANT's
#   longest_window LENGTH       seconds (0 when none): the longest such stretch, to the sample
# Usage: nodeaddr_soak.sh SECONDS NODE=ADDR[,NODE=ADDR...]
set -u
seconds=$1
want=$2
nodes=$(tr ',' '\n' <<<"$want" | cut -d= -f1 | paste -sd, -)
count=$(tr ',' '\n' <<<"$want" | grep -c .)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s.%N)
end=$(awk -v s="$start" -v d="$seconds" 'BEGIN { printf "%d", s + d }')

# NodeAddr samples: "T NODE ADDR"
(
  while [ "$(date +%s)" -lt "$end" ]; do
    t=$(date +%s.%N)
    scontrol --oneliner show node "$nodes" 2>/dev/null \
      | awk -v t="$t" '{ for (i = 1; i <= NF; i++) { if ($i ~ /^NodeName=/) n = substr($i, 10); if ($i ~ /^NodeAddr=/) a = substr($i, 10) } print t, n, a }'
    sleep 0.25
  done
) >"$dir/addr" &
sampler=$!

launches=0
while [ "$(date +%s)" -lt "$end" ]; do
  t=$(date +%s.%N)
  launches=$((launches + 1))
  if ! out=$(timeout 120 srun -N"$count" -w "$nodes" -t 1 true 2>&1); then
    echo "$t $(tr '\n' ' ' <<<"$out")" >>"$dir/failures"
  fi
  sleep 1
done
wait "$sampler"

failed=0
[ ! -s "$dir/failures" ] || failed=$(wc -l <"$dir/failures")
echo "start $start"
echo "launches $launches failed $failed"
[ ! -s "$dir/failures" ] || awk -v s="$start" '{ t = $1; $1 = ""; printf "failure %.1f%s\n", t - s, $0 }' "$dir/failures"
# Stretches of wrong samples per node; a stretch lasts from its first wrong sample to the next
# right one (an upper bound, to the sampling interval).
awk -v s="$start" -v want="$want" '
  BEGIN { n = split(want, pairs, ","); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); w[kv[1]] = kv[2] } }
  {
    t = $1; node = $2; addr = $3; lastt = t
    if (!(node in w)) next
    if (addr != w[node]) { if (!(node in since)) { since[node] = t; seen[node] = addr } }
    else if (node in since) { close_window(node, t) }
  }
  function close_window(node, t,   len) {
    len = t - since[node]; printf "window %s %.1f %.2f %s\n", node, since[node] - s, len, seen[node]
    if (len > longest) longest = len
    delete since[node]
  }
  END {
    for (node in since) close_window(node, lastt)
    printf "longest_window %.2f\n", longest + 0
  }' "$dir/addr"
