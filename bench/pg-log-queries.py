"""pg-log-queries.py DB [BEGIN END] < LOG: the queries one database's
sessions sent, from a PostgreSQL server log on stdin, one per line in the
order logged: a query's statements (sqlstore sends a batched transaction's
statements as one query, joined by ";\\n") are separated by " \\x1f ", and a
statement's own line breaks become spaces. With BEGIN and END, only the
queries logged between the lines that contain those markers. A log entry
starts with the date of its prefix; the lines that do not are the
continuation of the entry before."""
import re, sys

db = sys.argv[1]
begin, end = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else (None, None)
entries, on = [], begin is None
start = re.compile(r"^\d{4}-\d\d-\d\d ")
for line in sys.stdin:
    line = line.rstrip("\n")
    if begin and begin in line:
        on = True
        continue
    if end and end in line:
        on = False
        continue
    if not on:
        continue
    if start.match(line) or not entries:
        entries.append(line)
    else:
        entries[-1] += "\n" + line
for e in entries:
    if f"@{db} " not in e or "statement: " not in e:
        continue
    q = e.split("statement: ", 1)[1]
    stmts = [" ".join(s.split()) for s in q.split(";\n")]
    print(" \x1f ".join(s.rstrip(";") for s in stmts if s))
