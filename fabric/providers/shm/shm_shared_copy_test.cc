// A large message copied by both sides of a real shm connection (two ring
// streams in this process, stream::Connection on each): when the sender's
// helper holds a chunk it has not written, the receiver's progress call
// returns instead of waiting, and the message completes, intact, on a
// later call once the chunk is written.
#include <string.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/api/core/address.h"
#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/shm/shm_connection.h"
#include "fabric/providers/shm/shm_doorbell.h"
#include "fabric/providers/shm/shm_names.h"
#include "fabric/providers/shm/shm_testing.h"
#include "fabric/providers/stream/connection.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

// Takes every message into `buffer`, and counts what it is told.
class Receiver : public stream::ConnectionHandler {
 public:
  explicit Receiver(std::vector<char>* buffer) : buffer_(buffer) {}
  stream::RxTarget OnHeader(const stream::Header&,
                            const stream::RmaDescriptor*) override {
    iov_ = {buffer_->data(), buffer_->size()};
    stream::RxTarget target;
    target.kind = stream::RxTarget::kUser;
    target.iov = &iov_;
    target.iov_count = 1;
    target.capacity = buffer_->size();
    return target;
  }
  void OnMessageDone(const stream::Header&, size_t placed) override {
    ++messages;
    last_placed = placed;
  }
  void OnSent(std::unique_ptr<stream::TxEntry>) override {}
  void OnClosed(int error) override { closed_with = error; }
  void OnBacklog(bool) override {}

  int messages = 0;
  size_t last_placed = 0;
  int closed_with = 1;  // 1: not closed

 private:
  std::vector<char>* buffer_;
  iovec iov_ = {};
};

class ShmSharedCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scope_ = TestPrefix();
    IpAddress a = LoopbackAddress(40001), b = LoopbackAddress(40002);
    absl::StatusOr<Doorbell> bell_a = Doorbell::Bind(DoorbellName(a, scope_));
    absl::StatusOr<Doorbell> bell_b = Doorbell::Bind(DoorbellName(b, scope_));
    ASSERT_TRUE(bell_a.ok()) << bell_a.status();
    ASSERT_TRUE(bell_b.ok()) << bell_b.status();
    bell_a_ = std::make_unique<Doorbell>(*std::move(bell_a));
    bell_b_ = std::make_unique<Doorbell>(*std::move(bell_b));
    absl::StatusOr<std::unique_ptr<RingStream>> sender =
        MakeConnection(a, "key", 1 << 16, bell_a_.get(), b, scope_);
    ASSERT_TRUE(sender.ok()) << sender.status();
    absl::StatusOr<AcceptedConnection> receiver = TakeConnection(
        (*sender)->segment().name(), "key", bell_b_.get(), true, scope_);
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    (*sender)->ProbePeer(true);
    ASSERT_TRUE((*sender)->CanPull());
    ASSERT_TRUE(receiver->stream->CanPull());
    receiver_share_ = receiver->stream->IncomingShare();
    receiver_stream_ = receiver->stream.get();
    sender_stream_ = sender->get();
    sender_ = std::make_unique<stream::Connection>(*std::move(sender), &unused_,
                                                   &copier_);
    receiver_ = std::make_unique<stream::Connection>(
        std::move(receiver->stream), &handler_, &copier_);
  }

  void TearDown() override {
    receiver_.reset();
    sender_.reset();
    RemoveShmNamesWithPrefix(scope_);
  }

  // Sends `source` as a message the receiver copies from this memory.
  void SendInPlace(const std::vector<char>& source, uint64_t id) {
    auto entry = std::make_unique<stream::TxEntry>();
    entry->header.op = static_cast<uint8_t>(stream::Op::kMsg);
    entry->header.flags = stream::kPayloadInSender | stream::kAckRequested;
    entry->header.rma_count = 1;
    entry->header.size = source.size();
    entry->header.id = id;
    entry->descriptors[0] = {reinterpret_cast<uint64_t>(source.data()),
                             source.size(), 0};
    sender_->Send(std::move(entry));
  }

  // Asks the sender, as a receiver would, through the sender's incoming
  // ring: help with payload `id` (kAssist `flags`), job `job`, `bytes`
  // bytes into `target`; then runs the sender's progress.
  void AskForHelp(uint64_t id, uint32_t job, uint64_t bytes, uint8_t flags,
                  std::vector<char>* target) {
    struct {
      stream::Header header;
      stream::RmaDescriptor where;
    } request = {};
    request.header.op = static_cast<uint8_t>(stream::Op::kAssist);
    request.header.flags = flags;
    request.header.id = id;
    request.header.tag = job;
    request.header.data = bytes;
    request.header.rma_count = 1;
    request.where = {reinterpret_cast<uint64_t>(target->data()), target->size(),
                     0};
    iovec iov = {&request, sizeof(request)};
    ASSERT_EQ(receiver_stream_->Write(&iov, 1),
              static_cast<ssize_t>(sizeof(request)));
    sender_->Progress();
  }

  // Starts copy job `job` of the sender's outgoing share, nothing claimed.
  void NewJob(uint32_t job) {
    stream::CopyShare* share = sender_stream_->OutgoingShare();
    share->sender_done.store(0);
    share->claim.store(uint64_t{job} << 32);
  }

  std::string scope_;
  std::unique_ptr<Doorbell> bell_a_, bell_b_;
  HmemCopier copier_;
  // 128 chunks: copying them takes milliseconds, time enough for the
  // helper thread to be scheduled and claim one even on a loaded machine.
  std::vector<char> received_ = std::vector<char>(64 << 20);
  Receiver handler_{&received_};
  std::vector<char> unused_buffer_ = std::vector<char>(16);
  Receiver unused_{&unused_buffer_};
  stream::CopyShare* receiver_share_ = nullptr;
  RingStream* sender_stream_ = nullptr;
  RingStream* receiver_stream_ = nullptr;
  std::unique_ptr<stream::Connection> sender_, receiver_;
};

