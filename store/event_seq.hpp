#pragma once

// The allocation of a workflow's event seqs (DESIGN.md I8, gap-free history), spelt once for
// every statement that makes one: the append of events (store/events.cpp), the transitions'
// (store/task_transitions.cpp) and the decision's compare-and-set (store/decision_apply.cpp).
//
// The seqs come from the workflow's "WorkflowExecutions" row, never from a clock: an UPDATE
// of the row adds the number of events `n` to "lastSeq", and its row lock serialises every
// writer of the workflow until commit. So the n events take the seqs after the old
// "lastSeq", up to the new one the row holds then: event k of n is `"lastSeq" - n + k` of the
// updated row, unique and without gaps. A start writes its row with "lastSeq" 1 beside its
// WORKFLOW_STARTED event, seq 1 (store/workflows.cpp): nothing else can see the row before.
//
// A SET item of an UPDATE of "WorkflowExecutions" aliased `w`, `n` an expression of its FROM,
// as a string literal for the statement's text, which stays one constexpr statement
// (store/sql_check.hpp) and costs no statement or round trip of its own.
#define NF_ALLOCATE_SEQS(n) R"("lastSeq" = w."lastSeq" + )" n
