-- Undoes 0037_request_ids.
DROP TABLE IF EXISTS "RequestIds";
