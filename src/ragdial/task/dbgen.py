"""Seeded generator of the travel database: flights, trains and hotels for about one month, into SQLite.

Everything is invented (plausible cities, stations, timetables and prices); the same seed, start date and
number of days always give the same rows. Run it as ``ragdial task make-db``.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import sqlite3
from pathlib import Path

from ragdial.task.places import AIRLINES, CITIES, HOTEL_BRANDS, City

DEFAULT_START = dt.date(2026, 12, 1)
DEFAULT_DAYS = 30

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cities (name TEXT PRIMARY KEY, name_en TEXT NOT NULL, aliases TEXT NOT NULL);
CREATE TABLE places (name TEXT PRIMARY KEY, city TEXT NOT NULL REFERENCES cities(name), kind TEXT NOT NULL);
CREATE TABLE flights (
    id INTEGER PRIMARY KEY, flight_no TEXT NOT NULL, airline TEXT NOT NULL,
    dep_city TEXT NOT NULL, arr_city TEXT NOT NULL, dep_place TEXT NOT NULL, arr_place TEXT NOT NULL,
    date TEXT NOT NULL, dep_time TEXT NOT NULL, arr_time TEXT NOT NULL, arr_days INTEGER NOT NULL,
    seat_class TEXT NOT NULL, berth TEXT NOT NULL DEFAULT '', price INTEGER NOT NULL, seats INTEGER NOT NULL);
CREATE TABLE trains (
    id INTEGER PRIMARY KEY, train_no TEXT NOT NULL,
    dep_city TEXT NOT NULL, arr_city TEXT NOT NULL, dep_place TEXT NOT NULL, arr_place TEXT NOT NULL,
    date TEXT NOT NULL, dep_time TEXT NOT NULL, arr_time TEXT NOT NULL, arr_days INTEGER NOT NULL,
    seat_class TEXT NOT NULL, berth TEXT NOT NULL DEFAULT '', price INTEGER NOT NULL, seats INTEGER NOT NULL);
CREATE TABLE hotels (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, district TEXT NOT NULL,
    stars INTEGER NOT NULL, price INTEGER NOT NULL);
CREATE TABLE hotel_rooms (hotel_id INTEGER NOT NULL REFERENCES hotels(id), date TEXT NOT NULL,
    rooms INTEGER NOT NULL, PRIMARY KEY (hotel_id, date));
CREATE TABLE bookings (id INTEGER PRIMARY KEY, domain TEXT NOT NULL, item_id INTEGER NOT NULL,
    date TEXT NOT NULL, summary TEXT NOT NULL, quantity INTEGER NOT NULL DEFAULT 1,
    nights INTEGER NOT NULL DEFAULT 1, status TEXT NOT NULL DEFAULT 'booked',
    changed_into INTEGER REFERENCES bookings(id));
CREATE INDEX flights_route ON flights (dep_city, arr_city, date);
CREATE INDEX trains_route ON trains (dep_city, arr_city, date);
CREATE INDEX hotels_city ON hotels (city);
"""

CABINS = (("经济舱", 1.0), ("商务舱", 2.6), ("头等舱", 4.2))
# train type -> (speed km/h, [(seat class, berth, price per km)]); sleepers have one row per berth
TRAIN_TYPES: dict[str, tuple[int, list[tuple[str, str, float]]]] = {
    "G": (260, [("二等座", "", 0.46), ("一等座", "", 0.74), ("商务座", "", 1.45)]),
    "D": (200, [("二等座", "", 0.31), ("一等座", "", 0.50)]),
    "Z": (
        120,
        [
            ("硬卧", "上铺", 0.16),
            ("硬卧", "中铺", 0.17),
            ("硬卧", "下铺", 0.18),
            ("软卧", "上铺", 0.25),
            ("软卧", "下铺", 0.27),
        ],
    ),
    "T": (
        100,
        [
            ("硬座", "", 0.09),
            ("硬卧", "上铺", 0.15),
            ("硬卧", "中铺", 0.16),
            ("硬卧", "下铺", 0.17),
            ("软卧", "上铺", 0.24),
            ("软卧", "下铺", 0.26),
        ],
    ),
    "K": (
        85,
        [
            ("硬座", "", 0.08),
            ("硬卧", "上铺", 0.14),
            ("硬卧", "中铺", 0.15),
            ("硬卧", "下铺", 0.16),
            ("软卧", "上铺", 0.23),
            ("软卧", "下铺", 0.25),
        ],
    ),
}


def distance_km(a: City, b: City) -> float:
    """Great-circle distance between two cities (km), times 1.15 for the route not being straight."""
    lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
    dlat, dlon = lat2 - lat1, math.radians(b.lon - a.lon)
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h)) * 1.15


