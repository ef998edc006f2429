#!/usr/bin/env bash
# The example programs and Debian's fi_pingpong over our verbs provider,
# server and client processes on rxe0's address (10.0.2.15): run inside the
# soft-RoCE guest by apps_in_guest_test (tools/testing/rdma_vm/vm_test.sh),
# from the test's runfiles root.
#  - ib_rc_example with the slide's hints (FI_EP_MSG,
#    FI_PROTO_RDMA_CM_IB_RC): connection, messages, RMA write and read;
#  - rds_example on verbs RDM (FI_SOURCE, a reply to an address learnt from
#    the message, cancel);
#  - Debian's fi_pingpong -p verbs -e msg, -e rdm and -e dgram (UD queue
#    pairs), -c -S all, against our libfabric.so.1, and -e rdm with
#    FI_UNIVERSE_SIZE=1048576;
#  - our apps/pingpong -p verbs -e msg, -e rdm and -e dgram, -c -S all.
# Exits 1 when any fails.
set -uo pipefail
export PAIR_HOST=10.0.2.15
status=0
bash apps/testing/run_pair.sh apps/ib_rc_example/ib_rc_example \
  apps/ib_rc_example/test_expected.txt --prov verbs || status=1
bash apps/testing/run_pair.sh apps/rds_example/rds_example \
  apps/rds_example/verbs_test_expected.txt --prov verbs || status=1
for ep_type in msg rdm dgram; do
  bash tools/testing/fi_pingpong_pair.sh fabric/libfabric.so.1 verbs \
    "$ep_type" -S all || status=1
done
# Our own pingpong, server and client, every size (46 rows; datagrams up
# to rxe0's MTU of 1024 bytes: 21).
for ep_type in msg rdm; do
  bash apps/pingpong/pair_test.sh apps/pingpong/pingpong \
    apps/pingpong/pingpong 46 -p verbs -e "$ep_type" -c -S all -I 5 ||
    status=1
done
bash apps/pingpong/pair_test.sh apps/pingpong/pingpong apps/pingpong/pingpong \
  21 -p verbs -e dgram -c -S all -I 5 || status=1
# A universe as large as an MPI job's: libfabric 1.17's verbs RDM sizes its
# CQ from it and fails on soft-RoCE ("Unable to create verbs CQ": more than
# max_cqe, 32767); ours sizes nothing from it.
FI_UNIVERSE_SIZE=1048576 bash tools/testing/fi_pingpong_pair.sh \
  fabric/libfabric.so.1 verbs rdm -S 64 || status=1
exit "$status"
