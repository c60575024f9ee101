-- Undoes 0038_poll_data.
DROP TABLE IF EXISTS "PollData";