TEST_F(ShmSharedCopyTest, AHelperHoldingAChunkDoesNotHoldTheReceiversCall) {
  std::vector<char> source(received_.size());
  for (size_t i = 0; i < source.size(); ++i) {
    source[i] = static_cast<char>(i * 7 + i / 4096);
  }
  const uint64_t kChunks = received_.size() / stream::kAssistChunk;
  bool held = false;
  for (int attempt = 0; attempt < 20 && !held; ++attempt) {
    std::fill(received_.begin(), received_.end(), 0);
    int messages = handler_.messages;
    SendInPlace(source, attempt + 1);
    // A stalled helper: claims one chunk of the receiver's job as soon as
    // there is one, and writes nothing.
    std::atomic<int64_t> claimed{-1};
    std::atomic<bool> stop{false};
    std::thread helper([&] {
      while (!stop.load()) {
        uint64_t word = receiver_share_->claim.load();
        uint64_t next = word & 0xffffffffu;
        if ((word >> 32) == 0 || next >= kChunks) continue;
        if (receiver_share_->claim.compare_exchange_strong(word, word + 1)) {
          claimed.store(static_cast<int64_t>(next));
          return;
        }
      }
    });
    receiver_->Progress();  // reads the header, copies, cannot finish
    stop.store(true);
    helper.join();
    if (claimed.load() < 0) {
      // The receiver claimed every chunk first: it had to finish.
      ASSERT_EQ(handler_.messages, messages + 1);
      continue;
    }
    held = true;
    EXPECT_EQ(handler_.messages, messages);  // returned, not done
    receiver_->Progress();
    EXPECT_EQ(handler_.messages, messages);  // still waiting, not blocked
    // The helper writes its chunk after all.
    size_t offset = static_cast<size_t>(claimed.load()) * stream::kAssistChunk;
    memcpy(received_.data() + offset, source.data() + offset,
           stream::kAssistChunk);
    receiver_share_->sender_done.fetch_add(1);
    receiver_->Progress();
    ASSERT_EQ(handler_.messages, messages + 1);
    EXPECT_EQ(handler_.last_placed, source.size());
    EXPECT_EQ(memcmp(received_.data(), source.data(), source.size()), 0);
    EXPECT_EQ(handler_.closed_with, 1);
  }
  EXPECT_TRUE(held) << "the helper thread never got a chunk";
}

// The sender's side: it helps only with a message it lent, for the job that
// is current, and never past what it lent; then it writes the chunks it
// claims into the receiver's memory.
TEST_F(ShmSharedCopyTest, TheSenderHelpsOnlyWithWhatItLent) {
  std::vector<char> source(8 * stream::kAssistChunk);
  for (size_t i = 0; i < source.size(); ++i) {
    source[i] = static_cast<char>(i * 13 + 5);
  }
  SendInPlace(source, /*id=*/7);
  stream::CopyShare* share = sender_stream_->OutgoingShare();
  // Room for more than the message: a request for more than was lent is
  // well-formed, and refused by the sender only.
  std::vector<char> target(source.size() + stream::kAssistChunk);
  auto ask = [&](uint64_t id, uint32_t job, uint64_t bytes) {
    AskForHelp(id, job, bytes, 0, &target);
  };
  NewJob(3);
  ask(/*id=*/6, 3, source.size());        // a message it did not lend
  ask(/*id=*/7, 4, source.size());        // not the current job
  ask(/*id=*/7, 3, source.size() + 1);    // more than it lent
  EXPECT_EQ(share->claim.load(), uint64_t{3} << 32);
  EXPECT_EQ(share->sender_done.load(), 0u);
  EXPECT_TRUE(std::all_of(target.begin(), target.end(),
                          [](char c) { return c == 0; }));
  ask(/*id=*/7, 3, source.size());  // a receiver that left it every chunk
  EXPECT_EQ(share->claim.load(), (uint64_t{3} << 32) | 8);
  EXPECT_EQ(share->sender_done.load(), 8u);
  EXPECT_EQ(share->sender_failed.load(), 0u);
  EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin()));
  EXPECT_EQ(unused_.closed_with, 1);  // the sender's connection lives on
}

