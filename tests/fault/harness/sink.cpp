#include "tests/fault/harness/sink.hpp"

#include <stdexcept>

#include <boost/json.hpp>

#include "tests/support/http_client.hpp"

namespace nf::fault {

webhook_sink::webhook_sink(std::string log_path)
  : log_path_(std::move(log_path)), log_(log_path_, std::ios::app) {
  server_ = std::make_unique<test::http_test_server>();
  server_->on_request([this](const test::seen_request& req, size_t) {
    if (req.method != "POST")
      return test::canned_reply{405, "{}"};
    // One line per body: the relay's JSON re-serialized, so a body with a newline
    // inside cannot split a record.
    std::string line;
    try {
      line = boost::json::serialize(boost::json::parse(req.body));
    } catch (const std::exception&) {
      line = boost::json::serialize(boost::json::value(req.body));
    }
    std::lock_guard<std::mutex> g{mx_};
    log_ << line << "\n";
    log_.flush();
    ++received_;
    return test::canned_reply{};
  });
}

webhook_sink::~webhook_sink() {
  server_.reset();
}

std::string webhook_sink::url() const {
  return server_->url("/hook");
}

int64_t webhook_sink::received() const {
  std::lock_guard<std::mutex> g{mx_};
  return received_;
}

void add_webhook_sink(uint16_t http_port, const std::string& url) {
  test::http_client http{"127.0.0.1", http_port};
  auto body = boost::json::serialize(boost::json::object{{"url", url}});
  auto reply = http.post("/api/webhooks/sinks", body);
  if (reply.status != 201)
    throw std::runtime_error("POST /api/webhooks/sinks answered " + std::to_string(reply.status)
                             + ": " + reply.body);
}

} // namespace nf::fault
