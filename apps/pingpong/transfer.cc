#include "apps/pingpong/transfer.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "apps/pingpong/result_table.h"
#include "apps/pingpong/test_sizes.h"

namespace pingpong {
namespace {

using Clock = std::chrono::steady_clock;

// fi_pingpong's tag for -m tagged (1234, seen in its messages on the wire),
// so that either side can be Debian's fi_pingpong.
constexpr uint64_t kTag = 1234;
constexpr char kFin[] = "fin";

// fi_pingpong's data pattern: the alphabet from a rotating start.
constexpr char kAlphabet[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr size_t kAlphabetLength = sizeof(kAlphabet) - 1;

// Iteration counters of the pattern; each side counts what it sends and
// what it receives, so both agree on every message.
struct DataPattern {
  unsigned sent = 0;
  unsigned received = 0;

  void Fill(char* buf, int size) {
    size_t index = (sent++ * 7) % kAlphabetLength;
    for (int i = 0; i < size; i++) {
      buf[i] = kAlphabet[index];
      index = (index + 1) % kAlphabetLength;
    }
  }

  bool Check(const char* buf, int size) {
    size_t index = (received++ * 7) % kAlphabetLength;
    for (int i = 0; i < size; i++) {
      if (buf[i] != kAlphabet[index]) {
        std::printf("Error at iteration=%u size=%d byte=%d\n", received, size,
                    i);
        return false;
      }
      index = (index + 1) % kAlphabetLength;
    }
    return true;
  }
};

// How the timed loop waits (Options::settle_us) and what it saw.
struct Waiting {
  int settle_us = 0;
  long empty_polls = 0;
};

// Reads one completion from `cq`; gives up after `timeout_s` seconds when
// it is not negative. With `waiting`, sleeps its settle time first and
// counts the polls that found nothing.
int WaitForCompletion(fid_cq* cq, int timeout_s, Waiting* waiting = nullptr) {
  if (waiting != nullptr && waiting->settle_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(waiting->settle_us));
  }
  auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    fi_cq_entry entry;
    ssize_t ret = fi_cq_read(cq, &entry, 1);
    if (ret > 0) return 0;
    if (ret == -FI_EAGAIN && waiting != nullptr) ++waiting->empty_polls;
    if (ret == -FI_EAVAIL) {
      fi_cq_err_entry error = {};
      fi_cq_readerr(cq, &error, 0);
      std::fprintf(stderr, "cq_readerr: %s\n",
                   fi_cq_strerror(cq, error.prov_errno, error.err_data,
                                  nullptr, 0));
      return -error.err;
    }
    if (ret != -FI_EAGAIN) return Report("fi_cq_read", static_cast<int>(ret));
    if (timeout_s >= 0 && Clock::now() > deadline) {
      std::fprintf(stderr, "%ds timeout expired\n", timeout_s);
      return -FI_ENODATA;
    }
  }
}

// Retries a post while the provider says -FI_EAGAIN (its queue is full),
// reading the transmit CQ so that progress can drain it.
template <typename Post>
int PostWithRetry(FabricObjects& objects, const char* call, Post post) {
  for (;;) {
    ssize_t ret = post();
    if (ret == 0) return 0;
    if (ret != -FI_EAGAIN) return Report(call, static_cast<int>(ret));
    fi_cq_entry entry;
    // Nothing is outstanding on the transmit side here, so no completion
    // can be taken away from a waiter.
    fi_cq_read(objects.tx_cq, &entry, 1);
  }
}

// Sends `size` bytes: small ones with fi_inject (no completion), others
// with fi_send and a wait for the completion.
int SendMessage(FabricObjects& objects, bool tagged, int size,
                Waiting& waiting) {
  fid_ep* ep = objects.ep;
  if (static_cast<size_t>(size) < objects.info->tx_attr->inject_size) {
    return PostWithRetry(objects, tagged ? "fi_tinject" : "fi_inject", [&] {
      return tagged ? fi_tinject(ep, objects.tx_buf, size, objects.peer, kTag)
                    : fi_inject(ep, objects.tx_buf, size, objects.peer);
    });
  }
  int ret = PostWithRetry(objects, tagged ? "fi_tsend" : "fi_send", [&] {
    return tagged ? fi_tsend(ep, objects.tx_buf, size, objects.desc,
                             objects.peer, kTag, &objects.tx_context)
                  : fi_send(ep, objects.tx_buf, size, objects.desc,
                            objects.peer, &objects.tx_context);
  });
  return ret ? ret : WaitForCompletion(objects.tx_cq, -1, &waiting);
}

// Waits for the posted receive to complete, then posts the next one.
int ReceiveMessage(FabricObjects& objects, bool tagged, int timeout_s,
                   Waiting& waiting) {
  int ret = WaitForCompletion(objects.rx_cq, timeout_s, &waiting);
  return ret ? ret : PostReceive(objects, tagged);
}

// `count` round trips of `size` bytes; counts the messages received.
int RoundTrips(const Options& options, bool is_client, int size, int count,
               FabricObjects& objects, DataPattern& pattern, long& received,
               Waiting& waiting) {
  for (int i = 0; i < count; i++) {
    for (bool sending : {is_client, !is_client}) {
      int ret;
      if (sending) {
        if (options.check_data) pattern.Fill(objects.tx_buf, size);
        ret = SendMessage(objects, options.tagged, size, waiting);
      } else {
        ret = ReceiveMessage(objects, options.tagged,
                             options.receive_timeout_s, waiting);
        // The receive just posted uses the same buffer, but nothing can
        // arrive in it before we answer.
        if (!ret && options.check_data &&
            !pattern.Check(objects.rx_buf, size)) {
          ret = -FI_EIO;
        }
        if (!ret) received++;
      }
      if (ret) return ret;
    }
  }
  return 0;
}

// One size: `iterations` round trips, timed; returns the elapsed time.
// Never inlined: bench:verbs_instructions counts the instructions inside
// it (callgrind --toggle-collect), and the warm-up's are outside.
__attribute__((noinline)) int TimedLoop(const Options& options,
                                        bool is_client, int size,
                                        FabricObjects& objects,
                                        DataPattern& pattern, long& received,
                                        int64_t& elapsed_usec,
                                        Waiting& waiting) {
  auto start = Clock::now();
  int ret = RoundTrips(options, is_client, size, options.iterations, objects,
                       pattern, received, waiting);
  if (ret) return ret;
  elapsed_usec = std::chrono::duration_cast<std::chrono::microseconds>(
                     Clock::now() - start)
                     .count();
  return 0;
}

}  // namespace

