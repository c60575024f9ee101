#include "net/web/exchange.hpp"

#include <boost/json.hpp>

#include "net/web/errors.hpp"
#include "proto/errors.hpp"

namespace nf::net::web {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view q) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!q.empty()) {
    auto amp = q.find('&');
    auto part = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    if (part.empty())
      continue;
    auto eq = part.find('=');
    auto name = percent_decode(part.substr(0, eq), true);
    auto value = eq == std::string_view::npos ? std::string{} : percent_decode(part.substr(eq + 1), true);
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

} // namespace

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

exchange::exchange(verb method, std::string target, std::map<std::string, std::string> headers,
                   std::string body, std::shared_ptr<connection_port> conn)
  : method_(method), headers_(std::move(headers)), body_(std::move(body)),
    conn_(std::move(conn)) {
  auto q = target.find('?');
  path_ = percent_decode(std::string_view{target}.substr(0, q), false);
  if (q != std::string::npos)
    query_all_ = parse_query(std::string_view{target}.substr(q + 1));
  for (const auto& [k, v] : query_all_)
    query_.emplace(k, v); // the first of repeated names (the router refuses repeats)
}

std::string exchange::header(std::string_view lower_name) const {
  auto it = headers_.find(std::string{lower_name});
  return it == headers_.end() ? std::string{} : it->second;
}

std::vector<std::string> exchange::query_all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : query_all_)
    if (k == name)
      out.push_back(v);
  return out;
}

const std::string* exchange::query(std::string_view name) const {
  auto it = query_.find(std::string{name});
  return it == query_.end() ? nullptr : &it->second;
}

const std::string& exchange::param(std::string_view name) const {
  static const std::string none;
  auto it = params_.find(std::string{name});
  return it == params_.end() ? none : it->second;
}

void exchange::respond(response r) {
  if (answered_.exchange(true))
    return;
  conn_->send(std::move(r));
}

void exchange::respond_json(unsigned status, const boost::json::value& v) {
  respond(response{status, "application/json", boost::json::serialize(v), {}});
}

void exchange::respond_text(unsigned status, std::string text) {
  respond(response{status, "text/plain", std::move(text), {}});
}

void exchange::fail(unsigned status, std::string message, std::string field) {
  response r{status, "application/json",
             boost::json::serialize(error_body(status, message, field)), {}};
  if (status == 429 || status == 503)
    r.headers.emplace_back("Retry-After", "1");
  respond(std::move(r));
}

void exchange::fail(const caf::error& err) {
  auto status = status_of(err);
  auto message = nf::message_of(err);
  fail(status, message, status == 400 ? field_of(message) : std::string{});
}

void exchange::open_stream(std::string content_type, header_list headers) {
  if (answered_.exchange(true))
    return;
  conn_->open_stream(std::move(content_type), std::move(headers));
}

bool exchange::write(std::string chunk) {
  if (gone_.load() || ended_.load())
    return false;
  conn_->stream_chunk(std::move(chunk));
  return true;
}

void exchange::end_stream() {
  if (ended_.exchange(true))
    return;
  conn_->end_stream();
}

void exchange::on_close(std::function<void()> f) {
  std::unique_lock lock{close_mutex_};
  if (gone_.load()) {
    lock.unlock();
    if (f)
      f();
    return;
  }
  on_close_ = std::move(f);
}

void exchange::closed_by_client() {
  if (gone_.exchange(true))
    return;
  std::function<void()> f;
  {
    std::lock_guard lock{close_mutex_};
    f = std::move(on_close_);
  }
  if (f)
    f();
}

} // namespace nf::net::web
