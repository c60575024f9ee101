#pragma once

// The webhook receiver: a loopback HTTP server that answers 200 to every POST and
// appends its body, as one JSON line, to a log the history checker reads
// (`outbox_delivered`: every outbox event reached the sink).

#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include "tests/support/http_test_server.hpp"

namespace nf::fault {

class webhook_sink {
public:
  explicit webhook_sink(std::string log_path);
  ~webhook_sink();

  std::string url() const;
  const std::string& log_path() const { return log_path_; }
  int64_t received() const;

private:
  std::string log_path_;
  std::ofstream log_;
  mutable std::mutex mx_;
  int64_t received_ = 0;
  std::unique_ptr<test::http_test_server> server_;
};

/// Registers `url` as a webhook sink of the default namespace through node HTTP port
/// `http_port` (POST /api/webhooks/sinks); throws with the answer when refused.
void add_webhook_sink(uint16_t http_port, const std::string& url);

} // namespace nf::fault
