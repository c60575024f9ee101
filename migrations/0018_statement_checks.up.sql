-- 0018_statement_checks: "fail_if"(problem, code) raises `problem` with SQLSTATE `code` unless
-- it is NULL, and is true otherwise.
-- Decision where the seed is silent: the decider's writes end in the same round trip as their
-- COMMIT (docs/engine.md §3), so no check can wait for the client to read the results. A
-- statement whose rows must meet an expectation (the compare-and-set of I4 updates every
-- workflow it names) checks them itself with this function, in its WHERE clause as an
-- uncorrelated subquery, evaluated once. The error aborts the transaction before its COMMIT
-- runs. PL/pgSQL, so the planner can neither inline nor fold it; volatile, so it is called
-- at execution, never at planning.
CREATE FUNCTION "fail_if"(problem TEXT, code TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
  IF problem IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = problem;
  END IF;
  RETURN true;
END
$$;
