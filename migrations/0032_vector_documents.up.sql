-- 0032_vector_documents: "VectorIndexes", "VectorDocuments" and "VectorSignatures": embeddings a namespace stores
-- and searches by cosine similarity, and the SQL function "vector_cosine".
-- Decisions:
--   * Embeddings are real[], so retrieval works on a stock Postgres: no extension is required.
--     When the server has pgvector (pg_available_extensions lists `vector`), this migration
--     enables it and search casts the arrays to `vector`, so the distance is computed in C;
--     without it "vector_cosine" computes it in SQL. A server that lists it but refuses the
--     CREATE (no privilege) keeps the SQL path. The down leaves the extension: other schemas
--     may use it, and nothing here depends on it.
--   * An embedding is stored at unit length (the store normalises it), so the cosine of two
--     is their dot product: "vector_cosine" is that product, in double precision.
--   * An index's dimension is fixed by its first document ("VectorIndexes"."dimensions");
--     every later document and every query of it must have as many.
--   * "signature" holds the sign bit of every component. Without the extension a large index
--     is searched in two steps: the nearest signatures by Hamming distance (bit_count of an
--     XOR, built in and cheap), then the exact cosine over those candidates only.
--   * The signatures live in a narrow table of their own, "VectorSignatures", so the scan over
--     them reads ~10 MB for 100,000 documents of 384 dimensions instead of the documents'
--     ~200 MB (a 1.5 kB embedding is below the size at which Postgres moves a value out of
--     line, whatever toast_tuple_target says). A document and its signature are written by
--     one statement and deleted together (ON DELETE CASCADE).

CREATE TABLE "VectorIndexes" (
  "namespaceId" UUID        NOT NULL REFERENCES "Namespaces" ("id"),
  "name"        TEXT        NOT NULL CHECK ("name" ~ '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$'),
  "dimensions"  INTEGER     NOT NULL CHECK ("dimensions" BETWEEN 1 AND 4096),
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "name")
);

CREATE TABLE "VectorDocuments" (
  "namespaceId" UUID        NOT NULL,
  "indexName"   TEXT        NOT NULL,
  "documentId"  TEXT        NOT NULL CHECK (length("documentId") BETWEEN 1 AND 512),
  "embedding"   REAL[]      NOT NULL CHECK (array_ndims("embedding") = 1),
  "metadata"    JSONB       NOT NULL DEFAULT '{}',
  "text"        TEXT,
  "createdAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  "updatedAt"   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "indexName", "documentId"),
  FOREIGN KEY ("namespaceId", "indexName") REFERENCES "VectorIndexes" ("namespaceId", "name")
    ON DELETE CASCADE
);

CREATE TABLE "VectorSignatures" (
  "namespaceId" UUID        NOT NULL,
  "indexName"   TEXT        NOT NULL,
  "documentId"  TEXT        NOT NULL,
  "signature"   BIT VARYING NOT NULL,
  PRIMARY KEY ("namespaceId", "indexName", "documentId"),
  FOREIGN KEY ("namespaceId", "indexName", "documentId")
    REFERENCES "VectorDocuments" ("namespaceId", "indexName", "documentId") ON DELETE CASCADE
);

CREATE FUNCTION "vector_cosine"(a REAL[], b REAL[]) RETURNS DOUBLE PRECISION
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT sum(x::float8 * y::float8) FROM unnest(a, b) AS u(x, y) $$;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    CREATE EXTENSION IF NOT EXISTS vector;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'vector extension available but not created (%): search computes in SQL', SQLERRM;
END $$;
