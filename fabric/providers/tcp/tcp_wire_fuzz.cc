#include "fabric/providers/tcp/tcp_wire_fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <random>

#include "fabric/api/core/status.h"
#include "fabric/hmem/hmem_copy.h"
#include "fabric/providers/stream/connection.h"
#include "fabric/providers/tcp/tcp_cm.h"
#include "fabric/providers/tcp/tcp_socket_stream.h"

namespace fabric {
namespace tcp {
namespace {

using Rng = std::mt19937_64;

uint64_t Below(Rng& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

// One message as the wire format (not the decoder) reads it.
struct Expected {
  stream::Header header;
  stream::RmaDescriptor descriptors[stream::kMaxRmaCount];
  std::string payload;  // the bytes present (fewer than size when cut)
  bool complete;
};

struct Prediction {
  std::vector<Expected> messages;
  int close_error;  // 0 (the stream ended) or -FI_EIO
};

bool HeaderValid(const stream::Header& h) {
  bool rma = h.op == 3 || h.op == 4;  // kWrite, kReadRequest
  if (h.op < 1 || h.op > 6 || (h.flags & ~3) != 0) return false;
  if (rma ? (h.rma_count < 1 || h.rma_count > 4) : h.rma_count != 0) {
    return false;
  }
  if ((h.op == 4 || h.op == 6) && h.size != 0) return false;
  return h.status <= 0 && (h.status == 0 || h.op == 5 || h.op == 6);
}

bool DescriptorsValid(const stream::Header& h, const stream::RmaDescriptor* d) {
  unsigned __int128 total = 0;
  for (int i = 0; i < h.rma_count; ++i) total += d[i].len;
  if (total > UINT64_MAX) return false;
  return h.op != 3 || total == h.size;
}

Prediction Predict(const std::string& s) {
  Prediction p{{}, 0};
  size_t at = 0;
  while (s.size() - at >= sizeof(stream::Header)) {
    Expected e = {};
    memcpy(&e.header, s.data() + at, sizeof(stream::Header));
    if (!HeaderValid(e.header)) {
      p.close_error = -FI_EIO;
      return p;
    }
    size_t head = sizeof(stream::Header) +
                  e.header.rma_count * sizeof(stream::RmaDescriptor);
    if (s.size() - at < head) return p;
    memcpy(e.descriptors, s.data() + at + sizeof(stream::Header),
           head - sizeof(stream::Header));
    if (!DescriptorsValid(e.header, e.descriptors)) {
      p.close_error = -FI_EIO;
      return p;
    }
    at += head;
    uint64_t present = std::min<uint64_t>(e.header.size, s.size() - at);
    e.payload = s.substr(at, present);
    e.complete = present == e.header.size;
    at += present;
    p.messages.push_back(e);
  }
  return p;
}

// What a peer of ours sends; `starts` gets each header's offset.
std::string ValidStream(Rng& rng, std::vector<size_t>* starts) {
  std::string s;
  int count = 1 + Below(rng, 4);
  for (int m = 0; m < count; ++m) {
    stream::Header h = {};
    h.op = 1 + Below(rng, 6);
    h.flags = Below(rng, 4);
    h.tag = rng();
    h.data = rng();
    h.id = rng();
    bool no_payload = h.op == 4 || h.op == 6;
    const uint64_t sizes[] = {0, 1 + Below(rng, 100), Below(rng, 20000),
                              16384 + Below(rng, 50000)};
    h.size = no_payload ? 0 : sizes[Below(rng, 4)];
    if ((h.op == 5 || h.op == 6) && Below(rng, 2)) h.status = -FI_EACCES;
    stream::RmaDescriptor d[stream::kMaxRmaCount] = {};
    if (h.op == 3 || h.op == 4) {
      h.rma_count = 1 + Below(rng, stream::kMaxRmaCount);
      uint64_t left = h.op == 3 ? h.size : Below(rng, 1 << 20);
      for (int i = 0; i < h.rma_count; ++i) {
        d[i] = {rng(), i + 1 == h.rma_count ? left : Below(rng, left + 1),
                rng()};
        left -= d[i].len;
      }
    }
    starts->push_back(s.size());
    s.append(reinterpret_cast<char*>(&h), sizeof(h));
    s.append(reinterpret_cast<char*>(d),
             h.rma_count * sizeof(stream::RmaDescriptor));
    for (uint64_t i = 0; i < h.size; ++i) s.push_back(static_cast<char>(rng()));
  }
  return s;
}

void FlipBits(Rng& rng, std::string* s) {
  if (s->empty()) return;
  for (int n = 1 + Below(rng, 8); n > 0; --n) {
    (*s)[Below(rng, s->size())] ^= static_cast<char>(1 << Below(rng, 8));
  }
}

std::string MakeStream(Rng& rng, const std::vector<std::string>& corpus) {
  std::vector<size_t> starts;
  std::string s = ValidStream(rng, &starts);
  // A copy of one header (the stream's bytes are not aligned for one),
  // written back when a case edits it.
  size_t at = starts[Below(rng, starts.size())];
  stream::Header header;
  memcpy(&header, &s[at], sizeof(header));
  stream::Header* h = &header;
  bool edited = true;
  switch (Below(rng, 9)) {
    case 0: edited = false; break;  // valid
    case 1:         // one field of one header
      switch (Below(rng, 5)) {
        case 0: h->op = rng(); break;
        case 1: h->flags = rng(); break;
        case 2: h->rma_count = rng(); break;
        case 3: h->status = rng(); break;
        default: h->size = rng(); break;
      }
      break;
    case 2: edited = false; s.resize(Below(rng, s.size())); break;
    case 3: h->size = Below(rng, 2) ? UINT64_MAX : uint64_t{1} << 40; break;
    case 4: {  // the edges of the known range, or anything past it
      const uint8_t ops[] = {0, 7, 8, 255,
                             static_cast<uint8_t>(7 + Below(rng, 249))};
      h->op = ops[Below(rng, 5)];
      break;
    }
    case 5: h->rma_count = Below(rng, 2) ? 5 + Below(rng, 65531) : 0; break;
    case 6:
      edited = false;
      s.resize(Below(rng, 512));
      for (char& c : s) c = static_cast<char>(rng());
      break;
    case 7: edited = false; FlipBits(rng, &s); break;
    default:
      edited = false;
      if (!corpus.empty()) s = corpus[Below(rng, corpus.size())];
      FlipBits(rng, &s);
      break;
  }
  if (edited) memcpy(&s[at], &header, sizeof(header));
  return s;
}

// The production handler interface, answering with random targets and
// checking every callback against the prediction.
class CheckingHandler : public stream::ConnectionHandler {
 public:
  CheckingHandler(Rng* rng, const Prediction* p) : rng_(*rng), p_(*p) {}

  stream::RxTarget OnHeader(const stream::Header& header,
                            const stream::RmaDescriptor* descriptors) override {
    if (closed_) Fail("OnHeader after OnClosed");
    if (in_message_) Fail("OnHeader inside a message");
    if (next_ >= p_.messages.size()) Fail("a message the stream lacks");
    if (!error_.empty()) return {};
    const Expected& e = p_.messages[next_];
    if (memcmp(&header, &e.header, sizeof(header)) != 0 ||
        memcmp(descriptors, e.descriptors,
               header.rma_count * sizeof(stream::RmaDescriptor)) != 0) {
      Fail("a header or descriptors other than sent");
    }
    in_message_ = true;
    target_ = {};
    target_.kind = static_cast<stream::RxTarget::Kind>(1 + Below(rng_, 3));
    if (target_.kind == stream::RxTarget::kBuffer) {
      buffer_.clear();
      target_.buffer = &buffer_;
    } else if (target_.kind == stream::RxTarget::kUser) {
      // Memory past `capacity` (in the iov, then beyond) must stay as is.
      uint64_t most = std::min<uint64_t>(header.size, 80000) + 64;
      target_.capacity = Below(rng_, most + 1);
      user_.assign(target_.capacity + 2 * kGuard, kCanary);
      size_t total = target_.capacity + kGuard, cut = Below(rng_, total + 1);
      iov_[0] = {user_.data(), cut};
      iov_[1] = {user_.data() + cut, total - cut};
      target_.iov = iov_;
      target_.iov_count = 2;
    }
    return target_;
  }

  void OnMessageDone(const stream::Header& header, size_t placed) override {
    if (closed_ || !in_message_) Fail("OnMessageDone out of place");
    if (!error_.empty()) return;
    const Expected& e = p_.messages[next_++];
    in_message_ = false;
    if (!e.complete) Fail("OnMessageDone for a cut message");
    const std::string& want = e.payload;
    switch (target_.kind) {
      case stream::RxTarget::kUser: {
        size_t n = std::min<uint64_t>(want.size(), target_.capacity);
        if (placed != n) Fail("placed bytes other than min(size, capacity)");
        if (memcmp(user_.data(), want.data(), n) != 0) Fail("payload differs");
        for (size_t i = n; i < user_.size(); ++i) {
          if (user_[i] != kCanary) Fail("a byte past the capacity written");
        }
        break;
      }
      case stream::RxTarget::kBuffer:
        if (placed != want.size() || std::string(buffer_.begin(),
                                                 buffer_.end()) != want) {
          Fail("buffered payload differs");
        }
        break;
      default:
        if (placed != 0) Fail("a discarded payload placed");
    }
  }

  void OnSent(std::unique_ptr<stream::TxEntry>) override { Fail("OnSent"); }
  void OnBacklog(bool) override { Fail("OnBacklog"); }
  void OnClosed(int error) override {
    if (closed_) Fail("OnClosed twice");
    closed_ = true;
    close_error_ = error;
  }

  // After the stream: what was predicted, all of it, happened.
  void Finish() {
    if (!closed_) return Fail("the stream ended without OnClosed");
    if (close_error_ != p_.close_error) Fail("OnClosed with another error");
    size_t done = p_.messages.size();
    if (!p_.messages.empty() && !p_.messages.back().complete) --done;
    if (next_ != done) Fail("messages missing");
  }

  const std::string& error() const { return error_; }
  int close_error() const { return close_error_; }

 private:
  static constexpr size_t kGuard = 16;
  static constexpr char kCanary = 0x5a;
  void Fail(const char* what) {
    if (error_.empty()) error_ = what;
  }

  Rng& rng_;
  const Prediction& p_;
  std::string error_;
  bool closed_ = false, in_message_ = false;
  int close_error_ = 1;
  size_t next_ = 0;
  stream::RxTarget target_;
  std::vector<char> buffer_, user_;
  iovec iov_[2];
};

bool Pair(int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return false;
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  fcntl(fds[1], F_SETFL, O_NONBLOCK);
  return true;
}

// Writes `s` into `w` in random pieces, calling `read` between them.
template <typename ReadFn>
void Feed(Rng& rng, int w, const std::string& s, ReadFn read) {
  size_t at = 0;
  while (at < s.size()) {
    size_t piece = 1 + Below(rng, Below(rng, 8) == 0 ? 64 : 70000);
    ssize_t n = send(w, s.data() + at, std::min(piece, s.size() - at),
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) at += n;
    if (n < 0 && errno != EAGAIN) break;  // the reader shut the socket
    if (!read()) break;
  }
  shutdown(w, SHUT_WR);
}

std::string StreamFailure(Rng& rng, const std::vector<std::string>& corpus,
                          const HmemCopier& copier, FuzzStats* stats) {
  std::string s = MakeStream(rng, corpus);
  Prediction p = Predict(s);
  int fds[2];
  if (!Pair(fds)) return "socketpair failed";
  CheckingHandler handler(&rng, &p);
  {
    stream::Connection connection(std::make_unique<SocketStream>(fds[0]),
                                  &handler, &copier);
    auto read = [&] {
      connection.Progress();
      return !connection.closed();
    };
    Feed(rng, fds[1], s, read);
    for (int i = 0; i < 1000 && read(); ++i) {
    }
    connection.Progress();  // closed: must call nothing
    handler.Finish();
  }
  close(fds[1]);
  stats->streams++;
  stats->messages += p.messages.size();
  (handler.close_error() == 0 ? stats->closed_clean : stats->closed_eio)++;
  return handler.error();
}

std::string CmFailure(Rng& rng, FuzzStats* stats) {
  CmHeader h = {0x4f464954, 1, static_cast<uint8_t>(1 + Below(rng, 3)),
                static_cast<uint16_t>(Below(rng, kMaxCmData + 1)),
                static_cast<uint16_t>(Below(rng, kMaxAuthKey + 1)),
                static_cast<uint16_t>(rng())};
  switch (Below(rng, 6)) {
    case 0: h.magic ^= 1u << Below(rng, 32); break;
    case 1: h.version = rng(); break;
    case 2: h.type = rng(); break;
    case 3: h.data_len = rng(); break;
    case 4: h.key_len = rng(); break;
    default: break;
  }
  std::string s(reinterpret_cast<char*>(&h), sizeof(h));
  // Mostly the whole body and a few bytes of what follows the handshake.
  size_t body = Below(rng, 4) ? h.key_len + h.data_len + Below(rng, 33)
                              : Below(rng, 1024);
  for (size_t i = 0; i < body; ++i) s.push_back(static_cast<char>(rng()));
  if (Below(rng, 4) == 0) s.resize(Below(rng, s.size()));
  // Independent prediction: kDone (with the rest left unread) or an error.
  bool bad = h.magic != 0x4f464954 || h.version != 1 || h.type < 1 ||
             h.type > 3 || h.data_len > kMaxCmData || h.key_len > kMaxAuthKey;
  size_t end = sizeof(h) + h.key_len + h.data_len;
  int want = s.size() < sizeof(h) ? -FI_ECONNRESET
             : bad                ? -FI_EIO
             : s.size() < end     ? -FI_ECONNRESET
                                  : 0;
  int fds[2];
  if (!Pair(fds)) return "socketpair failed";
  CmReader reader;
  CmReader::Result result = CmReader::kPending;
  auto read = [&] {
    if (result == CmReader::kPending) result = reader.Read(fds[0]);
    return true;
  };
  Feed(rng, fds[1], s, read);
  read();
  std::string rest;
  char buf[4096];
  for (ssize_t n; (n = recv(fds[0], buf, sizeof(buf), MSG_DONTWAIT)) > 0;) {
    rest.append(buf, n);
  }
  close(fds[0]);
  close(fds[1]);
  (result == CmReader::kDone ? stats->cm_done : stats->cm_failed)++;
  if (want != 0) {
    if (result != CmReader::kFailed || ToFiErrno(reader.error()) != want) {
      return "handshake: not the predicted failure";
    }
    return "";
  }
  if (result != CmReader::kDone) return "handshake: a valid one refused";
  if (reader.key() != s.substr(sizeof(h), h.key_len) ||
      std::string(reader.data().begin(), reader.data().end()) !=
          s.substr(sizeof(h) + h.key_len, h.data_len)) {
    return "handshake: key or data differ";
  }
  if (rest != s.substr(end)) return "handshake: read past its end";
  return "";
}

}  // namespace

bool RunWireFuzz(uint64_t seed, uint64_t iterations,
                 const std::vector<std::string>& corpus, FuzzStats* stats,
                 std::string* error) {
  Rng rng(seed);
  HmemCopier copier;
  for (uint64_t i = 0; i < iterations; ++i) {
    std::string what = StreamFailure(rng, corpus, copier, stats);
    if (what.empty()) what = CmFailure(rng, stats);
    if (!what.empty()) {
      *error = "seed " + std::to_string(seed) + " iteration " +
               std::to_string(i) + ": " + what;
      return false;
    }
  }
  return true;
}

}  // namespace tcp
}  // namespace fabric
