#include "control.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy.hpp"

namespace nf::fault {

namespace {

std::vector<std::string> split(const std::string& line) {
  std::istringstream in{line};
  std::vector<std::string> words;
  for (std::string w; in >> w;)
    words.push_back(w);
  return words;
}

std::string error(const std::string& why) {
  return "error " + why;
}

} // namespace

std::string execute(proxy& p, const std::string& line) {
  auto words = split(line);
  if (words.empty())
    return error("empty command (add, set, cut-after-commit, stats, sources, links, quit)");
  const auto& cmd = words[0];
  auto link_named = [&](link*& l) -> std::string {
    if (words.size() < 2)
      return cmd + " needs a link NAME";
    l = p.find(words[1]);
    return l ? "" : "no link named '" + words[1] + "'";
  };
  if (cmd == "add") {
    if (words.size() != 3)
      return error("add takes NAME TARGET_HOST:PORT");
    std::string why;
    auto target = parse_endpoint(words[2], why);
    if (!target)
      return error("add target: " + why);
    auto port = p.add_link(words[1], *target, 0, why);
    if (!port)
      return error(why);
    return "ok 127.0.0.1:" + std::to_string(*port);
  }
  if (cmd == "set") {
    link* l = nullptr;
    if (auto why = link_named(l); !why.empty())
      return error(why);
    // set NAME MODE... [from HOST]: the mode of that client address's connections only.
    std::vector<std::string> mode_words{words.begin() + 2, words.end()};
    std::string source;
    if (auto from = std::find(mode_words.begin(), mode_words.end(), "from");
        from != mode_words.end()) {
      std::string why;
      if (from + 2 != mode_words.end() || !parse_endpoint(*(from + 1) + ":1", why))
        return error("set " + words[1] + ": `from` takes one loopback address last, e.g. "
                     "from 127.0.0.11");
      source = *(from + 1);
      mode_words.erase(from, mode_words.end());
    }
    std::string why;
    auto m = parse_mode(mode_words, why);
    if (!m)
      return error(why);
    if (source.empty())
      l->set_mode(*m);
    else
      l->set_mode_from(source, *m);
    return "ok";
  }
  if (cmd == "cut-after-commit") {
    link* l = nullptr;
    if (auto why = link_named(l); !why.empty())
      return error(why);
    auto n = words.size() == 3 ? parse_count(words[2], 1000000) : std::nullopt;
    if (!n)
      return error("cut-after-commit takes NAME N, N a whole number from 0 to 1000000");
    l->cut_after_commit(*n);
    return "ok";
  }
  // A command that takes a link's NAME and nothing else.
  auto link_alone = [&](link*& l) -> std::string {
    if (auto why = link_named(l); !why.empty())
      return why;
    return words.size() == 2 ? "" : cmd + " takes only NAME";
  };
  if (cmd == "stats") {
    link* l = nullptr;
    if (auto why = link_alone(l); !why.empty())
      return error(why);
    return "ok " + l->stats();
  }
  if (cmd == "sources") {
    link* l = nullptr;
    if (auto why = link_alone(l); !why.empty())
      return error(why);
    std::string reply = "ok";
    for (const auto& s : l->sources())
      reply += " " + s;
    return reply;
  }
  if (cmd == "links" || cmd == "quit") {
    if (words.size() != 1)
      return error(cmd + " takes no arguments");
    if (cmd == "quit") {
      p.request_quit();
      return "ok";
    }
    std::string reply = "ok";
    for (auto& l : p.links())
      reply += " " + l->name() + "=" + std::to_string(l->port()) + "->" + to_string(l->target());
    return reply;
  }
  return error("unknown command '" + cmd
               + "' (add, set, cut-after-commit, stats, sources, links, quit)");
}

int run_ctl(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: nodeflow-fault-proxy ctl HOST:PORT COMMAND [WORDS...]\n");
    return 2;
  }
  std::string why;
  auto at = parse_endpoint(args[0], why);
  if (!at) {
    std::fprintf(stderr, "nodeflow-fault-proxy ctl: %s\n", why.c_str());
    return 2;
  }
  int fd = connect_blocking(*at, why);
  if (fd < 0) {
    std::fprintf(stderr, "nodeflow-fault-proxy ctl: %s\n", why.c_str());
    return 2;
  }
  std::string line;
  for (std::size_t i = 1; i < args.size(); ++i)
    line += (i > 1 ? " " : "") + args[i];
  line += "\n";
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    std::fprintf(stderr, "nodeflow-fault-proxy ctl: cannot send to %s\n", args[0].c_str());
    close(fd);
    return 2;
  }
  std::string reply;
  char c;
  pollfd pfd{fd, POLLIN, 0};
  while (poll(&pfd, 1, 10000) == 1 && recv(fd, &c, 1, 0) == 1 && c != '\n')
    reply += c;
  close(fd);
  if (reply.empty()) {
    std::fprintf(stderr, "nodeflow-fault-proxy ctl: no reply from %s\n", args[0].c_str());
    return 2;
  }
  std::printf("%s\n", reply.c_str());
  return reply.rfind("ok", 0) == 0 ? 0 : 1;
}

} // namespace nf::fault
