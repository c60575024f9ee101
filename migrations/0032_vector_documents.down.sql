-- Undoes 0032_vector_documents. The `vector` extension stays (see the up).
DROP FUNCTION "vector_cosine"(REAL[], REAL[]);
DROP TABLE "VectorSignatures";
DROP TABLE "VectorDocuments";
DROP TABLE "VectorIndexes";
