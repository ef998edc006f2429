// What each threading model (fi_domain(3), "Threading") lets an
// application do, on every reliable case: under FI_THREAD_ENDPOINT,
// FI_THREAD_COMPLETION, FI_THREAD_FID and FI_THREAD_SAFE two threads, each
// driving one side of the pair (its endpoint and its CQ) and nothing else,
// exchange messages at the same time, unserialized; under FI_THREAD_DOMAIN
// they do the same with every call serialized by the application's own
// lock. Every message arrives once. Progress the library makes inside one
// side's CQ reads must not touch the other side's endpoint unguarded:
// under --config=tsan a race there is a failure.
#include <rdma/fi_errno.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fabric/conformance/endpoint_pair.h"

namespace ofi::conformance {
namespace {

struct ThreadingCase {
  fi_threading threading;
  const char* name;
};

constexpr ThreadingCase kThreadingCases[] = {
    {FI_THREAD_SAFE, "safe"},         {FI_THREAD_FID, "fid"},
    {FI_THREAD_ENDPOINT, "endpoint"}, {FI_THREAD_COMPLETION, "completion"},
    {FI_THREAD_DOMAIN, "domain"},
};

class ThreadingTest : public PairTest {};

// The application's serialization: a real lock under FI_THREAD_DOMAIN,
// nothing otherwise.
class AppSerializer {
 public:
  explicit AppSerializer(bool serializes) : serializes_(serializes) {}
  template <typename Call>
  auto operator()(Call call) {
    if (!serializes_) return call();
    std::lock_guard<std::mutex> lock(mutex_);
    return call();
  }

 private:
  bool serializes_;
  std::mutex mutex_;
};

constexpr uint64_t kMessages = 2000;
constexpr size_t kWindow = 8;

// One side's buffers: they outlive the side's thread, because receives it
// posted stay posted when it stops early, until the pair is closed.
struct Buffers {
  std::vector<uint64_t> out = std::vector<uint64_t>(kMessages);
  std::vector<uint64_t> in = std::vector<uint64_t>(kWindow);
};

// ExchangeAlone's exchange; it stops early when `stop` is set.
std::string ExchangeUntilStopped(Side& side, AppSerializer& serialize,
                                 Buffers& buffers,
                                 const std::atomic<bool>& stop) {
  std::vector<uint64_t>& out = buffers.out;
  std::vector<uint64_t>& in = buffers.in;
  std::vector<bool> seen(kMessages, false);
  for (size_t i = 0; i < kWindow; ++i) {
    ssize_t rc = serialize([&] {
      return fi_recv(side.ep, &in[i], sizeof(uint64_t), nullptr, FI_ADDR_UNSPEC,
                     &in[i]);
    });
    if (rc != 0) return absl::StrCat("fi_recv: ", rc);
  }
  uint64_t sent = 0;
  uint64_t send_done = 0;
  uint64_t received = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (received < kMessages || send_done < kMessages) {
    if (stop.load()) return "stopped: the other side failed";
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::StrCat("timed out: ", sent, " sent, ", send_done,
                          " completed, ", received, " received");
    }
    if (sent < kMessages && sent - send_done < kWindow) {
      out[sent] = sent;
      ssize_t rc = serialize([&] {
        return fi_send(side.ep, &out[sent], sizeof(uint64_t), nullptr,
                       side.peer, &out[sent]);
      });
      if (rc == 0) {
        ++sent;
      } else if (rc != -FI_EAGAIN) {
        return absl::StrCat("fi_send: ", fi_strerror(static_cast<int>(-rc)));
      }
    }
    absl::StatusOr<std::optional<Completion>> got =
        serialize([&] { return side.Poll(); });
    if (!got.ok()) return got.status().ToString();
    if (!got->has_value()) continue;
    const fi_cq_tagged_entry& entry = (*got)->entry;
    if (entry.flags & FI_SEND) {
      ++send_done;
      continue;
    }
    auto* slot = static_cast<uint64_t*>(entry.op_context);
    if (entry.len != sizeof(uint64_t) || *slot >= kMessages || seen[*slot]) {
      return absl::StrCat("message ", *slot, " (", entry.len,
                          " bytes) unknown or repeated");
    }
    seen[*slot] = true;
    ++received;
    ssize_t rc = serialize([&] {
      return fi_recv(side.ep, slot, sizeof(uint64_t), nullptr, FI_ADDR_UNSPEC,
                     slot);
    });
    if (rc != 0) return absl::StrCat("fi_recv: ", rc);
  }
  return "";
}

// Sends kMessages numbered messages to `side`'s peer and takes kMessages
// from it, reading only `side`'s CQ, until done or `stop`: "" or what went
// wrong (which sets `stop` for the other side).
std::string ExchangeAlone(Side& side, AppSerializer& serialize,
                          Buffers& buffers, std::atomic<bool>& stop) {
  std::string failure = ExchangeUntilStopped(side, serialize, buffers, stop);
  if (!failure.empty()) stop.store(true);
  return failure;
}

TEST_P(ThreadingTest, EachSideDrivenByItsOwnThreadDeliversEveryMessage) {
  int models_run = 0;
  for (const ThreadingCase& model : kThreadingCases) {
    SCOPED_TRACE(model.name);
    PairOptions options;
    options.threading = model.threading;
    absl::Status opened = OpenPair(options);
    if (absl::IsNotFound(opened)) {
      // The case does not offer this model (verbs: no FI_THREAD_FID).
      std::cout << "skipped " << model.name << ": " << opened.message() << "\n";
      continue;
    }
    ASSERT_TRUE(opened.ok()) << opened;
    if (!pair_.Reliable()) GTEST_SKIP() << "datagrams may be lost";
    ASSERT_EQ(pair_.info().domain_attr->threading, model.threading);
    AppSerializer serialize(model.threading == FI_THREAD_DOMAIN);
    Buffers a_buffers;
    Buffers b_buffers;
    std::atomic<bool> stop{false};
    std::string a_failure;
    std::thread a_thread(
        [&] { a_failure = ExchangeAlone(a(), serialize, a_buffers, stop); });
    std::string b_failure = ExchangeAlone(b(), serialize, b_buffers, stop);
    a_thread.join();
    EXPECT_EQ(a_failure, "");
    EXPECT_EQ(b_failure, "");
    ASSERT_TRUE(pair_.Close().ok());
    ++models_run;
  }
  if (models_run == 0) GTEST_SKIP() << "no threading model offered";
}

INSTANTIATE_CONFORMANCE_SUITE(ThreadingTest);

}  // namespace
}  // namespace ofi::conformance
