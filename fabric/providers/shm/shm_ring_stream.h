// File: fabric/providers/shm/shm_ring_stream.h
//
// One shm connection as the byte stream under a stream::Connection (the data
// path tcp and shm share): writes go into this side's outgoing ring of the
// connection segment, reads come from the other. It owns the segment's
// mapping. It has no fd: the endpoint reads it on every progress pass and,
// before sleeping, asks the peer for a doorbell (PrepareToSleep).
#ifndef FABRIC_PROVIDERS_SHM_SHM_RING_STREAM_H_
#define FABRIC_PROVIDERS_SHM_SHM_RING_STREAM_H_

#include <string>

#include "fabric/providers/shm/shm_doorbell.h"
#include "fabric/providers/shm/shm_layout.h"
#include "fabric/providers/shm/shm_ring.h"
#include "fabric/providers/shm/shm_segment.h"
#include "fabric/providers/stream/byte_stream.h"

namespace fabric {
namespace shm {

class RingStream : public stream::ByteStream {
 public:
  // The connector writes ring 0 (`out_index` 0), the acceptor ring 1.
  // `doorbell` (the endpoint's own, to send from) outlives the stream;
  // `peer_doorbell` names the peer's.
  RingStream(Segment segment, ConnectionArea* area, ByteRing in, ByteRing out,
             int out_index, const Doorbell* doorbell,
             std::string peer_doorbell);
  // Ends both directions, as a closed socket does: the peer reads the end
  // and its writes fail.
  ~RingStream() override;
  RingStream(const RingStream&) = delete;
  RingStream& operator=(const RingStream&) = delete;

  ssize_t Write(const iovec* iov, size_t count) override;
  ssize_t Read(const iovec* iov, size_t count) override;
  void Shutdown() override;
  int fd() const override { return -1; }
  bool CanPull() const override { return peer_pid_ > 0; }
  bool PeerCanPull() const override;
  ssize_t Pull(const iovec* to, size_t to_count, const iovec* from,
               size_t from_count) override;
  ssize_t Push(const iovec* from, size_t from_count, const iovec* to,
               size_t to_count) override;
  bool PeerAlive() const override;
  stream::CopyShare* IncomingShare() override {
    return &area_->copy[in_index_].share;
  }
  stream::CopyShare* OutgoingShare() override {
    return &area_->copy[out_index_].share;
  }
  // Null at the end of the stream or a corrupt ring, which a Read reports.
  const char* Peek(size_t* length) override;
  void Consume(size_t n) override;

  // Publishes this side's pid and probe word for the peer to test.
  void OfferProbe();
  // Tries to copy the peer's probe word (once the peer offered it); from
  // then on CanPull says whether that worked. Without `allowed` (FI_SHM_CMA
  // off) it does not try.
  void ProbePeer(bool allowed);

  // Bytes (or the end) wait to be read. (A closed writer is input either
  // way: what it wrote, or the end; AtEnd would look at the ring again.)
  bool HasInput() const { return in_.Readable() || in_.writer_closed(); }
  // Asks the peer to ring the doorbell when input arrives (and when room
  // does, if `want_room`); false when it is there already.
  bool PrepareToSleep(bool want_room);

  ConnectionArea* area() const { return area_; }
  const Segment& segment() const { return segment_; }

 private:
  // Rings the peer when its flag `flag` is set (clearing it).
  void WakePeerIf(std::atomic<uint32_t>& flag);

  Segment segment_;
  ConnectionArea* area_;
  ByteRing in_;
  ByteRing out_;
  int out_index_;
  int in_index_;
  const Doorbell* doorbell_;
  std::string peer_doorbell_;
  pid_t peer_pid_ = 0;  // set when ProbePeer could read the peer's memory
};

}  // namespace shm
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_SHM_SHM_RING_STREAM_H_
