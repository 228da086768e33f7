-- PostgreSQL's 0014 makes the webhook fan-out a function; SQLite sends the
-- statement itself (events.go), so nothing changes here.
SELECT 1;
