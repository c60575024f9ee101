#define CAF_SUITE net.peer_links
#include "tests/support/deterministic.hpp"

#include <memory>
#include <string>
#include <vector>

#include "net/cluster/middleman_peers.hpp"
#include "net/cluster/peer_address.hpp"

using namespace nf;

CAF_TEST(an address is HOST and a port from 1 to 65535) {
  auto ok = net::parse_host_port("node-1.example.com:4511");
  CAF_REQUIRE(ok);
  CAF_CHECK_EQUAL(ok->host, "node-1.example.com");
  CAF_CHECK_EQUAL(ok->port, 4511);
  std::string why;
  for (const char* bad : {"node1", "node1:", ":4511", "a b:1", "h:0", "h:65536", "h:1x", "h:-1"}) {
    CAF_CHECK(!net::parse_host_port(bad, &why));
    CAF_CHECK(!why.empty());
  }
}

CAF_TEST_FIXTURE_SCOPE(peer_links_tests, test::deterministic_fixture)

// Each failed dial asks for one retry; every retry dials each node still down. Counted per
// partition and per failure, the retries multiplied every second.
CAF_TEST(a node that cannot be dialed is tried again once a second however many partitions it owns) {
  auto peers = std::make_shared<net::middleman_peers>(false, "a:1", caf::actor{}, "");
  auto retries = std::make_shared<int>(0);
  // Eight partitions owned by a node whose address does not parse; "b…" sorts after "a:1",
  // so this node is the one to dial it.
  std::vector<std::string> owners(8, "b.example.com");
  auto node = sys.spawn([peers, retries, owners](caf::event_based_actor* self) -> caf::behavior {
    peers->owners_known(self, owners);
    return {[=](peer_atom) {
      ++*retries;
      peers->reopen(self, owners);
    }};
  });
  spawned.push_back(node);
  drain();
  for (int i = 0; i < 4; ++i)
    advance(std::chrono::seconds{1});
  CAF_CHECK_EQUAL(*retries, 4);
}

CAF_TEST_FIXTURE_SCOPE_END()
