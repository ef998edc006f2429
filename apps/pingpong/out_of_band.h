// The out-of-band channel: how the two sides trade endpoint names, line up
// before each timed run and compare counts. It carries fi_pingpong's control
// messages byte for byte, so that over TCP each side can be fi_pingpong.
#ifndef APPS_PINGPONG_OUT_OF_BAND_H_
#define APPS_PINGPONG_OUT_OF_BAND_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pingpong {

// A reliable byte channel to the peer (a TCP control socket, or MPI).
// Errors are reported on stderr; the calls return 0 or a negative errno.
class OutOfBand {
 public:
  virtual ~OutOfBand() = default;
  virtual int Send(const void* data, size_t size) = 0;
  virtual int Recv(void* data, size_t size) = 0;  // exactly size bytes
};

// An endpoint name and its fi_info addr_format.
struct EndpointName {
  uint32_t addr_format = 0;
  std::vector<char> bytes;
};

// fi_pingpong's name message: length (network order), addr_format (host
// order, 4 bytes), the name.
int SendName(OutOfBand& channel, const EndpointName& name);
int RecvName(OutOfBand& channel, EndpointName& name);

// Both sides wait until the other arrives: the client sends "q", the server
// answers "a".
int Sync(OutOfBand& channel, bool is_client);

// The client tells the server how many messages it received; both then know
// the "#ack" column.
int ExchangeAckCount(OutOfBand& channel, bool is_client, long& ack_count);

}  // namespace pingpong

#endif  // APPS_PINGPONG_OUT_OF_BAND_H_
