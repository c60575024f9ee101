// nodeflow-sample-worker: runs the tasks of the sample_order workflow
// (config/samples/), written the way an application writes a worker against
// the nodeflow client library (net/client/client.hpp):
//
//   1. connect a nf::client to a node,
//   2. per task queue, a few threads that long-poll for work,
//   3. run the task on its input, report the result with the task's lease.
//
//   nodeflow-sample-worker [--node HOST:PORT] [--concurrency N] [--verbose]
//
// --verbose prints a line per task.
// It stops on SIGTERM/SIGINT and prints how many tasks it ran.

#include <atomic>
#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <boost/json.hpp>

#include "net/client/client.hpp"

namespace json = boost::json;

namespace {

// ---------------------------------------------------------------------------
// The tasks. Each takes the task's input object and returns an outcome: an
// output object, or a failure the engine retries (per the task definition's
// retryCount) unless it is terminal.

struct outcome {
  json::object output;
  std::string failure;   // empty = success
  bool terminal = false; // FAILED_WITH_TERMINAL_ERROR: never retried
};

outcome failed(std::string why, bool terminal = false) {
  return {{}, std::move(why), terminal};
}

// A short stable code derived from text, for ids the sample "systems" return.
std::string code(const std::string& prefix, const std::string& seed, size_t digits = 8) {
  std::string out = prefix;
  auto h = std::hash<std::string>{}(seed);
  for (size_t i = 0; i < digits; ++i, h /= 36)
    out.push_back("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[h % 36]);
  return out;
}

std::string text_of(const json::object& in, const char* key) {
  const auto* v = in.if_contains(key);
  if (v == nullptr)
    return {};
  return v->is_string() ? std::string{v->as_string()} : json::serialize(*v);
}

// Prices the order: every line needs a sku, a positive quantity and a price.
// A malformed order cannot get better by retrying, so it fails terminally.
outcome validate_order(const json::object& in, int /*attempt*/) {
  const auto* items = in.if_contains("items");
  if (items == nullptr || !items->is_array() || items->as_array().empty())
    return failed("the order has no items", true);
  int64_t total = 0;
  int64_t units = 0;
  for (const auto& line : items->as_array()) {
    const auto* l = line.if_object();
    const json::value* qty = l ? l->if_contains("qty") : nullptr;
    const json::value* price = l ? l->if_contains("priceCents") : nullptr;
    if (!qty || !price || !qty->is_int64() || !price->is_int64() || qty->as_int64() <= 0
        || price->as_int64() < 0)
      return failed("every item needs an integer qty > 0 and priceCents >= 0", true);
    units += qty->as_int64();
    total += qty->as_int64() * price->as_int64();
  }
  return {{{"valid", true}, {"units", units}, {"totalCents", total}}, {}, false};
}

outcome reserve_stock(const json::object& in, int /*attempt*/) {
  auto order = text_of(in, "orderId");
  return {{{"reservationId", code("R-", order)}, {"warehouse", "east"}}, {}, false};
}

// The sample payment gateway times out on the first attempt of every charge,
// to show the engine retrying a task after a failure.
outcome charge_card(const json::object& in, int attempt) {
  if (attempt == 0)
    return failed("card network timeout (simulated on the first attempt)");
  auto order = text_of(in, "orderId");
  return {{{"paymentId", code("P-", order + text_of(in, "amountCents"))},
           {"amountCents", in.contains("amountCents") ? in.at("amountCents") : json::value(0)},
           {"attempts", attempt + 1}},
          {},
          false};
}

outcome pack_parcel(const json::object& in, int /*attempt*/) {
  int64_t grams = 250; // the box
  if (const auto* items = in.if_contains("items"); items && items->is_array())
    for (const auto& line : items->as_array())
      if (const auto* l = line.if_object(); l && l->contains("qty") && l->at("qty").is_int64())
        grams += 350 * l->at("qty").as_int64();
  return {{{"parcelId", code("PCL-", text_of(in, "orderId"))}, {"weightGrams", grams}}, {}, false};
}

outcome book_courier(const json::object& in, int /*attempt*/) {
  if (text_of(in, "address").empty())
    return failed("no delivery address", true);
  return {{{"tracking", code("NF", text_of(in, "parcelId"), 10)}, {"carrier", "sample-express"}},
          {},
          false};
}

outcome send_receipt(const json::object& in, int /*attempt*/) {
  auto to = text_of(in, "email");
  return {{{"messageId", "<" + code("", to + text_of(in, "orderId"), 12) + "@receipts.example>"},
           {"to", to}},
          {},
          false};
}

// Queue name (= task definition name) → handler.
const std::map<std::string, std::function<outcome(const json::object&, int)>> handlers{
  {"validate_order", validate_order}, {"reserve_stock", reserve_stock},
  {"charge_card", charge_card},       {"pack_parcel", pack_parcel},
  {"book_courier", book_courier},     {"send_receipt", send_receipt},
};

// ---------------------------------------------------------------------------
// The worker loop.

std::atomic<bool> stopping{false};
bool verbose = false;
std::atomic<long> tasks_done{0};
std::atomic<long> tasks_failed{0};

extern "C" void on_signal(int) {
  stopping = true;
}

void work(nf::client& node, const std::string& queue, const std::string& worker_id) {
  auto run = handlers.at(queue);
  nf::msg::poll_request poll;
  poll.queue = queue;
  poll.worker_id = worker_id;
  poll.max_tasks = 1;
  poll.timeout_ms = 2000; // long poll: the node answers as soon as a task is ready

  while (!stopping) {
    auto tasks = node.poll(poll);
    if (!tasks) {
      // The node restarting is normal: the client reconnects on the next call.
      std::cerr << "poll " << queue << ": " << nf::describe(tasks.error()) << "\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    for (const auto& task : *tasks) {
      json::error_code ec;
      auto input = json::parse(task.input_json, ec);
      outcome result = ec || !input.is_object()
                         ? failed("task input is not a JSON object", true)
                         : run(input.as_object(), task.attempt);
      // Every report carries the task's lease token: if the lease expired and
      // the task went to another worker, the node answers `lease lost`.
      auto reply = result.failure.empty()
                     ? node.complete(task, json::serialize(result.output))
                     : node.fail(task, result.failure, result.terminal);
      if (!reply) {
        std::cerr << queue << " " << task.task_id << ": " << nf::describe(reply.error()) << "\n";
        continue;
      }
      ++(result.failure.empty() ? tasks_done : tasks_failed);
      if (verbose)
        std::cerr << queue << " task " << task.task_id << " attempt " << task.attempt << ": "
                  << (result.failure.empty() ? "completed" : "failed: " + result.failure) << "\n";
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  nf::client_options options;
  int concurrency = 4;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--node" && i + 1 < argc) {
      auto parsed = nf::parse_node_address(argv[++i]);
      if (!parsed) {
        std::cerr << "nodeflow-sample-worker: " << nf::describe(parsed.error()) << "\n";
        return 2;
      }
      options = *parsed;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--concurrency" && i + 1 < argc) {
      concurrency = std::atoi(argv[++i]);
      if (concurrency < 1 || concurrency > 256) {
        std::cerr << "nodeflow-sample-worker: --concurrency: expected 1 … 256\n";
        return 2;
      }
    } else {
      std::cerr << "usage: nodeflow-sample-worker [--node HOST:PORT] [--concurrency N] [--verbose]\n";
      return 2;
    }
  }
  nf::key_from_environment(options);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  nf::client node{options};
  std::string worker_id = "sample-worker-" + std::to_string(::getpid());
  std::vector<std::thread> threads;
  for (const auto& [queue, handler] : handlers)
    for (int i = 0; i < concurrency; ++i)
      threads.emplace_back(work, std::ref(node), queue, worker_id);
  std::cerr << "nodeflow-sample-worker: " << threads.size() << " pollers on " << handlers.size()
            << " queues at " << options.host << ":" << options.port << "\n";
  for (auto& t : threads)
    t.join();
  std::cout << "sample worker: " << tasks_done << " tasks completed, " << tasks_failed
            << " failed (and retried by the engine)" << std::endl;
  return 0;
}
