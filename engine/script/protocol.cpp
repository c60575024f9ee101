#include "engine/script/protocol.hpp"

#include <cerrno>

#include <sys/socket.h>
#include <unistd.h>

namespace nf::engine::script {

namespace {

void put_u32(std::string& out, std::uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

bool take_u32(std::string_view& in, std::uint32_t& v) {
  if (in.size() < 4)
    return false;
  auto b = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])); };
  v = b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
  in.remove_prefix(4);
  return true;
}

bool take_bytes(std::string_view& in, std::uint32_t n, std::string& out) {
  if (in.size() < n)
    return false;
  out.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

bool known(outcome k) {
  switch (k) {
    case outcome::ok:
    case outcome::error:
    case outcome::compile:
    case outcome::memory:
    case outcome::timeout:
    case outcome::crash: return true;
  }
  return false;
}

} // namespace

std::string encode(const request& r) {
  std::string out;
  out.reserve(13 + r.program.size() + r.input_json.size());
  out.push_back(static_cast<char>(r.lang));
  put_u32(out, r.memory_mb);
  put_u32(out, r.timeout_ms);
  put_u32(out, static_cast<std::uint32_t>(r.program.size()));
  out += r.program;
  out += r.input_json;
  return out;
}

std::string encode(const answer& a) {
  std::string out;
  out.push_back(static_cast<char>(a.kind));
  if (a.kind == outcome::ok) {
    put_u32(out, static_cast<std::uint32_t>(a.values.size()));
    for (const auto& v : a.values) {
      put_u32(out, static_cast<std::uint32_t>(v.size()));
      out += v;
    }
  } else {
    out += a.message;
  }
  return out;
}

std::optional<request> decode_request(std::string_view in) {
  request r;
  if (in.empty())
    return std::nullopt;
  auto lang = static_cast<language>(in[0]);
  if (lang != language::javascript && lang != language::jq)
    return std::nullopt;
  r.lang = lang;
  in.remove_prefix(1);
  std::uint32_t len = 0;
  if (!take_u32(in, r.memory_mb) || !take_u32(in, r.timeout_ms) || !take_u32(in, len)
      || !take_bytes(in, len, r.program))
    return std::nullopt;
  r.input_json.assign(in);
  return r;
}

std::optional<answer> decode_answer(std::string_view in) {
  answer a;
  if (in.empty())
    return std::nullopt;
  a.kind = static_cast<outcome>(in[0]);
  if (!known(a.kind))
    return std::nullopt;
  in.remove_prefix(1);
  if (a.kind != outcome::ok) {
    a.message.assign(in);
    return a;
  }
  std::uint32_t count = 0;
  if (!take_u32(in, count))
    return std::nullopt;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t len = 0;
    std::string v;
    if (!take_u32(in, len) || !take_bytes(in, len, v))
      return std::nullopt;
    a.values.push_back(std::move(v));
  }
  if (!in.empty())
    return std::nullopt;
  return a;
}

bool write_frame(int fd, std::string_view body) {
  if (body.size() > max_frame)
    return false;
  std::string buf;
  put_u32(buf, static_cast<std::uint32_t>(body.size()));
  buf += body;
  std::size_t done = 0;
  while (done < buf.size()) {
    auto n = ::send(fd, buf.data() + done, buf.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {

bool read_all(int fd, char* p, std::size_t n) {
  while (n > 0) {
    auto got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

} // namespace

std::optional<std::string> read_frame(int fd) {
  char head[4];
  if (!read_all(fd, head, 4))
    return std::nullopt;
  std::string_view h(head, 4);
  std::uint32_t len = 0;
  take_u32(h, len);
  if (len > max_frame)
    return std::nullopt;
  std::string body(len, '\0');
  if (!read_all(fd, body.data(), len))
    return std::nullopt;
  return body;
}

} // namespace nf::engine::script
