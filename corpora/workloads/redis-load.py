"""Emits Redis protocol commands for a realistic keyspace (users, sessions,
event lists, leaderboards, cached JSON pages) on stdout, for redis-cli --pipe.
Arguments: first user id and number of users (default 0 150000); each batch
also touches existing users (visit counters, event lists)."""
import json, random, sys

FIRST_ID = int(sys.argv[1]) if len(sys.argv) > 1 else 0
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 150000
random.seed(7 + FIRST_ID)
out = sys.stdout.buffer
FIRST = "ana ben chloe dario elif femi greta hugo ines jonas kaori liam mei noor olga pablo".split()
LAST = "silva meyer tanaka okafor novak garcia rossi dubois kowalski jensen".split()
PAGES = ["/", "/search", "/cart", "/checkout", "/product", "/help", "/orders", "/profile"]

def cmd(*args):
    parts = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
    out.write(b"".join(parts))

for u in range(FIRST_ID, FIRST_ID + COUNT):
    f, l = random.choice(FIRST), random.choice(LAST)
    cmd("HSET", f"user:{u}", "name", f"{f.title()} {l.title()}", "email", f"{f}.{l}{u}@example.org",
        "city", random.choice(["Porto", "Kyoto", "Accra", "Quito", "Riga"]), "visits", random.randrange(500),
        "plan", random.choice(["free", "pro", "team"]))
    cmd("ZADD", "board:global", random.randrange(100000), f"user:{u}")
    if u % 3 == 0:
        cmd("SET", f"session:{u:08x}", json.dumps({"user": u, "cart": [random.randrange(900) for _ in range(random.randrange(6))], "locale": "en"}), "EX", 3600)
    if u % 5 == 0:
        for _ in range(random.randrange(4, 20)):
            cmd("RPUSH", f"events:{u}", f"{random.choice(PAGES)}?ref={random.randrange(99)} {random.randrange(10**9)}")
for _ in range(COUNT // 4):
    old = random.randrange(FIRST_ID + 1)
    cmd("HINCRBY", f"user:{old}", "visits", 1)
    cmd("RPUSH", f"events:{old}", f"{random.choice(PAGES)}?ref={random.randrange(99)} {random.randrange(10**9)}")
for p in range(FIRST_ID // 40, FIRST_ID // 40 + COUNT // 40):
    doc = {"sku": f"SKU-{p:05d}", "title": " ".join(random.choices(FIRST + LAST, k=5)),
           "price": round(random.uniform(1, 400), 2), "stock": random.randrange(1000),
           "tags": random.sample(["red", "blue", "eco", "new", "sale", "xl", "kids", "home"], 3)}
    cmd("SET", f"cache:product:{p}", json.dumps(doc))
out.flush()
