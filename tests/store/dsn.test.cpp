#define CAF_SUITE store.dsn
#include "caf/test/unit_test.hpp"

#include "store/pg/dsn.hpp"

using nf::store::redact_secrets;

CAF_TEST(a URI keeps its user and host and loses its password) {
  CAF_CHECK_EQUAL(redact_secrets("postgresql://app:s3cret@db.example:5432/nf?sslmode=require"),
                  "postgresql://app:***@db.example:5432/nf?sslmode=require");
  // A raw '@' in the password: everything up to the last one before the path goes.
  CAF_CHECK_EQUAL(redact_secrets("postgres://app:p@ss@h/nf"), "postgres://app:***@h/nf");
  CAF_CHECK_EQUAL(redact_secrets("postgresql://h/nf?password=s3cret&sslmode=disable"),
                  "postgresql://h/nf?password=***&sslmode=disable");
}

CAF_TEST(a URI without a password is left as it is) {
  CAF_CHECK_EQUAL(redact_secrets("postgresql://app@h:5432/nf"), "postgresql://app@h:5432/nf");
  CAF_CHECK_EQUAL(redact_secrets("postgresql://h:5432/nf"), "postgresql://h:5432/nf");
  CAF_CHECK_EQUAL(redact_secrets("see http://h:80/x?a=b"), "see http://h:80/x?a=b");
}

CAF_TEST(key value form plain quoted and spaced) {
  CAF_CHECK_EQUAL(redact_secrets("host=h user=app password=s3cret dbname=nf"),
                  "host=h user=app password=*** dbname=nf");
  CAF_CHECK_EQUAL(redact_secrets("host=h PassWord = 'se cr\\'et' dbname=nf"),
                  "host=h PassWord = *** dbname=nf");
  // In key=value form '&' belongs to the value.
  CAF_CHECK_EQUAL(redact_secrets("password=a&b host=h"), "password=*** host=h");
}

CAF_TEST(PGPASSWORD and a DSN inside a sentence) {
  CAF_CHECK_EQUAL(redact_secrets("PGPASSWORD=s3cret psql"), "PGPASSWORD=*** psql");
  CAF_CHECK_EQUAL(redact_secrets("run `nodeflow migrate --dsn postgresql://u:pw@h/nf` now"),
                  "run `nodeflow migrate --dsn postgresql://u:***@h/nf` now");
}

CAF_TEST(keys that only end in password are not secrets of libpq) {
  CAF_CHECK_EQUAL(redact_secrets("passfile=/x user=password"), "passfile=/x user=password");
  CAF_CHECK_EQUAL(redact_secrets("mypassword=x"), "mypassword=x");
}

CAF_TEST(the password a DSN names is masked wherever a message quotes it) {
  CAF_CHECK_EQUAL(redact_secrets("FATAL: no s3cret here", "host=h password=s3cret"),
                  "FATAL: no *** here");
  CAF_CHECK_EQUAL(redact_secrets("FATAL: no s3cret here", "postgresql://u:s3cret@h/nf"),
                  "FATAL: no *** here");
  // Percent-encoded in the URI, decoded (as libpq reads it) in the message.
  CAF_CHECK_EQUAL(redact_secrets("got se cret", "postgresql://u:se%20cret@h/nf"), "got ***");
}

CAF_TEST(a message about a DSN that does not parse is withheld when the DSN has a password) {
  auto text = redact_secrets("missing \"=\" after \"Pw9x\" in connection info string",
                             "host=h password=Sekr1t Pw9x");
  CAF_CHECK(text.find("Pw9x") == std::string::npos);
  CAF_CHECK(text.find("withheld") != std::string::npos);
  // Without a password there is nothing to hide.
  CAF_CHECK_EQUAL(redact_secrets("missing \"=\" after \"x\"", "host=h x"),
                  "missing \"=\" after \"x\"");
}
