"""pg-log-queries.py DB [BEGIN END] < LOG: the queries one database's
sessions sent, from a PostgreSQL server log on stdin, one per line in the
order logged: a query's statements (sqlstore sends a batched transaction's
statements as one query, joined by ";\\n") are separated by " \\x1f ", and a
statement's own line breaks become spaces. With BEGIN and END, only the
queries logged between the lines that contain those markers. A log entry
starts with the date of its prefix; the lines that do not are the
continuation of the entry before. A statement sent with parameters
(extended protocol, logged as "execute NAME: QUERY" with its parameters
in a DETAIL line) prints as "PREPARE NAME AS QUERY", then the query
"EXECUTE NAME(parameters)", as the replay sends it."""
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
execute = re.compile(r"LOG:  (?:duration: [0-9.]+ ms  )?execute ([^:]+): (.*)", re.S)
param = re.compile(r"\$\d+ = ('(?:[^']|'')*'|NULL)")
for i, e in enumerate(entries):
    if f"@{db} " not in e:
        continue
    m = execute.search(e)
    if m:
        name, query = m.group(1).replace("<unnamed>", "unnamed"), " ".join(m.group(2).split())
        detail = entries[i + 1] if i + 1 < len(entries) and "DETAIL:  parameters: " in entries[i + 1] else ""
        print(f"PREPARE {name} AS {query}")
        print(f"EXECUTE {name}({', '.join(param.findall(detail))})")
        continue
    if "statement: " not in e:
        continue
    q = e.split("statement: ", 1)[1]
    stmts = [" ".join(s.split()) for s in q.split(";\n")]
    print(" \x1f ".join(s.rstrip(";") for s in stmts if s))