// RMA payloads too: a write's, lent until its kAck like a message's, and a
// read's data, which the reader asks for by its own request id
// (kAssistsReadData; ids of another sequence than the sender's), once.
TEST_F(ShmSharedCopyTest, TheSenderHelpsWithWritesAndReadData) {
  std::vector<char> written(4 * stream::kAssistChunk + 5);
  std::vector<char> read(3 * stream::kAssistChunk + 7);
  for (size_t i = 0; i < written.size(); ++i) written[i] = char(i * 3 + 1);
  for (size_t i = 0; i < read.size(); ++i) read[i] = char(i * 5 + 2);
  std::vector<char> region(written.size());
  auto write = std::make_unique<stream::TxEntry>();
  write->header.op = static_cast<uint8_t>(stream::Op::kWrite);
  write->header.flags = stream::kPayloadInSender;
  write->header.rma_count = 2;
  write->header.tag = 1;  // the last descriptor is the payload's
  write->header.size = written.size();
  write->header.id = 9;
  write->descriptors[0] = {reinterpret_cast<uint64_t>(region.data()),
                           region.size(), 0};
  write->descriptors[1] = {reinterpret_cast<uint64_t>(written.data()),
                           written.size(), 0};
  sender_->Send(std::move(write));
  auto answer = std::make_unique<stream::TxEntry>();
  answer->header.op = static_cast<uint8_t>(stream::Op::kReadResponse);
  answer->header.flags = stream::kPayloadInSender;
  answer->header.rma_count = 1;
  answer->header.size = read.size();
  answer->header.id = 5;  // the reader's request
  answer->descriptors[0] = {reinterpret_cast<uint64_t>(read.data()),
                            read.size(), 0};
  sender_->Send(std::move(answer));
  stream::CopyShare* share = sender_stream_->OutgoingShare();
  std::vector<char> target(written.size());
  NewJob(3);
  AskForHelp(/*id=*/5, 3, read.size(), stream::kAssistsReadData, &target);
  EXPECT_EQ(share->sender_done.load(), 4u);  // every chunk of the read
  EXPECT_TRUE(std::equal(read.begin(), read.end(), target.begin()));
  std::fill(target.begin(), target.end(), 0);
  NewJob(4);
  AskForHelp(/*id=*/9, 4, written.size(), 0, &target);
  EXPECT_EQ(share->sender_done.load(), 5u);  // every chunk of the write
  EXPECT_TRUE(target == written);
  std::fill(target.begin(), target.end(), 0);
  NewJob(5);
  AskForHelp(/*id=*/5, 5, read.size(), stream::kAssistsReadData, &target);
  EXPECT_EQ(share->sender_done.load(), 0u);  // asked for once only
  EXPECT_TRUE(
      std::all_of(target.begin(), target.end(), [](char c) { return c == 0; }));
  EXPECT_EQ(unused_.closed_with, 1);
}

// The reader's side of a read's data: it asks with kAssistsReadData, and
// the helper copies the read's bytes, not those of a message it lent under
// the same id (the two sides' ids come from two sequences, which meet).
TEST_F(ShmSharedCopyTest, AReaderAsksForHelpWithTheReadsData) {
  std::vector<char> data(16 * stream::kAssistChunk), decoy(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(i * 11 + i / 4096);
    decoy[i] = static_cast<char>(~data[i]);
  }
  bool helped = false;
  for (int attempt = 0; attempt < 20 && !helped; ++attempt) {
    uint64_t id = 100 + attempt;
    SendInPlace(decoy, id);
    auto answer = std::make_unique<stream::TxEntry>();
    answer->header.op = static_cast<uint8_t>(stream::Op::kReadResponse);
    answer->header.flags = stream::kPayloadInSender;
    answer->header.rma_count = 1;
    answer->header.size = data.size();
    answer->header.id = id;
    answer->descriptors[0] = {reinterpret_cast<uint64_t>(data.data()),
                              data.size(), 0};
    sender_->Send(std::move(answer));
    std::atomic<bool> stop{false};
    std::thread sender_progress([&] {
      while (!stop.load()) sender_->Progress();
    });
    int messages = handler_.messages;
    // The message, then the read's data over it.
    while (handler_.messages < messages + 2 && handler_.closed_with == 1) {
      receiver_->Progress();
    }
    stop.store(true);
    sender_progress.join();
    ASSERT_EQ(handler_.closed_with, 1);
    EXPECT_EQ(memcmp(received_.data(), data.data(), data.size()), 0);
    helped = receiver_share_->sender_done.load() > 0;
  }
  EXPECT_TRUE(helped) << "the sender never helped with the read's data";
}

}  // namespace
}  // namespace shm
}  // namespace fabric
