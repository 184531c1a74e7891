"""Emits SQL for the sqlite-cache workload on stdout, in batches: a shop's
customers, products, orders and click events (generated, seeded), then
queries over them, so that the sqlite3 shell's page cache fills with table
and index b-tree pages. Arguments: batches (default 6), seconds to wait
after each batch (default 4), seconds to wait before closing (default 0)."""
import random, sys, time

BATCHES = int(sys.argv[1]) if len(sys.argv) > 1 else 6
PAUSE = float(sys.argv[2]) if len(sys.argv) > 2 else 4
LINGER = float(sys.argv[3]) if len(sys.argv) > 3 else 0
random.seed(20261129)
out = sys.stdout
FIRST = "ana ben chloe dario elif femi greta hugo ines jonas kaori liam mei noor olga pablo quinn rosa sven tariq".split()
LAST = "silva meyer tanaka okafor novak garcia rossi dubois kowalski jensen haddad ito moreau popescu".split()
CITIES = [("Porto", "PT"), ("Kyoto", "JP"), ("Accra", "GH"), ("Quito", "EC"), ("Riga", "LV"),
          ("Lyon", "FR"), ("Pune", "IN"), ("Graz", "AT"), ("Tulsa", "US"), ("Cork", "IE")]
WORDS = ("steel oak linen cotton wool glass ceramic bamboo walnut copper matte glossy compact large "
         "portable wireless foldable classic modern rustic premium organic recycled waterproof").split()
KINDS = ["view", "search", "cart_add", "cart_remove", "checkout", "login", "logout", "review"]
PATHS = ["/", "/search", "/cart", "/checkout", "/product/", "/help", "/orders", "/profile"]
REFERRERS = ["https://www.example.com/", "https://news.example.net/deals", "newsletter-2026-11", "app://ios"]
STATUS = ["new", "paid", "packed", "shipped", "delivered", "returned", "cancelled"]

def q(s):
    return "'" + s.replace("'", "''") + "'"

def rows(table, cols, items, per=400):
    for i in range(0, len(items), per):
        vals = ",".join("(" + ",".join(r) + ")" for r in items[i:i + per])
        out.write(f"INSERT INTO {table}({cols}) VALUES {vals};\n")

out.write("PRAGMA cache_size=-600000; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;\n")
out.write("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT, country TEXT,"
          " signup TEXT, plan TEXT, balance REAL, visits INTEGER);\n"
          "CREATE TABLE products(id INTEGER PRIMARY KEY, sku TEXT, title TEXT, category TEXT, price REAL,"
          " stock INTEGER, weight_g INTEGER, description TEXT);\n"
          "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, qty INTEGER,"
          " total REAL, status TEXT, created TEXT, ship_code TEXT);\n"
          "CREATE TABLE events(id INTEGER PRIMARY KEY, customer_id INTEGER, ts INTEGER, kind TEXT, path TEXT,"
          " latency_us INTEGER, referrer TEXT);\n"
          "CREATE INDEX customers_email ON customers(email);\n"
          "CREATE INDEX orders_customer ON orders(customer_id, created);\n"
          "CREATE INDEX events_customer ON events(customer_id, ts);\n")
customers = products = orders = events = 0
for batch in range(BATCHES):
    out.write("BEGIN;\n")
    new = []
    for c in range(customers, customers + 40000):
        f, l = random.choice(FIRST), random.choice(LAST)
        city, country = random.choice(CITIES)
        new.append((str(c), q(f"{f.title()} {l.title()}"), q(f"{f}.{l}{c}@example.org"), q(city), q(country),
                    q(f"20{random.randrange(15, 26)}-{random.randrange(1, 13):02d}-{random.randrange(1, 29):02d}"),
                    q(random.choice(["free", "pro", "team"])), repr(round(random.uniform(-50, 5000), 2)),
                    str(random.randrange(2000))))
    rows("customers", "id,name,email,city,country,signup,plan,balance,visits", new)
    customers += 40000
    new = []
    for p in range(products, products + 2000):
        words = random.choices(WORDS, k=random.randrange(8, 30))
        new.append((str(p), q(f"SKU-{p:06d}-{random.randrange(36**3):03x}"), q(" ".join(words[:4]).title()),
                    q(random.choice(["home", "garden", "kitchen", "outdoor", "office", "kids"])),
                    repr(round(random.uniform(1, 900), 2)), str(random.randrange(5000)),
                    str(random.randrange(20, 30000)), q(" ".join(words))))
    rows("products", "id,sku,title,category,price,stock,weight_g,description", new)
    products += 2000
    new = []
    for o in range(orders, orders + 120000):
        qty = random.randrange(1, 6)
        new.append((str(o), str(random.randrange(customers)), str(random.randrange(products)), str(qty),
                    repr(round(qty * random.uniform(1, 900), 2)), q(random.choice(STATUS)),
                    q(f"2026-{random.randrange(1, 12):02d}-{random.randrange(1, 29):02d}T"
                      f"{random.randrange(24):02d}:{random.randrange(60):02d}:{random.randrange(60):02d}Z"),
                    q(f"{random.randrange(16**10):010X}") if random.random() < 0.3 else "NULL"))
    rows("orders", "id,customer_id,product_id,qty,total,status,created,ship_code", new)
    orders += 120000
    new = []
    for e in range(events, events + 200000):
        path = random.choice(PATHS)
        if path == "/product/":
            path += str(random.randrange(products))
        new.append((str(e), str(random.randrange(customers)), str(1780000000000 + e * 37 + random.randrange(37)),
                    q(random.choice(KINDS)), q(path), str(random.randrange(100, 900000)),
                    q(random.choice(REFERRERS)) if random.random() < 0.3 else "NULL"))
    rows("events", "id,customer_id,ts,kind,path,latency_us,referrer", new)
    events += 200000
    out.write("COMMIT;\n")
    out.write("SELECT country, count(*), round(sum(balance), 2) FROM customers GROUP BY country;\n"
              "SELECT status, count(*), round(avg(total), 2) FROM orders GROUP BY status;\n"
              "SELECT c.city, round(sum(o.total), 2) FROM orders o JOIN customers c ON c.id = o.customer_id"
              " GROUP BY c.city;\n"
              f"SELECT kind, count(*) FROM events WHERE customer_id < {customers // 10} GROUP BY kind;\n"
              "SELECT count(*) FROM products WHERE description LIKE '%waterproof%';\n")
    out.flush()
    time.sleep(PAUSE)
time.sleep(LINGER)