int PostReceive(FabricObjects& objects, bool tagged) {
  size_t size = objects.buffer.size() / 2;
  return PostWithRetry(objects, tagged ? "fi_trecv" : "fi_recv", [&] {
    return tagged ? fi_trecv(objects.ep, objects.rx_buf, size, objects.desc,
                             FI_ADDR_UNSPEC, kTag, 0, &objects.rx_context)
                  : fi_recv(objects.ep, objects.rx_buf, size, objects.desc,
                            FI_ADDR_UNSPEC, &objects.rx_context);
  });
}

int RunPingPong(const Options& options, bool is_client, OutOfBand& channel,
                FabricObjects& objects) {
  DataPattern pattern;
  bool header_printed = false;
  for (int size : TestSizes(options, objects.max_transfer)) {
    int ret = Sync(channel, is_client);
    if (ret) return ret;
    long received = 0;
    int64_t elapsed_usec = 0;
    Waiting waiting;
    waiting.settle_us = options.settle_us;
    if (options.warmup > 0) {
      long warm_received = 0;
      Waiting untimed;
      ret = RoundTrips(options, is_client, size, options.warmup, objects,
                       pattern, warm_received, untimed);
      if (ret) return ret;
    }
    ret = TimedLoop(options, is_client, size, objects, pattern, received,
                    elapsed_usec, waiting);
    if (ret) return ret;
    if (options.settle_us > 0 && is_client) {
      std::fprintf(stderr, "empty polls: %ld\n", waiting.empty_polls);
    }
    // The server reports what the client received.
    ret = ExchangeAckCount(channel, is_client, received);
    if (ret) return ret;
    if (options.iterations == 0) continue;  // fi_pingpong prints no row
    if (!header_printed) {
      std::fputs(ResultHeader().c_str(), stdout);
      header_printed = true;
    }
    std::fputs(
        ResultRow(size, options.iterations, received, elapsed_usec).c_str(),
        stdout);
    std::fflush(stdout);
  }
  return 0;
}

int Finish(const Options& options, FabricObjects& objects) {
  std::memcpy(objects.tx_buf, kFin, sizeof(kFin));
  iovec iov = {objects.tx_buf, sizeof(kFin)};
  // FI_TRANSMIT_COMPLETE: once it completes, our side may close.
  ssize_t ret;
  if (options.tagged) {
    fi_msg_tagged message = {};
    message.msg_iov = &iov;
    message.desc = &objects.desc;
    message.iov_count = 1;
    message.addr = objects.peer;
    message.tag = kTag;
    message.context = &objects.tx_context;
    ret = fi_tsendmsg(objects.ep, &message, FI_TRANSMIT_COMPLETE);
  } else {
    fi_msg message = {};
    message.msg_iov = &iov;
    message.desc = &objects.desc;
    message.iov_count = 1;
    message.addr = objects.peer;
    message.context = &objects.tx_context;
    ret = fi_sendmsg(objects.ep, &message, FI_TRANSMIT_COMPLETE);
  }
  if (ret) return Report("fi_sendmsg(fin)", static_cast<int>(ret));
  int result = WaitForCompletion(objects.tx_cq, -1);
  if (!result) {
    result = WaitForCompletion(objects.rx_cq, options.receive_timeout_s);
  }
  if (!result && std::strcmp(objects.rx_buf, kFin) != 0) {
    std::fprintf(stderr, "the peer's last message is not \"fin\"\n");
    result = -FI_EIO;
  }
  if (objects.info->ep_attr->type == FI_EP_MSG) {
    int shutdown = fi_shutdown(objects.ep, 0);
    if (shutdown && !result) result = Report("fi_shutdown", shutdown);
  }
  return result;
}

}  // namespace pingpong
