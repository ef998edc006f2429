#include "fabric/api/config/log_capture.h"

#include <rdma/fabric.h>

#include "gtest/gtest.h"

namespace fabric {

LogCapture::LogCapture() {
  ops_ = {0, &Enabled, nullptr, &Log};
  logging_.ops = &ops_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_.clear();
  }
  EXPECT_EQ(fi_import_log(FI_VERSION(1, 18), 0, &logging_), 0);
}

LogCapture::~LogCapture() { EXPECT_EQ(fi_close(&logging_.fid), 0); }

int LogCapture::Count(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  int count = 0;
  for (const std::string& line : lines_) {
    if (line.find(text) != std::string::npos) ++count;
  }
  return count;
}

int LogCapture::Enabled(const fi_provider*, fi_log_level, fi_log_subsys,
                        uint64_t) {
  return 1;
}

void LogCapture::Log(const fi_provider*, fi_log_level, fi_log_subsys,
                     const char*, int, const char* msg) {
  std::lock_guard<std::mutex> lock(mutex_);
  lines_.push_back(msg);
}

}  // namespace fabric
