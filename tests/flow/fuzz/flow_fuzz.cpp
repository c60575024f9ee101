// libFuzzer target: arbitrary bytes as a task or workflow definition. Nothing
// may crash, leak or hit undefined behaviour; a definition that validates must
// round-trip exactly and survive decide() steps deterministically (the
// contract: a definition that validates never makes decide() fail).

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/json/serialize.hpp>

#include "flow/apply.hpp"
#include "flow/decide.hpp"
#include "flow/expression.hpp"
#include "flow/parse.hpp"
#include "flow/safe_expr.hpp"
#include "flow/serialise.hpp"
#include "flow/validate.hpp"
#include "flow/wait_time.hpp"

namespace {

void require(bool ok) {
  if (!ok)
    std::abort();
}

void round_trip(const nf::flow::workflow_def& def) {
  nf::flow::problems errs;
  require(nf::flow::read_workflow_def(nf::flow::to_json(def), "", errs) == def && errs.empty());
  auto again = nf::flow::load_workflow_def(boost::json::serialize(nf::flow::to_json(def)));
  require(again.ok() && again.def == def);
}

// Plays a worker that completes or fails tasks as the input's bytes say.
void run(const nf::flow::workflow_def& def, std::string_view bytes) {
  nf::flow::time_ms now = 1'700'000'000'000;
  auto snap = nf::flow::start_snapshot(def, "wf-fuzz", {{"k", static_cast<std::int64_t>(bytes.size() % 3)}},
                                   now);
  nf::flow::task_def_map defs;
  auto retrying = nf::flow::task_def::unregistered("retrying");
  retrying.retry_count = 2;
  retrying.retry_delay_seconds = 1;
  defs.emplace(retrying.name, retrying);
  for (std::size_t step = 0; step < 64 && !nf::flow::is_terminal(snap.status); ++step) {
    auto d = nf::flow::decide(def, defs, snap, now);
    require(nf::flow::decide(def, defs, snap, now) == d);
    snap = nf::flow::apply(std::move(snap), d, now);
    unsigned char b = bytes.empty() ? 0 : static_cast<unsigned char>(bytes[step % bytes.size()]);
    now += 1000 * (b % 4);
    for (auto& e : snap.tasks) {
      if (nf::flow::is_terminal(e.status) || e.type == nf::flow::task_type::join
          || e.type == nf::flow::task_type::do_while || e.type == nf::flow::task_type::wait)
        continue;
      e.status = b % 5 == 0 ? nf::flow::task_status::failed : nf::flow::task_status::completed;
      e.output = {{"v", static_cast<std::int64_t>(b)}};
      e.end_time = now;
      break;
    }
    if (b % 7 == 0)
      snap.signals.push_back({static_cast<std::int64_t>(step), "go", nullptr, now});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto wf = nf::flow::load_workflow_def(text);
  for (const auto& p : wf.errors)
    require(!nf::flow::to_string(p).empty());
  if (wf.ok()) {
    round_trip(wf.def);
    run(wf.def, text);
  }
  auto td = nf::flow::load_task_def(text);
  if (td.ok()) {
    nf::flow::problems errs;
    require(nf::flow::read_task_def(nf::flow::to_json(td.def), "", errs) == td.def && errs.empty());
  }
  // The small languages on raw text as well.
  nf::flow::safe_expr e;
  std::string error;
  boost::json::value v;
  if (e.compile(text, error))
    e.evaluate(boost::json::object{{"a", 1}, {"s", "x"}}, v, error);
  nf::flow::parsed_template t;
  if (nf::flow::parse_template(text, t, error)) {
    // ${…} with its functions against a small scope: a failed function is an error, never a crash.
    boost::json::object input{{"a", boost::json::array{1, 2.5, "x"}}, {"o", {{"k", 1}}}};
    nf::flow::scope s;
    s.input = &input;
    s.variables = &input;
    std::string why;
    nf::flow::resolve(boost::json::value(boost::json::string(text)), s, &why);
  }
  nf::flow::parse_duration_ms(text);
  nf::flow::parse_time(text);
  return 0;
}
