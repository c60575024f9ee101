-- Undoes 0033_schedules.
DROP TABLE "Schedules";
