-- Undoes 0026_users.
DROP TABLE "Users";
