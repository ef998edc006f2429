// Work completions as an RC device reports them (made up here: the fields
// ibv_poll_cq(3) documents) become the fi_cq entries libfabric documents.
#include "fabric/providers/verbs/verbs_completion.h"

#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include "gtest/gtest.h"

namespace fabric {
namespace verbs {
namespace {

ibv_wc Completion(ibv_wc_opcode opcode, uint32_t byte_len = 0) {
  ibv_wc wc = {};
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = opcode;
  wc.byte_len = byte_len;
  return wc;
}

TEST(VerbsCompletionTest, SendsAndRmaReportWhatWasPosted) {
  int context;
  WorkRequest send{&context, FI_SEND | FI_MSG};
  fi_cq_tagged_entry entry = CompletionOf(Completion(IBV_WC_SEND), send);
  EXPECT_EQ(entry.op_context, &context);
  EXPECT_EQ(entry.flags, FI_SEND | FI_MSG);
  EXPECT_EQ(entry.len, 0u);
  WorkRequest read{&context, FI_RMA | FI_READ};
  entry = CompletionOf(Completion(IBV_WC_RDMA_READ, 4096), read);
  EXPECT_EQ(entry.flags, FI_RMA | FI_READ);
  EXPECT_EQ(entry.buf, nullptr);
}

TEST(VerbsCompletionTest, AReceiveReportsItsLengthBufferAndImmediateData) {
  char buf[64];
  WorkRequest recv{buf, FI_RECV | FI_MSG, buf};
  ibv_wc wc = Completion(IBV_WC_RECV, 17);
  fi_cq_tagged_entry entry = CompletionOf(wc, recv);
  EXPECT_EQ(entry.op_context, buf);
  EXPECT_EQ(entry.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(entry.len, 17u);
  EXPECT_EQ(entry.buf, buf);
  EXPECT_EQ(entry.data, 0u);
  // fi_senddata: the data travels as immediate data, in network order.
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.imm_data = htonl(0xabcd1234);
  entry = CompletionOf(wc, recv);
  EXPECT_EQ(entry.flags, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(entry.data, 0xabcd1234u);
}

TEST(VerbsCompletionTest, ARemoteWriteWithDataConsumesAReceive) {
  char buf[8];
  WorkRequest recv{buf, FI_RECV | FI_MSG, buf};
  ibv_wc wc = Completion(IBV_WC_RECV_RDMA_WITH_IMM, 4096);
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.imm_data = htonl(7);
  fi_cq_tagged_entry entry = CompletionOf(wc, recv);
  EXPECT_EQ(entry.op_context, buf);
  EXPECT_EQ(entry.flags, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
  EXPECT_EQ(entry.data, 7u);
  EXPECT_EQ(entry.len, 0u);
}

TEST(VerbsCompletionTest, FailedCompletionsGiveErrorEntries) {
  char buf[8];
  WorkRequest recv{buf, FI_RECV | FI_MSG, buf};
  ibv_wc wc = {};
  wc.status = IBV_WC_WR_FLUSH_ERR;
  wc.opcode = static_cast<ibv_wc_opcode>(0x55);  // not valid on error
  fi_cq_err_entry error = ErrorOf(wc, recv);
  EXPECT_EQ(error.op_context, buf);
  EXPECT_EQ(error.flags, FI_RECV | FI_MSG);
  EXPECT_EQ(error.buf, buf);
  EXPECT_EQ(error.err, FI_ECANCELED);
  EXPECT_EQ(error.prov_errno, IBV_WC_WR_FLUSH_ERR);
  WorkRequest write{nullptr, FI_RMA | FI_WRITE};
  wc.status = IBV_WC_REM_ACCESS_ERR;
  error = ErrorOf(wc, write);
  EXPECT_EQ(error.buf, nullptr);
  EXPECT_EQ(error.err, FI_EACCES);
}

TEST(VerbsCompletionTest, EveryStatusHasAnErrno) {
  EXPECT_EQ(ErrnoOfStatus(IBV_WC_SUCCESS), 0);
  EXPECT_EQ(ErrnoOfStatus(IBV_WC_LOC_LEN_ERR), FI_ETRUNC);
  EXPECT_EQ(ErrnoOfStatus(IBV_WC_RETRY_EXC_ERR), FI_ETIMEDOUT);
  EXPECT_EQ(ErrnoOfStatus(IBV_WC_RNR_RETRY_EXC_ERR), FI_ENORX);
  EXPECT_EQ(ErrnoOfStatus(IBV_WC_REM_OP_ERR), FI_EREMOTEIO);
  for (int status = IBV_WC_LOC_LEN_ERR; status <= IBV_WC_TM_RNDV_INCOMPLETE;
       ++status) {
    EXPECT_GT(ErrnoOfStatus(status), 0) << "status " << status;
  }
  EXPECT_EQ(ErrnoOfStatus(1000), FI_EIO);
}

}  // namespace
}  // namespace verbs
}  // namespace fabric
