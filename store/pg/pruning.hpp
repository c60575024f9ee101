#pragma once

#include "store/pg/params.hpp"
#include "store/schema/sql_check.hpp"

namespace nf::store {

/// At most this many distinct keys are spelled out one parameter each; a batch with more
/// keys runs the statement as written. Sixteen hash partitions: a batch of more keys
/// than this touches most of them anyway.
inline constexpr size_t max_pruning_keys = 8;

/// The statement to run for `p`, and `p` completed for it.
///
/// A generic plan prunes partitions when the executor starts only on keys it sees one
/// by one: `"workflowId" = ANY($1::uuid[])` sets up a scan of all sixteen
/// `"TaskExecutions"` partitions (and locks them, and probes each index), while
/// `"workflowId" = ANY(ARRAY[$5::uuid, $6::uuid])` sets up the two the keys hash to.
/// For a statement declared with `statement::prune_on = K`, every `= ANY($K::uuid[])` in
/// its text is rewritten that way for a batch of 1..max_pruning_keys distinct keys: the
/// keys are appended to `p` (padded to 1, 2, 4 or 8) and a variant prepared under the name
/// `<name>/<slots>` is returned. A clause written as a comment,
/// `/*prune: AND x."workflowId" = ANY($K::uuid[]) */`, is live in the variants only: where a
/// batch-wide array would become an index condition of a per-row probe, the statement as
/// written would search the index once per key of the whole batch.
/// A variant is prepared with the array types its statement declares
/// (statement::typed_as): where `$K` was named in its ANY alone, the variant's text names
/// it nowhere, and the server could not tell its type from the text.
///
/// The monthly `"WorkflowExecutions"` partitions are found by `"startedAt"`, which an id
/// names only row by row (`uuid_extract_timestamp(id)`): a generic plan sets up and locks
/// all of them. For a statement declared with `statement::started_on = K`, whose
/// `$K::uuid[]` holds uuidv7 workflow ids, the variant turns `/*started: w."startedAt" */`
/// into `AND w."startedAt" BETWEEN uuid_extract_timestamp($a::uuid) AND
/// uuid_extract_timestamp($b::uuid)`, with the earliest and the latest id appended to `p`:
/// bounds every row of the batch satisfies, known when the executor starts, so it sets up
/// the one or two months the batch started in. Any size of batch; its name ends in `r`.
///
/// Otherwise (neither declared, no keys, too many keys, an id that is not a uuidv7) it
/// returns `st` and leaves `p` as it is. Thread-safe; a variant lives as long as the
/// process.
const statement& with_pruning_keys(const statement& st, params& p);

} // namespace nf::store
