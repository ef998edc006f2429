#!/bin/sh
# Open MPI's rsh agent (plm_rsh_agent) for mpirun_two_hosts_test, where the
# "hosts" are network namespaces. Called as ssh would be,
#   netns_rsh.sh HOST COMMAND...
# it runs COMMAND in HOST's namespace instead of on another machine.
# NETNS_RSH_HOSTS maps hosts to namespaces: "ADDR=NS ADDR=NS".
# Like ssh, it joins COMMAND's words with spaces for a shell to run: Open
# MPI quotes for that (e.g. -mca orte_hnp_uri "1234.0;tcp://10.77.0.1:5678").
host=$1
shift
for pair in $NETNS_RSH_HOSTS; do
  if [ "${pair%%=*}" = "$host" ]; then
    exec ip netns exec "${pair#*=}" sh -c "$*"
  fi
done
echo "netns_rsh.sh: no namespace for host $host (NETNS_RSH_HOSTS=$NETNS_RSH_HOSTS)" >&2
exit 255  # what ssh exits with when it cannot reach the host
