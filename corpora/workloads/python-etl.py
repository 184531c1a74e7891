"""A small ETL job: generate orders, round-trip them through CSV, aggregate
per customer / product / day, emit JSON reports. Runs for argv[1] seconds."""
import collections, csv, datetime, io, json, random, re, statistics, sys, time

random.seed(42)
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
CITIES = ["Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Pune", "Austin", "Cork"]

def order(i):
    day = datetime.date(2025, 1, 1) + datetime.timedelta(days=random.randrange(365))
    return {
        "order_id": f"ORD-{i:08d}",
        "customer": f"cust{random.randrange(5000):05d}",
        "city": random.choice(CITIES),
        "product": f"SKU-{random.randrange(800):04d}",
        "qty": random.randint(1, 12),
        "price": round(random.uniform(0.5, 250.0), 2),
        "day": day.isoformat(),
        "note": " ".join(random.choices(WORDS, k=random.randint(3, 12))),
    }

deadline = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 40)
history = collections.deque(maxlen=6)
reports = []
n = 0
while time.time() < deadline:
    rows = [order(n + k) for k in range(40000)]
    n += len(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    parsed = list(csv.DictReader(io.StringIO(buf.getvalue())))
    by_cust = collections.defaultdict(float)
    by_prod = collections.Counter()
    by_day = collections.defaultdict(list)
    for r in parsed:
        total = int(r["qty"]) * float(r["price"])
        by_cust[r["customer"]] += total
        by_prod[r["product"]] += int(r["qty"])
        by_day[r["day"]].append(total)
    words = collections.Counter(m.group(0) for r in parsed for m in re.finditer(r"\w+", r["note"]))
    report = {
        "orders": len(parsed),
        "top_customers": sorted(by_cust.items(), key=lambda kv: -kv[1])[:50],
        "top_products": by_prod.most_common(50),
        "daily_median": {d: statistics.median(v) for d, v in sorted(by_day.items())},
        "words": words.most_common(20),
    }
    reports.append(json.dumps(report))
    history.append((parsed, by_cust, by_day))
print("processed", n, "orders,", len(reports), "reports")
