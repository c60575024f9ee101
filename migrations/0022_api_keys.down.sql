-- Undoes 0022_api_keys.
DROP TABLE "SigningKeys";
DROP TABLE "ApiKeys";
DROP TYPE api_key_role;
