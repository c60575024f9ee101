-- Undoes 0018_statement_checks.
DROP FUNCTION "fail_if"(TEXT, TEXT);
