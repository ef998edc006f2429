// The out-of-band channel under mpirun: MPI point-to-point messages to the
// other rank. MPI only launches the processes and carries these control
// messages; the data moves through the fabric.
#ifndef APPS_PINGPONG_MPI_CONTROL_H_
#define APPS_PINGPONG_MPI_CONTROL_H_

#include <memory>

#include "apps/pingpong/out_of_band.h"

namespace pingpong {

class MpiControl : public OutOfBand {
 public:
  // MPI_Init; fails unless there are exactly 2 ranks.
  static std::unique_ptr<MpiControl> Init(int* argc, char*** argv);
  ~MpiControl() override;  // MPI_Finalize

  // Rank 0 is the server, rank 1 the client.
  bool is_client() const { return rank_ == 1; }

  int Send(const void* data, size_t size) override;
  int Recv(void* data, size_t size) override;

 private:
  explicit MpiControl(int rank) : rank_(rank) {}
  int rank_;
};

}  // namespace pingpong

#endif  // APPS_PINGPONG_MPI_CONTROL_H_
