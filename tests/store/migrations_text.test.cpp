#define CAF_SUITE store.migrations_text
#include "caf/test/unit_test.hpp"

#include "store/schema/migrator.hpp"

using nf::store::checksum_text;

CAF_TEST(comments and layout are not part of the checksum text) {
  CAF_CHECK_EQUAL(checksum_text("-- what and why\nCREATE TABLE \"A\" (\n  \"x\" INT  -- a note\n);\n"),
                  "CREATE TABLE \"A\" ( \"x\" INT );");
  CAF_CHECK_EQUAL(checksum_text("SELECT /* one /* nested */ comment */ 1;\n\n\tSELECT 2;"),
                  "SELECT 1; SELECT 2;");
  CAF_CHECK_EQUAL(checksum_text("SELECT 1-- a comment right after\n;"), "SELECT 1 ;");
  CAF_CHECK_EQUAL(checksum_text("  \n-- only a comment\n"), "");
}

CAF_TEST(quoted text is kept as written) {
  CAF_CHECK_EQUAL(checksum_text("SELECT '--  not a comment',  \"a /* b */  c\";"),
                  "SELECT '--  not a comment', \"a /* b */  c\";");
  CAF_CHECK_EQUAL(checksum_text("SELECT 'it''s  -- ok', E'\\'  -- still quoted' -- gone\n;"),
                  "SELECT 'it''s  -- ok', E'\\'  -- still quoted' ;");
  // A function's body, comments and layout included, is what the server keeps.
  CAF_CHECK_EQUAL(checksum_text("AS $body$\nBEGIN\n  -- kept\n  RETURN $1;  /* kept */\nEND\n$body$;"),
                  "AS $body$\nBEGIN\n  -- kept\n  RETURN $1;  /* kept */\nEND\n$body$;");
  CAF_CHECK_EQUAL(checksum_text("SELECT $$ a $x$ -- b $$ -- c\n, $1, a$b$"),
                  "SELECT $$ a $x$ -- b $$ , $1, a$b$");
}

CAF_TEST(a change to the SQL changes the checksum text) {
  auto base = checksum_text("CREATE INDEX \"i\" ON \"T\" (\"a\");");
  CAF_CHECK_NOT_EQUAL(checksum_text("CREATE INDEX \"i\" ON \"T\" (\"b\");"), base);
  CAF_CHECK_NOT_EQUAL(checksum_text("CREATE INDEX \"i\" ON \"T\" (\"a\") WHERE \"a\";"), base);
  CAF_CHECK_NOT_EQUAL(checksum_text("AS $$ -- a\n $$;"), checksum_text("AS $$ -- b\n $$;"));
}
