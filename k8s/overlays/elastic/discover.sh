#!/bin/sh
# Host discovery for pstrain-elastic in an MPIJob's launcher (mounted from the ConfigMap pstrain-elastic-discovery;
# the driver runs it every --discovery-interval). It reads the operator's own script, /etc/mpi/discover_hosts.sh,
# which mpi-operator v2 rewrites in the job's ConfigMap whenever a worker pod starts or stops Running: one
# `echo <pod>.<job>-worker.<namespace>.svc` line per Running worker, sorted by name, without slots. Two things are
# added here:
#   - slots: the driver wants `host:slots`; a line without ':' gets the MPIJob's slotsPerWorker, which the operator
#     passes to the launcher as OMPI_MCA_orte_set_default_slots;
#   - liveness: the kubelet refreshes a ConfigMap volume only every minute or so, so a worker that was killed stays
#     listed for that long; a host whose sshd (port DISCOVER_SSH_PORT, 2222) does not accept a connection within
#     3 s is left out now (the probes run in parallel). It comes back once it answers: the driver grows the job.
#     When no listed host answers, the probe itself is the likelier fault (DNS, a launcher starved of CPU: seen in
#     the rehearsal), so the operator's list is printed as it is and the driver's failure handling decides.
# Exit status: the operator's script's (missing or failing: the driver keeps its last good list).
set -eu
operator_script=${DISCOVER_HOSTS_SCRIPT:-/etc/mpi/discover_hosts.sh}
slots=${OMPI_MCA_orte_set_default_slots:-1}
port=${DISCOVER_SSH_PORT:-2222}
listed=$("$operator_script")
probes=$(mktemp -d)
trap 'rm -rf "$probes"' EXIT
index=0
for line in $listed; do
  case "$line" in *:*) ;; *) line="$line:$slots" ;; esac
  index=$((index + 1))
  (timeout 3 bash -c "exec 3<> /dev/tcp/${line%:*}/$port" 2> /dev/null && echo "$line" > "$probes/$index") &
done
wait
answered=$(ls "$probes")
index=0
for line in $listed; do  # in the operator's order
  case "$line" in *:*) ;; *) line="$line:$slots" ;; esac
  index=$((index + 1))
  if [ -f "$probes/$index" ] || [ -z "$answered" ]; then echo "$line"; fi
done
