#include "proto/roles.hpp"

namespace nf {

const char* access_name(access a) {
  switch (a) {
    case access::open:
      return "open";
    case access::reader:
      return "reader";
    case access::worker:
      return "worker";
    case access::operator_:
      return "operator";
    case access::admin:
      return "admin";
  }
  return "admin";
}

bool role_allows(const std::string& role, access a) {
  access held = role == "admin"      ? access::admin
                : role == "operator" ? access::operator_
                : role == "worker"   ? access::worker
                : role == "reader"   ? access::reader
                                     : access::open;
  return held != access::open && static_cast<int>(held) >= static_cast<int>(a);
}

} // namespace nf
