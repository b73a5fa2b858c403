"""Query layer over the travel database (stdlib ``sqlite3``).

Supported database URLs: a plain file path, ``sqlite:///relative/or/absolute/path`` (SQLAlchemy style,
``sqlite:////abs/path`` also works) and ``sqlite://`` or ``:memory:`` for an empty in-memory database.
Other SQLAlchemy dialects (postgresql://, mysql://) are not supported and raise a RagdialError.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict, cast

from ragdial.errors import RagdialError
from ragdial.paths import cache_dir
from ragdial.task.values import as_int, as_str, items

DOMAINS = ("flight", "train", "hotel")
# the minutes from a flight's or train's departure to its arrival (``comparing.minutes`` in SQL)
_CLOCK = "(CAST(substr({0}, 1, 2) AS INTEGER) * 60 + CAST(substr({0}, 4, 2) AS INTEGER))"
RIDE_MINUTES = f"(arr_days * 1440 + {_CLOCK.format('arr_time')} - {_CLOCK.format('dep_time')})"
# the columns a booking has had since it carries its status (a database made before gets them by ``_migrate``)
BOOKING_COLUMNS = {
    "quantity": "INTEGER NOT NULL DEFAULT 1",
    "nights": "INTEGER NOT NULL DEFAULT 1",
    "status": "TEXT NOT NULL DEFAULT 'booked'",
    "changed_into": "INTEGER REFERENCES bookings(id)",
}


class Row(TypedDict, total=False):
    """A row of the travel database (the columns of ``dbgen.SCHEMA``'s tables): a flight, train or hotel
    (searched with a date: plus ``date`` and the ``rooms`` free), or a booking with its ``status``; an offer as the
    acts read it also carries its ``code`` (flights, trains) or ``brand`` (hotels)."""

    id: int
    flight_no: str
    train_no: str
    code: str
    brand: str
    airline: str
    dep_city: str
    arr_city: str
    dep_place: str
    arr_place: str
    date: str
    dep_time: str
    arr_time: str
    arr_days: int
    seat_class: str
    berth: str
    price: int
    seats: int
    name: str
    city: str
    district: str
    stars: int
    rooms: int
    domain: str
    item_id: int
    summary: str
    status: str
    quantity: int
    nights: int
    changed_into: int | None


def default_db_path() -> Path:
    """Where ``ragdial task make-db`` writes by default: ``<cache>/task/travel.sqlite``."""
    return cache_dir() / "task" / "travel.sqlite"


def ensure_travel_db(url: str | Path | None = None, announce: bool = True) -> str | Path:
    """The database at ``url`` (default: ``default_db_path()``), generated there first when it is a missing file.

    Called at start-up by everything that serves the task branch (the pipeline's task component, the rating
    pages), so a fresh machine gets the seeded default database with one progress line on stderr, and a request
    never meets a missing file. An in-memory URL or an existing file is returned as is.
    """
    import sys

    from ragdial.task.dbgen import generate

    url = url if url is not None else default_db_path()
    target = sqlite_target(url)
    if target == ":memory:" or Path(target).is_file():
        return url
    if announce:
        print(f"ragdial: travel database {target} not found, generating the seeded default ...", file=sys.stderr)
    try:
        counts = generate(target)
    except OSError as err:
        raise RagdialError(f"travel database {target}: cannot be created ({err})") from err
    if announce:
        print(f"ragdial: wrote {target}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()), file=sys.stderr)
    return url


def sqlite_target(url: str | Path) -> str:
    """The sqlite3 connect target for a path or ``sqlite:///`` URL."""
    text = str(url)
    if text in ("sqlite://", ":memory:"):
        return ":memory:"
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme != "sqlite":
            raise RagdialError(f"database URL {text!r}: only sqlite paths and sqlite:/// URLs are supported")
        text = rest[1:] if rest.startswith("/") else rest
    return text


@dataclass
class Gazetteer:
    """City names (with English names and aliases) and the places (airports, stations) of each city."""

    cities: dict[str, str] = field(default_factory=dict)  # surface form -> canonical Chinese city name
    places: dict[str, tuple[str, str]] = field(default_factory=dict)  # place name -> (city, kind)
    english: dict[str, str] = field(default_factory=dict)  # canonical city -> English name
    districts: dict[str, list[str]] = field(default_factory=dict)  # hotel district -> cities that have it
    brands: list[str] = field(default_factory=list)  # hotel brands (the name before the branch in brackets)
    airlines: dict[str, str] = field(default_factory=dict)  # airline name -> flight-number prefix


class TravelDB:
    """Read-only search plus booking over one travel database."""

    def __init__(self, url: str | Path | None = None, scratch: bool = False) -> None:
        """Open a database; ``scratch=True`` works on an in-memory copy, so bookings leave the file untouched."""
        target = sqlite_target(url if url is not None else default_db_path())
        if target != ":memory:" and not Path(target).is_file():
            raise RagdialError(f"travel database {target} not found: run `ragdial task make-db` first")
        self.url = str(url)
        if scratch:
            source = sqlite3.connect(target)
            self.conn = sqlite3.connect(":memory:", check_same_thread=False)
            source.backup(self.conn)
            source.close()
        else:
            self.conn = sqlite3.connect(target, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        try:
            self.meta = {row["key"]: row["value"] for row in self.conn.execute("SELECT key, value FROM meta")}
        except sqlite3.DatabaseError as err:
            raise RagdialError(f"{target}: not a ragdial travel database ({err})") from err
        self._gazetteer: Gazetteer | None = None
        self._dates: list[str] | None = None
        self.lock = threading.RLock()  # one connection shared by the service's worker threads
        self._migrate(target)

    def _migrate(self, target: str) -> None:
        """Bring a database made before bookings had a status up to date, in one transaction: add ``quantity``,
        ``nights``, ``status`` (``booked`` = live, ``cancelled``, ``changed``) and ``changed_into`` (the booking
        a change made), mark the bookings listed in the old ``cancellations`` table cancelled, and drop it."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(bookings)")}
        if not columns or BOOKING_COLUMNS.keys() <= columns:
            return
        try:
            with self.conn:
                for name, kind in BOOKING_COLUMNS.items():
                    if name not in columns:
                        self.conn.execute(f"ALTER TABLE bookings ADD COLUMN {name} {kind}")
                old = self.conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cancellations'"
                ).fetchone()
                if old:
                    self.conn.execute(
                        "UPDATE bookings SET status = 'cancelled' WHERE id IN (SELECT booking_id FROM cancellations)"
                    )
                    self.conn.execute("DROP TABLE cancellations")
        except sqlite3.DatabaseError as err:
            raise RagdialError(f"{target}: cannot add the booking status to table bookings ({err})") from err

    def close(self) -> None:
        self.conn.close()

    def gazetteer(self) -> Gazetteer:
        """All city names, aliases and places in the database (cached)."""
        if self._gazetteer is None:
            gaz = Gazetteer()
            for row in self.conn.execute("SELECT name, name_en, aliases FROM cities"):
                gaz.cities[row["name"]] = row["name"]
                gaz.cities[row["name_en"].lower()] = row["name"]
                gaz.english[row["name"]] = row["name_en"]
                for alias in filter(None, row["aliases"].split(",")):
                    gaz.cities[alias] = row["name"]
            for row in self.conn.execute("SELECT name, city, kind FROM places"):
                gaz.places[row["name"]] = (row["city"], row["kind"])
            for row in self.conn.execute("SELECT DISTINCT city, district, name FROM hotels"):
                cities = gaz.districts.setdefault(row["district"], [])
                if row["city"] not in cities:
                    cities.append(row["city"])
                brand = row["name"].split("(")[0]
                if brand not in gaz.brands:
                    gaz.brands.append(brand)
            for row in self.conn.execute("SELECT DISTINCT airline, substr(flight_no, 1, 2) AS code FROM flights"):
                gaz.airlines[row["airline"]] = row["code"]
            self._gazetteer = gaz
        return self._gazetteer

    def dates(self) -> list[str]:
        """The dates the timetables cover (ISO)."""
        if self._dates is None:
            with self.lock:
                rows = self.conn.execute("SELECT DISTINCT date FROM hotel_rooms ORDER BY date")
                self._dates = [row[0] for row in rows]
        return list(self._dates)

    def search(self, domain: str, constraints: Mapping[str, object], limit: int = 5) -> list[Row]:
        """Rows matching the constraints, cheapest first.

        Flight/train constraints: dep_city, arr_city, dep_place, arr_place, date, time_from/time_to ("HH:MM"),
        seat_class (a value or a list), berth (a value or a list), airline, max_price, min_price, min_seats
        (default 1), train_kinds (first letters of train numbers: G, D, Z, T, K), arr_by ("HH:MM": arriving by
        then on the day of departure), arr_after ("HH:MM": arriving no earlier in the day), max_duration (minutes
        from departure to arrival); excluded: not_airline, not_train_kinds, not_dep_place, not_arr_place (lists).
        Hotel: city, district, brand, not_brand / not_district / not_stars (lists of brands, districts, star
        ratings excluded),
        stars, min_stars, max_price, min_price, and with ``date``: ``nights``
        (default 1) and ``rooms`` (default 1) free on every night of the stay.
        Unknown keys are ignored; missing keys do not constrain.
        """
        where: list[str] = []
        args: list[object] = []

        def add(clause: str, value: object) -> None:
            if value not in (None, "", []):
                where.append(clause)
                args.append(value)

        def add_in(column: str, value: object) -> None:
            if value in (None, "", []):
                return
            values = [value] if isinstance(value, str) else items(value)
            where.append(f"{column} IN ({','.join('?' * len(values))})")
            args.extend(values)

        if domain in ("flight", "train"):
            table = "flights" if domain == "flight" else "trains"
            add("dep_city = ?", constraints.get("dep_city"))
            add("arr_city = ?", constraints.get("arr_city"))
            add("dep_place = ?", constraints.get("dep_place"))
            add("arr_place = ?", constraints.get("arr_place"))
            for place in items(constraints.get("not_dep_place") or []):
                add("dep_place != ?", place)
            for place in items(constraints.get("not_arr_place") or []):
                add("arr_place != ?", place)
            add(f"{RIDE_MINUTES} <= ?", constraints.get("max_duration"))
            add("date = ?", constraints.get("date"))
            add("dep_time >= ?", constraints.get("time_from"))
            add("dep_time < ?", constraints.get("time_to"))
            add_in("seat_class", constraints.get("seat_class"))
            add_in("berth", constraints.get("berth"))
            if domain == "flight":
                add("airline = ?", constraints.get("airline"))
                for airline in items(constraints.get("not_airline") or []):
                    add("airline != ?", airline)
            if constraints.get("arr_by"):
                add("arr_days = 0 AND arr_time <= ?", constraints.get("arr_by"))
            add("arr_time >= ?", constraints.get("arr_after"))  # (on whatever day: 次日00:15 is before 06:00)
            kinds = items(constraints.get("train_kinds") or []) if domain == "train" else None
            if kinds:
                where.append(f"substr(train_no, 1, 1) IN ({','.join('?' * len(kinds))})")
                args.extend(kinds)
            if domain == "train":
                for kind in items(constraints.get("not_train_kinds") or []):
                    add("substr(train_no, 1, 1) != ?", kind)
            add("price <= ?", constraints.get("max_price"))
            add("price >= ?", constraints.get("min_price"))
            add("seats >= ?", constraints.get("min_seats", 1))
            sql = f"SELECT * FROM {table}"
            order = " ORDER BY price, dep_time"
        elif domain == "hotel":
            add("h.city = ?", constraints.get("city"))
            add("h.district = ?", constraints.get("district"))
            add("h.name LIKE ?", f"{constraints['brand']}(%" if constraints.get("brand") else None)
            for brand in items(constraints.get("not_brand") or []):
                add("h.name NOT LIKE ?", f"{brand}(%")
            for district in items(constraints.get("not_district") or []):
                add("h.district != ?", district)
            for stars in items(constraints.get("not_stars") or []):
                add("h.stars != ?", stars)
            add("h.stars = ?", constraints.get("stars"))
            add("h.stars >= ?", constraints.get("min_stars"))
            add("h.price <= ?", constraints.get("max_price"))
            add("h.price >= ?", constraints.get("min_price"))
            if constraints.get("date"):
                nights = max(1, as_int(constraints.get("nights") or 1))
                first = dt.date.fromisoformat(as_str(constraints["date"]))
                last = (first + dt.timedelta(days=nights - 1)).isoformat()
                rooms = max(1, as_int(constraints.get("rooms") or 1))
                sql = (
                    "SELECT h.*, ? AS date, MIN(r.rooms) AS rooms FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id"
                )
                where.insert(0, "r.date BETWEEN ? AND ?")
                args[:0] = [constraints["date"], constraints["date"], last]
                order = (
                    f" GROUP BY h.id HAVING COUNT(*) = {nights} AND MIN(r.rooms) >= {rooms}"
                    " ORDER BY h.price, h.stars DESC"
                )
            else:
                sql = "SELECT h.* FROM hotels h"
                order = " ORDER BY h.price, h.stars DESC"
        else:
            raise RagdialError(f"unknown task domain {domain!r} (one of {', '.join(DOMAINS)})")
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += order + " LIMIT ?"
        args.append(limit)
        with self.lock:
            return [cast(Row, dict(row)) for row in self.conn.execute(sql, args)]

    def rooms_free(self, hotel_id: int, date: str, nights: int = 1) -> int | None:
        """The rooms of hotel ``hotel_id`` free on every night of a stay from ``date`` (None: not on sale then)."""
        last = (dt.date.fromisoformat(date) + dt.timedelta(days=max(1, nights) - 1)).isoformat()
        with self.lock:
            row = self.conn.execute(
                "SELECT MIN(rooms), COUNT(*) FROM hotel_rooms WHERE hotel_id = ? AND date BETWEEN ? AND ?",
                (hotel_id, date, last),
            ).fetchone()
        return int(row[0]) if row and row[1] == max(1, nights) and row[0] is not None else None

    def get(self, domain: str, item_id: int) -> Row | None:
        table = {"flight": "flights", "train": "trains", "hotel": "hotels"}[domain]
        with self.lock:
            row = self.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (item_id,)).fetchone()
        return cast(Row, dict(row)) if row else None

    def book(
        self, domain: str, item: Mapping[str, object], date: str, summary: str, quantity: int = 1, nights: int = 1
    ) -> int | None:
        """Record a booking in one transaction: take ``quantity`` seats (or rooms on each of ``nights`` nights from
        ``date``); returns the booking number, or None when they are no longer free (nothing is taken then)."""
        with self.lock, self.conn:
            if not self._take(domain, item, date, quantity, nights):
                return None
            return self._record(domain, item, date, summary, quantity, nights)

    def cancel(self, number: int) -> bool:
        """Cancel booking ``number`` in one transaction: give the seats (or rooms on each night) it holds back, as
        many as its own row records, and record the cancellation. False when there is no such booking or it was
        cancelled already (nothing changes then)."""
        with self.lock, self.conn:
            return self._give_back(number)

    def rebook(
        self,
        number: int,
        domain: str,
        item: Mapping[str, object],
        date: str,
        summary: str,
        quantity: int = 1,
        nights: int = 1,
    ) -> int | None:
        """Change booking ``number`` (改签) in one transaction: take the new seats or rooms, give back the old
        booking's (as many as its row records), record its cancellation and the new booking. Returns the
        new booking number, or None when the new item is no longer free or the old booking is not a live booking
        of this database; nothing changes then."""
        with self.lock, self.conn:
            if not self._live(number):
                return None
            self.conn.execute("SAVEPOINT rebook")
            self._give_back(number)  # (first: a longer stay in the same hotel keeps its own rooms)
            if not self._take(domain, item, date, quantity, nights):
                self.conn.execute("ROLLBACK TO rebook")  # the old booking stays as it was
                self.conn.execute("RELEASE rebook")
                return None
            self.conn.execute("RELEASE rebook")
            new = self._record(domain, item, date, summary, quantity, nights)
            self.conn.execute("UPDATE bookings SET status = 'changed', changed_into = ? WHERE id = ?", (new, number))
            return new

    def _take(self, domain: str, item: Mapping[str, object], date: str, quantity: int, nights: int) -> bool:
        """Take seats or rooms inside the caller's transaction; False (nothing taken) when they are not free."""
        if domain == "hotel":
            first = dt.date.fromisoformat(date)
            days = [(first + dt.timedelta(days=i)).isoformat() for i in range(max(1, nights))]
            free = self.conn.execute(
                f"SELECT COUNT(*) FROM hotel_rooms WHERE hotel_id = ? AND rooms >= ? AND date IN "
                f"({','.join('?' * len(days))})",
                (item["id"], quantity, *days),
            ).fetchone()[0]
            if free != len(days):
                return False
            for day in days:
                self.conn.execute(
                    "UPDATE hotel_rooms SET rooms = rooms - ? WHERE hotel_id = ? AND date = ?",
                    (quantity, item["id"], day),
                )
            return True
        table = "flights" if domain == "flight" else "trains"
        cur = self.conn.execute(
            f"UPDATE {table} SET seats = seats - ? WHERE id = ? AND seats >= ?",
            (quantity, item["id"], quantity),
        )
        return cur.rowcount == 1

    def _record(
        self, domain: str, item: Mapping[str, object], date: str, summary: str, quantity: int, nights: int
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO bookings (domain, item_id, date, summary, quantity, nights) VALUES (?, ?, ?, ?, ?, ?)",
            (domain, item["id"], date, summary, quantity, max(1, nights) if domain == "hotel" else 1),
        )
        assert cur.lastrowid is not None  # an INSERT always sets it
        return cur.lastrowid

    def _live(self, number: int) -> sqlite3.Row | None:
        """Booking ``number`` when it exists and is live (inside the caller's transaction)."""
        row: sqlite3.Row | None = self.conn.execute(
            "SELECT * FROM bookings WHERE id = ? AND status = 'booked'", (number,)
        ).fetchone()
        return row

    def _give_back(self, number: int) -> bool:
        """Give a live booking's seats or rooms back (its own quantity, on each of its nights) and record its
        cancellation (inside the caller's transaction); False when there is no such live booking."""
        row = self._live(number)
        if row is None:
            return False
        quantity, nights = int(row["quantity"]), int(row["nights"])
        if row["domain"] == "hotel":
            first = dt.date.fromisoformat(row["date"])
            for i in range(max(1, nights)):
                self.conn.execute(
                    "UPDATE hotel_rooms SET rooms = rooms + ? WHERE hotel_id = ? AND date = ?",
                    (quantity, row["item_id"], (first + dt.timedelta(days=i)).isoformat()),
                )
        else:
            table = "flights" if row["domain"] == "flight" else "trains"
            self.conn.execute(f"UPDATE {table} SET seats = seats + ? WHERE id = ?", (quantity, row["item_id"]))
        self.conn.execute("UPDATE bookings SET status = 'cancelled' WHERE id = ?", (number,))
        return True

    def booking(self, number: int) -> Row | None:
        """Booking ``number`` as the database holds it, or None: its ``status`` is ``booked`` (live),
        ``cancelled``, or ``changed`` (``changed_into`` is the booking that replaced it)."""
        with self.lock:
            row = self.conn.execute("SELECT * FROM bookings WHERE id = ?", (number,)).fetchone()
        return cast(Row, dict(row)) if row else None
