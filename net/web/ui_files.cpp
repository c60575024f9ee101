#include "net/web/ui_files.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace nf::net::web {

namespace {

std::string_view type_of(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".html"))
    return "text/html; charset=utf-8";
  if (ends(".js"))
    return "text/javascript; charset=utf-8";
  if (ends(".css"))
    return "text/css; charset=utf-8";
  if (ends(".svg"))
    return "image/svg+xml";
  return "application/json";
}

// FNV-1a: an ETag only has to change when the content does.
std::string etag_of(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

ui_asset asset_of(std::string_view path, std::string body) {
  ui_asset a;
  a.content_type = std::string{type_of(path)};
  a.etag = etag_of(body);
  a.body = std::move(body);
  return a;
}

// "/" and "/index.html" are the shell; every other file is under /ui/.
std::string_view file_path(std::string_view request_path) {
  if (request_path == "/" || request_path == "/index.html")
    return "/ui/index.html";
  return request_path;
}

// Letters, digits, '_', '-', '.', '/' and no ".." segment: nothing outside the folder.
bool safe(std::string_view p) {
  if (p.find("..") != std::string_view::npos || p.find("//") != std::string_view::npos)
    return false;
  for (char c : p)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'
          || c == '/'))
      return false;
  return true;
}

} // namespace

ui_files::ui_files(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty())
    return;
  for (const auto& f : embedded_ui()) {
    embedded_paths_.push_back(f.path);
    embedded_.push_back(asset_of(f.path, std::string{f.text}));
  }
}

bool ui_files::is_ui_path(std::string_view p) {
  return p == "/" || p == "/index.html" || p.substr(0, 4) == "/ui/";
}

std::optional<ui_asset> ui_files::find(std::string_view request_path) const {
  if (!is_ui_path(request_path))
    return std::nullopt;
  auto path = file_path(request_path);
  if (!safe(path))
    return std::nullopt;
  if (dir_.empty()) {
    for (size_t i = 0; i < embedded_paths_.size(); ++i)
      if (embedded_paths_[i] == path)
        return embedded_[i];
    return std::nullopt;
  }
  std::ifstream in{dir_ + std::string{path.substr(3)}, std::ios::binary};
  if (!in)
    return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return asset_of(path, text.str());
}

const char* ui_files::content_security_policy() {
  return "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
         "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
}

} // namespace nf::net::web
