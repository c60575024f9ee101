// `outbox_delivered` (I7): every outbox row a sink should have received and that is marked
// published appears in the sink's log at least once; every logged eventId is an outbox row
// whose type and workflow the delivery repeats; and a redelivery is byte for byte the same
// event (the same eventId and an identical body, compared as JSON).
//
// "Should have received": a row the relay published ("publishedAt" later than "createdAt";
// a row written while no sink was enabled is stored published at once and goes nowhere) of a
// namespace with an enabled sink that wants its type ("eventTypes" NULL or naming it).

#include <fstream>
#include <map>
#include <set>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "tests/fault/checker/rules.hpp"

namespace nf::fault::detail {

namespace {

struct delivery {
  int line = 0;
  boost::json::value body;
};

std::string text_of(const boost::json::value& v) {
  return v.is_string() ? std::string{v.as_string()} : boost::json::serialize(v);
}

} // namespace

rule_result check_outbox_delivered(store::connection& conn, const check_options& o) {
  tally t{"outbox_delivered"};
  if (o.sink_log_path.empty())
    return t.done();
  std::ifstream in{o.sink_log_path};
  if (!in) {
    t.could_not_check("cannot read the sink log " + o.sink_log_path);
    return t.done();
  }
  // eventId -> its deliveries, in log order.
  std::map<std::string, std::vector<delivery>> logged;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    t.checked();
    boost::json::error_code ec;
    auto v = boost::json::parse(line, ec);
    const boost::json::value* id = nullptr;
    if (!ec && v.is_object())
      id = v.as_object().if_contains("eventId");
    if (id == nullptr || !id->is_string()) {
      t.violation("sink log line " + std::to_string(n) + " is not a delivery with an eventId");
      continue;
    }
    logged[std::string{id->as_string()}].push_back({n, std::move(v)});
  }

  auto r = query(conn, t, R"(
SELECT o."eventId"::text AS "eventId", o."eventType", o."workflowId"::text AS "workflowId",
       o."publishedAt" > o."createdAt"
         AND o."createdAt" >= to_timestamp($1::bigint / 1000.0)
         AND EXISTS (SELECT 1 FROM "WebhookSinks" s
                      WHERE s."enabled" AND s."namespaceId" = o."namespaceId"
                        AND (s."eventTypes" IS NULL OR o."eventType" = ANY(s."eventTypes")))
         AS "owed"
  FROM "OutboxEvents" o
 ORDER BY o."id")",
                 store::params::of(o.since_ms));
  if (!r)
    return t.done();
  const int id = r->column_named("eventId"), type = r->column_named("eventType"),
            wf = r->column_named("workflowId"), owed = r->column_named("owed");
  std::set<std::string> known;
  for (int i = 0; i < r->rows(); ++i) {
    auto event = r->str(i, id);
    known.insert(event);
    auto it = logged.find(event);
    if (!r->is_null(i, owed) && r->boolean(i, owed)) {
      t.checked();
      if (it == logged.end()) {
        t.violation("event " + event + " (" + r->str(i, type) + ") published but never delivered");
        continue;
      }
    }
    if (it == logged.end())
      continue;
    // Every delivery of the event says what the row says, and says it the same way each time.
    const auto& first = it->second.front();
    const auto& body = first.body.as_object();
    auto said_type = body.if_contains("type");
    auto said_wf = body.if_contains("workflowId");
    std::string want_wf = r->is_null(i, wf) ? "null" : r->str(i, wf);
    if (said_type == nullptr || text_of(*said_type) != r->str(i, type) || said_wf == nullptr
        || text_of(*said_wf) != want_wf)
      t.violation("sink log line " + std::to_string(first.line) + " delivers event " + event
                  + " as " + (said_type ? text_of(*said_type) : "no type") + " of "
                  + (said_wf ? text_of(*said_wf) : "no workflow") + ", the outbox has "
                  + r->str(i, type) + " of " + want_wf);
    for (size_t k = 1; k < it->second.size(); ++k)
      if (it->second[k].body != first.body)
        t.violation("sink log line " + std::to_string(it->second[k].line) + " redelivers event "
                    + event + " with a body unlike line " + std::to_string(first.line) + "'s");
  }
  for (const auto& [event, deliveries] : logged)
    if (known.count(event) == 0)
      t.violation("sink log line " + std::to_string(deliveries.front().line) + " delivers event "
                  + event + ", which is no outbox row");
  return t.done();
}

} // namespace nf::fault::detail
