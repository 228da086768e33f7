"""pg-templatize.py IN OUT KEY: turns the queries of one create, as
pg-log-queries.py extracts them from PostgreSQL's log (one query per line,
its statements separated by " \x1f "), into a pgbench script that replays
them with fresh ids and times, each query in one round trip as paykit sent
it (pgbench's "\;" joins a query's statements): every random id becomes a
per-transaction value, every timestamp literal now() plus its offset from
the create's first one, and the sandbox PSP's queries commit without
waiting for the disk, as the example server's PSP sessions do
(synchronous_commit off). With a 4th argument, a file holding the query
that prepares sqlstore's statements (one line, as pg-log-queries.py
prints it), each pgbench client sends it once, before its first
transaction, as paykit sends it once per connection (run the script with
pgbench -D prepared=0)."""
import re, sys
from datetime import datetime

src, dst = sys.argv[1], sys.argv[2]  # argv[3]: the create's idempotency key and reference
lines = [l.rstrip("\n") for l in open(src) if l.strip()]
tok = re.compile(r"\b(?:pi|po|re|co|job|evt|pay|trf|rfd)_[0-9a-z]{8,}\b")
ts = re.compile(r"'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\+00:00'")
ids, base = {}, None


def when(m):
    global base
    t = datetime.fromisoformat(m.group(1))
    base = base or t
    ms = round((t - base).total_seconds() * 1000)
    return f"(now() + interval '{ms} milliseconds')"


def literal(m):
    """Ids inside a literal become pgbench's :a (substituted in quotes too)
    with a suffix per distinct id, so each transaction writes new rows."""
    def one(t):
        ids.setdefault(t.group(0), len(ids))
        return f"{t.group(0).split('_')[0]}_:a-{ids[t.group(0)]}"
    return tok.sub(one, m.group(0))


out = ["\\set a random(1, 9000000000000000000)"]
prepares = [l.strip() for l in open(sys.argv[4])] if len(sys.argv) > 4 else []
prepares = [p for l in prepares if l for p in l.split(" \x1f ")]
if prepares:
    out += ["\\if :prepared = 0",  # pgbench -D prepared=0: per client
            " \\;\n".join(prepares) + ";",
            "\\set prepared 1", "\\endif"]
psp = {p.split()[1] for p in prepares if "sandbox_" in p}  # the sandbox PSP's
for q in lines:
    stmts = []
    for l in q.split(" \x1f "):
        l = ts.sub(when, l)
        l = re.sub(r"'(?:[^']|'')*'", literal, l)
        stmts.append(l)
    own = any("sandbox_" in l or (l.startswith("EXECUTE ") and l.split()[1].split("(")[0] in psp) for l in stmts)
    if own and stmts[0].upper() != "BEGIN":
        stmts = ["BEGIN", "SET LOCAL synchronous_commit = off"] + stmts + ["COMMIT"]
    out.append(" \\;\n".join(stmts) + ";")
text = "\n".join(out) + "\n"
text = re.sub(r"'" + re.escape(sys.argv[3]) + r"'", "'k_:a'", text)
open(dst, "w").write(text)