def _clock(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _flight_rows(rng: random.Random, dates: list[str]) -> list[tuple]:
    rows: list[tuple] = []
    airports = [c for c in CITIES if c.airports]
    for a in airports:
        for b in airports:
            if a is b or distance_km(a, b) < 450:
                continue
            dist = distance_km(a, b)
            base = 180 + 0.62 * dist
            for _ in range(rng.randint(2, 5)):
                code, airline = rng.choice(AIRLINES)
                number = f"{code}{rng.randint(1000, 9899)}"
                depart = rng.randrange(6 * 60 + 30, 22 * 60 + 30, 5)
                arrive = depart + int(dist / 720 * 60) + 35
                cabins = CABINS if rng.random() < 0.35 else CABINS[:2]
                dep_place, arr_place = rng.choice(a.airports), rng.choice(b.airports)
                for date in dates:
                    weekday = dt.date.fromisoformat(date).weekday()
                    demand = rng.uniform(0.55, 1.25) * (1.12 if weekday >= 4 else 1.0)
                    for cabin, factor in cabins:
                        price = int(round(base * demand * factor / 10) * 10)
                        seats = 0 if rng.random() < 0.06 else rng.randint(1, 40)
                        rows.append(
                            (
                                number,
                                airline,
                                a.name,
                                b.name,
                                dep_place,
                                arr_place,
                                date,
                                _clock(depart),
                                _clock(arrive),
                                arrive // 1440,
                                cabin,
                                "",
                                price,
                                seats,
                            )
                        )
    return rows


def _train_rows(rng: random.Random, dates: list[str]) -> list[tuple]:
    rows: list[tuple] = []
    railed = [c for c in CITIES if c.stations]
    for a in railed:
        for b in railed:
            if a is b:
                continue
            dist = distance_km(a, b)
            kinds = ["G", "G", "D"] if dist < 1300 else (["G"] if dist < 2300 else [])
            kinds += ["K", "T"] if dist < 900 else ["Z", "K", "T"]
            for index, kind in enumerate(kinds):
                speed, classes = TRAIN_TYPES[kind]
                number = f"{kind}{rng.randint(1, 99) if kind in 'ZTK' else rng.randint(100, 999)}{index}"
                minutes = int(dist / speed * 60) + 10
                if kind in "ZTK" and minutes > 8 * 60:
                    depart = rng.randrange(17 * 60, 23 * 60, 5)  # overnight trains leave in the evening
                else:
                    depart = rng.randrange(6 * 60, 21 * 60, 5)
                dep_place, arr_place = rng.choice(a.stations), rng.choice(b.stations)
                for date in dates:
                    for seat_class, berth, per_km in classes:
                        price = round(max(per_km * dist, 15))
                        seats = 0 if rng.random() < 0.05 else rng.randint(1, 80)
                        rows.append(
                            (
                                number,
                                a.name,
                                b.name,
                                dep_place,
                                arr_place,
                                date,
                                _clock(depart),
                                _clock(depart + minutes),
                                (depart + minutes) // 1440,
                                seat_class,
                                berth,
                                price,
                                seats,
                            )
                        )
    return rows


def _hotel_rows(rng: random.Random) -> list[tuple]:
    rows = []
    for city in CITIES:
        brands = rng.sample(HOTEL_BRANDS, k=7)
        for brand, stars in brands:
            district = rng.choice(city.districts)
            price = int(round((120 + 110 * (stars - 2) ** 1.6) * rng.uniform(0.8, 1.3) / 10) * 10)
            rows.append((f"{brand}({city.name}{district}店)", city.name, district, stars, price))
    return rows


def generate(
    path: str | Path, seed: int = 0, start: dt.date = DEFAULT_START, days: int = DEFAULT_DAYS
) -> dict[str, int]:
    """Write a fresh database to ``path`` (written to a temporary file, then moved); returns row counts."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    rng = random.Random(seed)
    dates = [(start + dt.timedelta(days=i)).isoformat() for i in range(days)]
    conn = sqlite3.connect(tmp)
    try:
        conn.executescript(SCHEMA)
        meta = {"seed": str(seed), "start": start.isoformat(), "days": str(days), "generator": "ragdial.task.dbgen/2"}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        for city in CITIES:
            conn.execute("INSERT INTO cities VALUES (?, ?, ?)", (city.name, city.name_en, ",".join(city.aliases)))
            for kind, names in (("airport", city.airports), ("station", city.stations)):
                conn.executemany("INSERT INTO places VALUES (?, ?, ?)", [(n, city.name, kind) for n in names])
        flights = _flight_rows(rng, dates)
        conn.executemany(
            "INSERT INTO flights (flight_no, airline, dep_city, arr_city, dep_place, arr_place, date, dep_time,"
            " arr_time, arr_days, seat_class, berth, price, seats) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            flights,
        )
        trains = _train_rows(rng, dates)
        conn.executemany(
            "INSERT INTO trains (train_no, dep_city, arr_city, dep_place, arr_place, date, dep_time, arr_time,"
            " arr_days, seat_class, berth, price, seats) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            trains,
        )
        hotels = _hotel_rows(rng)
        conn.executemany("INSERT INTO hotels (name, city, district, stars, price) VALUES (?,?,?,?,?)", hotels)
        rooms = [
            (hotel_id, date, 0 if rng.random() < 0.05 else rng.randint(1, 30))
            for hotel_id in range(1, len(hotels) + 1)
            for date in dates
        ]
        conn.executemany("INSERT INTO hotel_rooms VALUES (?, ?, ?)", rooms)
        conn.commit()
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    conn.close()
    tmp.replace(path)
    return {"flights": len(flights), "trains": len(trains), "hotels": len(hotels), "hotel_rooms": len(rooms)}
