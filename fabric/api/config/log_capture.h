// File: fabric/api/config/log_capture.h
//
// For tests: every line the library logs while a LogCapture lives, at
// every level (fi_import_log replaces the library's logger; closing it
// restores the default).
#ifndef FABRIC_API_CONFIG_LOG_CAPTURE_H_
#define FABRIC_API_CONFIG_LOG_CAPTURE_H_

#include <rdma/fi_ext.h>

#include <mutex>
#include <string>
#include <vector>

namespace fabric {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Lines containing `text`.
  int Count(const std::string& text);

 private:
  static int Enabled(const fi_provider*, fi_log_level, fi_log_subsys, uint64_t);
  static void Log(const fi_provider*, fi_log_level, fi_log_subsys, const char*,
                  int, const char* msg);

  static inline std::mutex mutex_;
  static inline std::vector<std::string> lines_;
  fi_ops_log ops_;
  fid_logging logging_ = {};
};

}  // namespace fabric

#endif  // FABRIC_API_CONFIG_LOG_CAPTURE_H_
