-- Undoes 0007_timers (the parent takes every partition and its BIGSERIAL sequence with it).
DROP TABLE "Timers";
DROP TYPE timer_kind;
